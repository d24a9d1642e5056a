package main

// Faults of a dataset run, for the crash tests: the hidden flag
// --dataset-fault ACTION:POINT:BLOCK makes the run end at one point as a
// power loss, the OOM killer or a full disk would end it, so that the
// tests reach every point deterministically, without timing.
//
//	kill:part:B        SIGKILL once block B's first rows are written into
//	                   its temporary file (in the middle of a block), every
//	                   earlier block's part in place and listed first
//	kill:renamed:B     SIGKILL once block B's file is renamed into place,
//	                   before the partial manifest lists it
//	kill:manifest:B    SIGKILL while the partial manifest that adds block B
//	                   is written: half of it lies in its temporary file
//	kill:manifest:final   the same for the complete manifest
//	kill:renamed:final    SIGKILL once the complete manifest is renamed into
//	                   place, before the partial one is removed
//	enospc:part:B      block B's write fails with ENOSPC (a full disk)
//	enospc:manifest:B  the partial manifest that adds block B fails so
//
// The flag is hidden: it is no interface, and a run without it takes none
// of these branches.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// datasetFaultFlag is the hidden --dataset-fault.
func datasetFaultFlag() cli.Flag {
	return &cli.StringFlag{Name: "dataset-fault", Hidden: true,
		Usage: "-o DIR/, for crash tests: ACTION:POINT:BLOCK, ACTION kill or enospc, POINT part, renamed or manifest, BLOCK a block number or final"}
}

// datasetFault is a parsed --dataset-fault; the nil fault does nothing.
type datasetFault struct {
	action string // "kill" or "enospc"
	point  string // "part", "renamed" or "manifest"
	block  int    // -1: the complete manifest
}

// finalBlock is the block of the complete manifest's point.
const finalBlock = -1

// parseDatasetFault reads --dataset-fault ("": none).
func parseDatasetFault(s string) (*datasetFault, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, usagef("--dataset-fault %q: want ACTION:POINT:BLOCK", s)
	}
	f := &datasetFault{action: parts[0], point: parts[1]}
	if f.action != "kill" && f.action != "enospc" {
		return nil, usagef("--dataset-fault %q: action %q: want kill or enospc", s, f.action)
	}
	if f.point != "part" && f.point != "renamed" && f.point != "manifest" {
		return nil, usagef("--dataset-fault %q: point %q: want part, renamed or manifest", s, f.point)
	}
	if parts[2] == "final" && f.point != "part" && f.action == "kill" {
		f.block = finalBlock
	} else if b, err := strconv.Atoi(parts[2]); err == nil && b >= 0 {
		f.block = b
	} else {
		return nil, usagef("--dataset-fault %q: block %q: want a block number (or final, for kill:manifest and kill:renamed)", s, parts[2])
	}
	return f, nil
}

// is reports whether the fault is action at point of block.
func (f *datasetFault) is(action, point string, block int) bool {
	return f != nil && f.action == action && f.point == point && f.block == block
}

// kill ends the process at once, as SIGKILL from outside does: no
// deferred function runs, no file is closed or removed.
func (f *datasetFault) kill() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered before this returns; never reached
}

// at kills the process when the fault is kill at point of block.
func (f *datasetFault) at(point string, block int) {
	if f.is("kill", point, block) {
		f.kill()
	}
}

// noSpace is the error of a write into a full disk, where the fault is
// enospc at point of block; nil otherwise.
func (f *datasetFault) noSpace(point string, block int, path string) error {
	if !f.is("enospc", point, block) {
		return nil
	}
	return fmt.Errorf("arrowio: %s: %w", path, &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC})
}

// beforeManifest acts before the manifest name of dir that adds block is
// written: kill leaves half of it in a temporary file, as a process killed
// inside writeDatasetManifest does; enospc returns its error.
func (f *datasetFault) beforeManifest(dir, name string, m *datasetManifestFile, block int) error {
	if f.is("kill", "manifest", block) {
		data, _ := json.MarshalIndent(m, "", "  ")
		if tmp, err := os.CreateTemp(dir, "."+name+".tmp-*"); err == nil {
			tmp.Write(data[:len(data)/2])
			tmp.Sync()
		}
		f.kill()
	}
	return f.noSpace("manifest", block, filepath.Join(dir, name))
}
