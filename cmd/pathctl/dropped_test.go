package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDroppedSettingsRefused checks that what was measured, not kept and
// removed is no longer taken: asking for it is a usage error of one line
// naming it, with no output left behind.
func TestDroppedSettingsRefused(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,1\n1,3,5\n")
	out := filepath.Join(dir, "x.arrow")
	for _, tc := range []struct {
		args  []string
		names string
	}{
		// The device copying matrix rows into the output's own pages.
		{[]string{"--layout", "matrix", "--matrix-writes", "inplace"}, `--matrix-writes "inplace"`},
		// A phase's groups run in slices of working distances.
		{[]string{"--tune", "slicemb=24"}, `unknown key "slicemb"`},
	} {
		args := append([]string{"run", in, "--engine", "cpu", "-o", out}, tc.args...)
		r := pathctl(t, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.names) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line naming %s", strings.Join(tc.args, " "), r.code, r.stderr, exitUsage, tc.names)
		}
		assertNoOutput(t, dir, "x.arrow")
	}
}
