// Package trace prints, once Enable is called (pathctl calls it where
// PATHCTL_TRACE=1, the one environment switch it reads for the library), a
// timeline of a run's steps on stderr: each line is the milliseconds since
// the process loaded the package, who (a device, the pipeline) and what
// began or ended. It is the timeline behind --verbose's sums, for finding
// what the devices of a run wait on. Off by default; nothing reads its
// lines.
package trace

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

var (
	on    atomic.Bool
	start = time.Now()
	mu    sync.Mutex
	out   io.Writer = os.Stderr
)

// Enable turns the timeline on for the rest of the process.
func Enable() { on.Store(true) }

// On reports whether the timeline is on (Enable).
func On() bool { return on.Load() }

// Printf prints one step of who once the timeline is on.
func Printf(who, format string, args ...any) {
	if !on.Load() {
		return
	}
	at := float64(time.Since(start).Microseconds()) / 1000
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "pathctl trace %9.1f ms %s: %s\n", at, who, fmt.Sprintf(format, args...))
}
