package arrowio

import (
	"io"
	"os"
)

// writeBehindWindow is how many bytes a result file collects before
// writeBehind asks the kernel to start writing them to the disk.
const writeBehindWindow = 32 << 20

// writeBehind passes writes to a result file and, every writeBehindWindow
// bytes, starts the disk writing what came before (startWriteback), without
// waiting for it. Left alone, the kernel holds a multi-gigabyte matrix in
// dirty pages until Close's fsync, and the disk idles while the pipeline
// produces it; started early, the disk writes while the records are still
// coming, and the fsync only waits for the tail. Durability still comes
// from the fsync.
type writeBehind struct {
	f       *os.File
	written int64 // bytes written so far
	started int64 // bytes whose writeback was started
}

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= writeBehindWindow {
		startWriteback(w.f, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// WriteBehind returns a writer to f that starts the disk writing every
// 32 MiB written, as result files do (the benchmark's plain sequential
// write uses it, so that both sides of its disk ratio write the same way).
// f is still the caller's to fsync and close.
func WriteBehind(f *os.File) io.Writer { return &writeBehind{f: f} }
