package main

// The space a -o DIR/ dataset takes: the error of a disk that fills up
// during the run, and the durability of what was written before it.

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// datasetWriteError is err, met while writing name (relative to the
// dataset out), as the run reports it. A full disk (ENOSPC, or a quota's
// EDQUOT) is the input's error, exit 3, as the free-space check's refusal
// is: the blocks complete so far stay, readable, and --resume computes the
// rest once there is room. Other errors pass unchanged.
func datasetWriteError(out, name string, err error, complete, blocks int) error {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return err
	}
	return inputError{fmt.Errorf("-o %s: the disk is full (no space left on device) while writing %s: "+
		"%d of %d blocks are complete and kept, readable as a dataset; free space and run the same command with --resume to compute the rest",
		out, name, complete, blocks)}
}

// syncDir flushes the entries of dir (a file renamed into it) to the
// disk, so that after a power loss the manifest lists no file whose name
// was lost. Errors are ignored: a file system that cannot sync a
// directory (some network ones) still renames atomically.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
