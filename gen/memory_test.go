package gen

import (
	"errors"
	"strings"
	"testing"
)

func TestMemoryLimitRefusesBeforeAllocating(t *testing.T) {
	// 2^34 arcs would take 384 GiB: refused under a 1 MiB limit, at once.
	_, err := RMAT(30, 16, 1, WithMemoryLimit(1<<20))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "384.0 GiB") || !strings.Contains(err.Error(), "1.0 MiB") {
		t.Fatalf("RMAT: err = %v, want ErrTooLarge stating 384.0 GiB and 1.0 MiB", err)
	}
	if _, err := Uniform(1<<20, 16, 1, WithMemoryLimit(1<<20), Unweighted()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Uniform: err = %v, want ErrTooLarge", err)
	}
	if _, err := Grid(1000, 1000, 1, WithMemoryLimit(1<<20)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Grid: err = %v, want ErrTooLarge", err)
	}
	// At the estimate exactly, the graph is made.
	e, err := RMAT(4, 2, 1, WithUndirectedPairs(), WithMemoryLimit(ListBytes(2*32)))
	if err != nil || e.Len() != 64 {
		t.Fatalf("RMAT within the limit: %v", err)
	}
	if _, err := RMAT(4, 2, 1, WithUndirectedPairs(), WithMemoryLimit(ListBytes(2*32)-1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte under the estimate: err = %v", err)
	}
	if got := ListBytes(10, Unweighted()); got != 160 {
		t.Errorf("ListBytes unweighted = %d, want 160", got)
	}
}
