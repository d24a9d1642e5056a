package testgraphs

import (
	"fmt"
	"strings"
	"testing"
)

// TestSeedReplays checks that -seed fixes the seed and the generator's
// draws, and that without it two tests draw different seeds.
func TestSeedReplays(t *testing.T) {
	old := *seedFlag
	defer func() { *seedFlag = old }()

	*seedFlag = 12345
	if got := Seed(t); got != 12345 {
		t.Errorf("Seed with -seed 12345 = %d", got)
	}
	a, b := Rand(t, 7), Rand(t, 7)
	for i := range 8 {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d of two generators of -seed 12345: %d and %d", i, x, y)
		}
	}
	if x, y := Rand(t, 7).Uint64(), Rand(t, 8).Uint64(); x == y {
		t.Errorf("streams 7 and 8 of one seed both drew %d first", x)
	}

	*seedFlag = 0
	if s1, s2 := Seed(t), Seed(t); s1 == s2 || s1 == 0 || s2 == 0 {
		t.Errorf("fresh seeds %d and %d: want two distinct non-zero ones", s1, s2)
	}
}

// failingTB is a test that has failed: it records its cleanups and logs.
type failingTB struct {
	testing.TB
	cleanups []func()
	logs     []string
}

func (f *failingTB) Helper()          {}
func (f *failingTB) Name() string     { return "TestDraws" }
func (f *failingTB) Failed() bool     { return true }
func (f *failingTB) Cleanup(c func()) { f.cleanups = append(f.cleanups, c) }
func (f *failingTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// TestSeedPrintedOnFailure checks that a failed test logs its seed and the
// flag that replays it.
func TestSeedPrintedOnFailure(t *testing.T) {
	f := &failingTB{TB: t}
	seed := Seed(f)
	for _, c := range f.cleanups {
		c()
	}
	want := fmt.Sprintf("-run 'TestDraws' -seed %d", seed)
	if len(f.logs) != 1 || !strings.Contains(f.logs[0], want) {
		t.Errorf("a failed test logged %q, want one line with %q", f.logs, want)
	}
}
