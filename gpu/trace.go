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
