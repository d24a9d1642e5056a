package flight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile is the file of the data directory that a running server holds
// an exclusive flock on; it contains the server's process id.
const lockFile = "lock"

// DataDirInUseError is the error of a server started on a data directory
// that another running server holds.
type DataDirInUseError struct {
	Dir string
	// PID is the process holding the directory, 0 when it could not be read.
	PID int
}

func (e *DataDirInUseError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("flight: data directory %s is in use by process %d", e.Dir, e.PID)
	}
	return fmt.Sprintf("flight: data directory %s is in use by another process", e.Dir)
}

// dirLock is the exclusive lock of a data directory; the kernel releases it
// when the process dies, so a SIGKILLed server leaves no stale lock.
type dirLock struct {
	f *os.File
	// acquired is when the lock was taken: files of the directory's
	// temporary folder older than this belong to no running server.
	acquired time.Time
	once     sync.Once
}

// lockDataDir takes the lock of dir (creating dir if needed) before anything
// else touches it, and writes this process's id into the lock file.
func lockDataDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("flight: data directory: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("flight: data directory lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := 0
			if b, err := os.ReadFile(path); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &DataDirInUseError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("flight: data directory lock: %w", err)
	}
	l := &dirLock{f: f, acquired: time.Now()}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		l.release()
		return nil, fmt.Errorf("flight: data directory lock: %w", err)
	}
	return l, nil
}

// release gives the lock up; the file stays (removing it would race with a
// server that opened it meanwhile).
func (l *dirLock) release() {
	if l != nil {
		l.once.Do(func() { l.f.Close() })
	}
}
