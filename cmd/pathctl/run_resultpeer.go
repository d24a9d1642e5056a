// The socket --result-peer names, checked before it is used.

package main

import (
	"os"
	"syscall"
)

// resultPeer is the socket --result-peer names. The descriptor is checked
// before an os.File takes it (whose finalizer would close it).
func resultPeer(fd int) (*os.File, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, usagef("--result-peer %d: not an open file descriptor", fd)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return nil, usagef("--result-peer %d: not a socket", fd)
	}
	return os.NewFile(uintptr(fd), "result-peer"), nil
}
