package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// fakeAsync is an AsyncRunner whose results arrive on a goroutine of their
// own a little after Start returns: row s of a block holds s*1000+v. It
// logs every Start and Wait, and can fail the Start or the Wait of one
// block.
type fakeAsync struct {
	n int

	mu       sync.Mutex
	log      []string
	starts   int
	issued   map[int]bool // blocks whose Start succeeded
	waited   map[int]bool
	started  []chan struct{} // closed at the Start of each block
	failAt   int             // block whose Start fails with failWith; -1 for none
	waitFail int             // block whose Wait fails with failWith; -1 for none
	failWith error
}

func newFakeAsync(n, blocks int) *fakeAsync {
	f := &fakeAsync{n: n, issued: map[int]bool{}, waited: map[int]bool{}, failAt: -1, waitFail: -1}
	for range blocks {
		f.started = append(f.started, make(chan struct{}))
	}
	return f
}

func (f *fakeAsync) DistType() graph.DistType { return graph.DistInt32 }
func (f *fakeAsync) BytesPerSource() int64    { return int64(4 * f.n) }
func (f *fakeAsync) Close() error             { return nil }

func (f *fakeAsync) Run(ctx context.Context, out *graph.Block) error {
	return errors.New("fakeAsync: Run called; runBlocks must Start an AsyncRunner")
}

func (f *fakeAsync) record(s string) {
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
}

type fakeWaiter struct {
	f     *fakeAsync
	block int
	done  chan struct{}
	err   error
}

func (f *fakeAsync) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	f.mu.Lock()
	i := f.starts
	f.starts++
	f.mu.Unlock()
	f.record(fmt.Sprintf("start %d", i))
	if i < len(f.started) {
		close(f.started[i])
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if i == f.failAt {
		return nil, f.failWith
	}
	w := &fakeWaiter{f: f, block: i, done: make(chan struct{})}
	f.mu.Lock()
	f.issued[i] = true
	f.mu.Unlock()
	if i == f.waitFail {
		w.err = f.failWith
	}
	go func() {
		time.Sleep(time.Millisecond)
		d := out.Dist.([]int32)
		for r, s := range out.Sources {
			for v := range f.n {
				d[r*f.n+v] = int32(s)*1000 + int32(v)
			}
		}
		close(w.done)
	}()
	return w, nil
}

// checkFakeRows checks that every row of b holds what fakeAsync writes.
func checkFakeRows(b *graph.Block) error {
	d, n := b.Dist.([]int32), b.NumVertices
	for r, s := range b.Sources {
		for v := range n {
			if d[r*n+v] != int32(s)*1000+int32(v) {
				return fmt.Errorf("source %d: dist[%d] = %d", s, v, d[r*n+v])
			}
		}
	}
	return nil
}

func (w *fakeWaiter) Wait() error {
	<-w.done
	w.f.record(fmt.Sprintf("wait %d", w.block))
	w.f.mu.Lock()
	w.f.waited[w.block] = true
	w.f.mu.Unlock()
	return w.err
}

// checkAllWaited fails unless every block whose Start succeeded was waited
// for, and the goroutines are back to base.
func (f *fakeAsync) checkAllWaited(t *testing.T, base int) {
	t.Helper()
	f.mu.Lock()
	for i := range f.issued {
		if !f.waited[i] {
			t.Errorf("block %d started and never waited for (log %v)", i, f.log)
		}
	}
	f.mu.Unlock()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base {
		t.Errorf("%d goroutines after runBlocks, %d before", g, base)
	}
}

