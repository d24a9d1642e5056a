//go:build unix

package arrowio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// processGone reports whether no process with this pid runs (kill(pid, 0)
// fails with ESRCH). A process of another user still counts as running.
func processGone(pid int) bool {
	return errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}
