// Package trace prints, where PATHCTL_TRACE=1, a timeline of a run's
// steps on stderr: each line is the milliseconds since the process loaded
// the package, who (a device, the pipeline) and what began or ended. It
// is the timeline behind --verbose's sums, for finding what the devices
// of a run wait on. Off by default; nothing reads its lines.
package trace

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

var (
	on    = os.Getenv("PATHCTL_TRACE") == "1"
	start = time.Now()
	mu    sync.Mutex
	out   io.Writer = os.Stderr
)

// On reports whether PATHCTL_TRACE=1.
func On() bool { return on }

// Printf prints one step of who when PATHCTL_TRACE=1.
func Printf(who, format string, args ...any) {
	if !on {
		return
	}
	at := float64(time.Since(start).Microseconds()) / 1000
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "pathctl trace %9.1f ms %s: %s\n", at, who, fmt.Sprintf(format, args...))
}
