package pipeline

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// fakeDeviceSet is a runner of several devices known only by the seam's
// interface (graph.DeviceSet), as gpu/devices' runner is to the pipeline:
// its blocks are fakeAsync's, started through StartCut.
type fakeDeviceSet struct {
	*fakeAsync
	depth int

	mu     sync.Mutex
	direct int     // Start calls, which the producer must not make
	cuts   [][]int // of every StartCut, in order
}

func (d *fakeDeviceSet) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	d.mu.Lock()
	d.direct++
	d.mu.Unlock()
	return d.fakeAsync.Start(ctx, out)
}

func (d *fakeDeviceSet) PlanRunner() graph.Runner { return d.fakeAsync }
func (d *fakeDeviceSet) Depth(stats bool) int     { return d.depth }
func (d *fakeDeviceSet) ResidentSources(per int) int {
	return 2 * per
}
func (d *fakeDeviceSet) Shares(time.Time) string { return "" }

// TailCuts cuts the last block in two.
func (d *fakeDeviceSet) TailCuts(i int, blocks []graph.SourceBlock) []int {
	if i == len(blocks)-1 {
		return []int{(blocks[i].End - blocks[i].Start) / 2}
	}
	return nil
}

func (d *fakeDeviceSet) StartCut(ctx context.Context, out *graph.Block, cuts []int) (graph.Waiter, error) {
	d.mu.Lock()
	d.cuts = append(d.cuts, cuts)
	d.mu.Unlock()
	return d.fakeAsync.Start(ctx, out)
}

func (d *fakeDeviceSet) StartStats(context.Context, []graph.VertexID, []int) (graph.StatsWaiter, error) {
	return nil, nil
}

var _ graph.DeviceSet = (*fakeDeviceSet)(nil)

// TestRunBlocksOnADeviceSet checks that the producer drives a runner of
// several devices through graph.DeviceSet alone, whatever its type: every
// block goes through StartCut with the runner's cuts, none through Start,
// and the planner plans the first device's blocks (PlanRunner).
func TestRunBlocksOnADeviceSet(t *testing.T) {
	const n, size, nblocks = 5, 16, 4
	d := &fakeDeviceSet{fakeAsync: newFakeAsync(n, 0), depth: 4}
	g := fakeGraph(t, n)
	sources := allSources(size * nblocks)
	blocks := PlanBlocks(len(sources), 1, 0, size)
	if planRunner(d) != graph.Runner(d.fakeAsync) {
		t.Errorf("planRunner did not take the DeviceSet's PlanRunner")
	}
	var sunk int
	err := runBlocks(context.Background(), g, d, Options{Query: Query{Layout: arrowio.LayoutPairs}}, schedule{}, sources, blocks, func(res blockResult) error {
		sunk++
		return checkFakeRows(res.block)
	})
	if err != nil {
		t.Fatal(err)
	}
	if sunk != nblocks {
		t.Errorf("%d blocks sunk, want %d", sunk, nblocks)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.direct != 0 {
		t.Errorf("%d blocks started through Start, want all through StartCut", d.direct)
	}
	want := [][]int{nil, nil, nil, {size / 2}}
	if !slices.EqualFunc(d.cuts, want, slices.Equal) {
		t.Errorf("StartCut cuts %v, want %v", d.cuts, want)
	}
}
