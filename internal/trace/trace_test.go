package trace

import (
	"regexp"
	"strings"
	"testing"
)

// TestPrintf checks that nothing is printed while tracing is off, even
// with PATHCTL_TRACE=1 in the environment (the package reads none), and
// that a step, once Enable turned it on, is one line of the time since
// start, who and what.
func TestPrintf(t *testing.T) {
	t.Setenv("PATHCTL_TRACE", "1")
	var b strings.Builder
	was, wasOut := on.Load(), out
	defer func() { on.Store(was); out = wasOut }()
	out = &b
	on.Store(false)
	Printf("gpu 0", "launch of %d sources", 7)
	if b.Len() != 0 || On() {
		t.Fatalf("tracing off printed %q (On %v)", b.String(), On())
	}
	Enable()
	Printf("gpu 0", "launch of %d sources", 7)
	Printf("pipeline", "done")
	re := regexp.MustCompile(`^pathctl trace +[0-9]+\.[0-9] ms gpu 0: launch of 7 sources\npathctl trace +[0-9]+\.[0-9] ms pipeline: done\n$`)
	if !re.MatchString(b.String()) {
		t.Fatalf("trace lines %q, want two steps", b.String())
	}
}
