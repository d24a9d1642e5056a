package arrowio

import (
	"os"
	"path/filepath"
	"strings"
)

// RemoveTemporaries removes the temporary files of results named path
// that this process has open or left (".NAME.tmp-PID-HOST-*" beside the
// file path resolves to, PID this process), and returns the paths it
// removed. It is for a process about to exit without reaching its
// writers' Abort (a handler of SIGQUIT); a writer still writing then
// writes into an unlinked file. Outputs written in place (devices, FIFOs,
// "-") have none. Best effort: an unreadable directory or a file that
// cannot be removed is skipped.
func RemoveTemporaries(path string) []string {
	if path == "" || path == "-" {
		return nil
	}
	target, err := resolveOutput(path)
	if err != nil || target.direct {
		return nil
	}
	dir, base := filepath.Split(target.path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	prefix := tempPrefix(base)
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if p := filepath.Join(dir, e.Name()); os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
