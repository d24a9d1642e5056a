package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/recovered"
)

// panickingRunner panics in Run, as a bug reached by one input would.
type panickingRunner struct{ fixedRunner }

func (panickingRunner) Run(context.Context, *graph.Block) error {
	var cells []int32
	_ = cells[3]
	return nil
}

// TestRunBlocksPanic checks that a panic in the producer goroutine (the
// engine's Run, as graph.NewBlock's makeslice panic was) fails the run
// with an error naming it, rather than ending the process.
func TestRunBlocksPanic(t *testing.T) {
	const n = 4
	g := fakeGraph(t, n)
	full := graph.NewBlock(allSources(n), n, graph.DistInt32, false)
	runner := panickingRunner{fixedRunner{full}}
	blocks := []SourceBlock{{0, 2}, {2, 4}}
	err := runBlocks(context.Background(), g, runner, Options{Query: Query{Layout: arrowio.LayoutPairs}}, schedule{}, allSources(n), blocks,
		func(res blockResult) error { res.release(); return nil })
	var e *recovered.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "index out of range [3]") {
		t.Fatalf("err = %v, want the runner's panic as an error", err)
	}
	if !strings.Contains(e.FirstFrame(), "panickingRunner") {
		t.Errorf("first frame %q, want the runner's Run", e.FirstFrame())
	}
}

// TestRowChunksPanic checks that a panic in a worker of ForRowChunks
// reaches the caller's goroutine (and so its recover), with the worker's
// stack.
func TestRowChunksPanic(t *testing.T) {
	run := func() (err error) {
		defer recovered.Catch(&err)
		graph.ForRowChunks(64, 1<<20, 4, func(first, end int) {
			if first > 0 {
				var s []int
				_ = s[first]
			}
		})
		return nil
	}
	if err := run(); err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("err = %v, want a worker's panic", err)
	}
}
