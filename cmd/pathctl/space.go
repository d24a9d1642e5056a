package main

// Refusing an output that cannot fit: before anything is written, the
// result's estimated size (Prepared.Estimate) is compared with the
// free space of the file system it would be written on.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// freeSpace is the bytes free to an unprivileged writer on the file
// system holding dir (statfs: available blocks × block size).
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// spaceDir is the directory whose file system an output at out would be
// written on: the nearest existing directory above it (a dataset's
// directory may not exist yet). It is "" where no file system's space
// applies: stdout, a device or FIFO under /dev, a file descriptor's link,
// an existing path that is not a regular file or a directory.
func spaceDir(out string) string {
	if out == "" || out == "-" || strings.HasPrefix(out, "/dev/") || arrowio.WrittenInPlace(out) {
		return ""
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return filepath.Clean(out) // a dataset directory, given without the slash
	} else if err == nil && !st.Mode().IsRegular() {
		return "" // a FIFO, a socket, a device elsewhere than /dev
	}
	dir := filepath.Dir(filepath.Clean(out))
	if strings.HasSuffix(out, "/") {
		dir = filepath.Clean(out) // a dataset directory: -o DIR/
	}
	for {
		st, err := os.Stat(dir)
		if err == nil && st.IsDir() {
			return dir
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// outputBytes is the estimated size of the result as written at out in
// format: the CSV bound for CSV, else the Arrow IPC size (which Parquet,
// compressed, stays below).
func outputBytes(est pipeline.Estimate, out, format string) int64 {
	if strings.EqualFold(format, "csv") || (format == "" && strings.EqualFold(filepath.Ext(out), ".csv")) {
		return est.CSVBytes
	}
	return est.Bytes
}

// checkOutputSpace refuses, as bad input (exit 3), an output at out of
// about need bytes where the file system it goes to has less free,
// naming both sizes, unless force. Outputs without a file system's space
// (spaceDir) pass, as do file systems whose space cannot be read.
func checkOutputSpace(out string, need int64, force bool, free func(string) (int64, error)) error {
	dir := spaceDir(out)
	if force || dir == "" {
		return nil
	}
	avail, err := free(dir)
	if err != nil || need <= avail {
		return nil
	}
	return inputError{&noSpaceError{out: out, dir: dir, need: need, avail: avail}}
}

// noSpaceError is the refusal of an output larger than its file
// system's free space.
type noSpaceError struct {
	out, dir    string
	need, avail int64
}

func (e *noSpaceError) Error() string {
	return fmt.Sprintf("-o %s: the output needs about %s (estimated) but %s has %s free; write it elsewhere, "+
		"ask for less (--sources, --targets, --layout stats), or give --force to write anyway", e.out, gen.HumanBytes(e.need), e.dir, gen.HumanBytes(e.avail))
}

// checkSpace refuses the output of q at out when its estimate is above
// the free space of its file system, unless --force (see
// checkOutputSpace).
func checkSpace(c interface{ Bool(string) bool }, q *pipeline.Prepared, out, format string) error {
	if spaceDir(out) == "" {
		return nil
	}
	return checkOutputSpace(out, outputBytes(q.Estimate(), out, format), c.Bool("force"), freeSpace)
}
