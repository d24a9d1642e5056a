//go:build !linux

package arrowio

import (
	"errors"
	"os"
)

// peerMemory is Linux's (process_vm_writev); elsewhere a result peer is
// never opened and the result goes to its file.
type peerMemory struct{}

var errNoPeer = errors.New("writing into a result peer's memory needs Linux")

func openPeerMemory(*os.File, int64, int64, int64) (*peerMemory, error) { return nil, errNoPeer }
func (*peerMemory) grow(int64) error                                    { return errNoPeer }
func (*peerMemory) writeAt([]byte, int64) error                         { return errNoPeer }
func (*peerMemory) parallelWriteAt([]byte, int64, int) error            { return errNoPeer }
func (*peerMemory) finish(int64) error                                  { return errNoPeer }
func releasePages([]byte)                                               {}
func (*peerMemory) close()                                              {}
func shadowMapping(int64) ([]byte, error)                               { return nil, errNoPeer }
