package gpu

import (
	"strconv"

	"github.com/pathctl/pathctl/internal/trace"
)

// tracef prints one step of device ordinal on the PATHCTL_TRACE timeline
// (package trace).
func tracef(ordinal int, format string, args ...any) {
	if trace.On() {
		trace.Printf("gpu "+strconv.Itoa(ordinal), format, args...)
	}
}

// ordinal is the runner's device ordinal, -1 for a runner without one
// (tests of the host's choices).
func (r *Runner) ordinal() int {
	if r.e == nil || r.e.dev == nil {
		return -1
	}
	return r.e.dev.ordinal
}