func fakeGraph(t *testing.T, n int) *Graph {
	t.Helper()
	csr, err := graph.Build(&graph.Edges{NumVertices: n}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &Graph{CSR: csr}
}

func allSources(n int) []graph.VertexID {
	s := make([]graph.VertexID, n)
	for i := range s {
		s[i] = graph.VertexID(i)
	}
	return s
}

// TestRunBlocksStartsAhead checks with a fake AsyncRunner that runBlocks
// starts block i+1 before it waits for block i, that the sink writes block
// i while block i+2 starts (three blocks alive, never four), and that the
// sink gets every block, in order, with its results in place.
func TestRunBlocksStartsAhead(t *testing.T) {
	const n, size, nblocks = 5, 2, 6
	base := runtime.NumGoroutine()
	f := newFakeAsync(n, nblocks)
	g := fakeGraph(t, n)
	sources := allSources(size * nblocks)
	blocks := PlanBlocks(len(sources), 1, 0, size)
	opt := Options{Query: Query{Layout: arrowio.LayoutPairs}}
	if got := blocksInFlight(f, opt); got != 3 {
		t.Errorf("blocksInFlight = %d for an AsyncRunner, want 3", got)
	}
	var sunk int
	err := runBlocks(context.Background(), g, f, opt, schedule{}, sources, blocks, func(res blockResult) error {
		i := sunk
		sunk++
		f.record(fmt.Sprintf("sink %d", i))
		if res.end != blocks[i].End || res.block == nil {
			return fmt.Errorf("sink %d got block ending at %d, want %d", i, res.end, blocks[i].End)
		}
		if err := checkFakeRows(res.block); err != nil {
			return fmt.Errorf("block %d before its Wait: %w", i, err)
		}
		// The producer starts block i+2 while this sink runs.
		if i+2 < nblocks {
			select {
			case <-f.started[i+2]:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("block %d did not start while block %d was written", i+2, i)
			}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if i+3 < nblocks && f.starts > i+3 {
			return fmt.Errorf("block %d started while block %d was written: four blocks alive", i+3, i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sunk != nblocks {
		t.Fatalf("sink got %d blocks, want %d", sunk, nblocks)
	}
	pos := func(s string) int { return slices.Index(f.log, s) }
	for i := range nblocks {
		w := pos(fmt.Sprintf("wait %d", i))
		if w < 0 || w > pos(fmt.Sprintf("sink %d", i)) {
			t.Errorf("block %d sunk before its wait: %v", i, f.log)
		}
		if i+1 < nblocks && pos(fmt.Sprintf("start %d", i+1)) > w {
			t.Errorf("block %d waited for before block %d started: %v", i, i+1, f.log)
		}
	}
	f.checkAllWaited(t, base)
}

// TestRunBlocksAsyncFailures checks that an error of a Start or a Wait, a
// cancelled context and a failing sink each stop runBlocks with that error,
// with every started block waited for and no goroutine left.
func TestRunBlocksAsyncFailures(t *testing.T) {
	const n, size, nblocks = 3, 1, 6
	errBoom := errors.New("boom")
	errSink := errors.New("sink full")
	for _, tc := range []struct {
		name      string
		failStart int // -1 for none
		failWait  int
		cancelAt  int // the sink cancels the context at this block; -1 for never
		sinkFail  int // the sink fails at this block; -1 for never
		want      error
	}{
		{"start fails", 3, -1, -1, -1, errBoom},
		{"first start fails", 0, -1, -1, -1, errBoom},
		{"wait fails", -1, 2, -1, -1, errBoom},
		{"last wait fails", -1, nblocks - 1, -1, -1, errBoom},
		{"cancelled", -1, -1, 1, -1, context.Canceled},
		{"sink fails", -1, -1, -1, 2, errSink},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			f := newFakeAsync(n, nblocks)
			f.failAt, f.waitFail, f.failWith = tc.failStart, tc.failWait, errBoom
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sources := allSources(size * nblocks)
			blocks := PlanBlocks(len(sources), 1, 0, size)
			sunk := 0
			err := runBlocks(ctx, fakeGraph(t, n), f, Options{Query: Query{Layout: arrowio.LayoutMatrix}}, schedule{}, sources, blocks, func(res blockResult) error {
				i := sunk
				sunk++
				if i == tc.cancelAt {
					cancel()
				}
				if i == tc.sinkFail {
					return errSink
				}
				return nil
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("runBlocks = %v, want %v", err, tc.want)
			}
			last := max(tc.failStart, tc.failWait, tc.cancelAt, tc.sinkFail)
			if sunk > last+1 {
				t.Errorf("sink got %d blocks after the failure at block %d", sunk, last)
			}
			f.checkAllWaited(t, base)
		})
	}
}

// TestStatsRunnerStaysInTurn checks that the stats layout of a runner that
// reduces on the device is not started ahead, and that PlanBlocksInFlight
// sizes blocks for the blocks in flight.
func TestStatsRunnerStaysInTurn(t *testing.T) {
	r := statsAsync{newFakeAsync(4, 0)}
	if _, ok := asyncRunner(r, Options{Query: Query{Layout: arrowio.LayoutStats}}); ok {
		t.Error("stats layout of a StatsRunner is started ahead")
	}
	// One block: RunStats keeps its block on the device, one at a time.
	if got := blocksInFlight(r, Options{Query: Query{Layout: arrowio.LayoutStats}}); got != 1 {
		t.Errorf("blocksInFlight = %d for stats on a StatsRunner, want 1", got)
	}
	if got := blocksInFlight(r, Options{Query: Query{Layout: arrowio.LayoutPairs}}); got != 3 {
		t.Errorf("blocksInFlight = %d for pairs on an AsyncRunner, want 3", got)
	}
	for _, tc := range []struct {
		inFlight, want int
	}{{2, 5}, {3, 3}, {0, 10}} {
		// 100 bytes per source, budget 1000: blocks of 1000/(inFlight·100).
		blocks := PlanBlocksInFlight(20, 100, 1000, 0, tc.inFlight)
		if got := blocks[0].End; got != tc.want {
			t.Errorf("PlanBlocksInFlight with %d in flight: blocks of %d, want %d", tc.inFlight, got, tc.want)
		}
	}
}

type statsAsync struct{ *fakeAsync }

func (statsAsync) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	return nil, errors.New("not called")
}
