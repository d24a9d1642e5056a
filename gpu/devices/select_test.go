package devices

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// fakeSelector is a device runner that selects the k nearest itself: its
// blocks cost half the bytes a source once it selects (one result slot,
// as the GPU runner's), beside fixed bytes, and a row's cells name the
// vertices source+1 .. source+k at distances 1 .. k.
type fakeSelector struct {
	per, fixed int64
	refuse     bool
	mu         sync.Mutex
	k          int
	chunks     []int
}

func (f *fakeSelector) DistType() graph.DistType { return graph.DistInt32 }
func (f *fakeSelector) Close() error             { return nil }
func (f *fakeSelector) BytesPerSource() int64 {
	if f.k > 0 {
		return f.per / 2
	}
	return f.per
}
func (f *fakeSelector) StatsBytesPerSource() int64 { return f.per / 2 }
func (f *fakeSelector) StatsFixedBytes() int64     { return f.fixed }
func (f *fakeSelector) SelectNearest(k int) bool {
	if f.refuse {
		return false
	}
	f.k = k
	return true
}

func (f *fakeSelector) Run(ctx context.Context, out *graph.Block) error {
	f.mu.Lock()
	f.chunks = append(f.chunks, len(out.Sources))
	f.mu.Unlock()
	d := out.Dist.([]int32)
	for i, s := range out.Sources {
		for j := range f.k {
			out.CellTargets[i*f.k+j] = s + graph.VertexID(j) + 1
			d[i*f.k+j] = int32(j + 1)
		}
	}
	return nil
}

// TestSelectNearestOnDevices checks that several devices' runner selects
// the k nearest on every device where all of them can, resizes each
// device's chunks to its budget over the selection's bytes a source less
// the fixed bytes, and fills a block of the k nearest from chunks of
// several devices, its CellTargets cut as its distances are; and that one
// device that cannot leaves the runner declining.
func TestSelectNearestOnDevices(t *testing.T) {
	const k, n = 3, 1000
	a, b := &fakeSelector{per: 100, fixed: 2000}, &fakeSelector{per: 100, fixed: 2000}
	wa, wb := &deviceWorker{label: "0", runner: a, deviceBudget: 10000}, &deviceWorker{label: "1", runner: b, deviceBudget: 10000}
	for _, w := range []*deviceWorker{wa, wb} {
		w.maxChunk.Store(100) // 10000 bytes over 100 a source
	}
	r := newDevicesRunner([]*deviceWorker{wa, wb}, n, 2, io.Discard, func(error) bool { return false })
	defer r.Close()
	if !r.SelectNearest(k) {
		t.Fatal("SelectNearest refused where every device selects")
	}
	if a.k != k || b.k != k {
		t.Fatalf("devices select %d and %d nearest, want %d", a.k, b.k, k)
	}
	for _, w := range []*deviceWorker{wa, wb} {
		if got := w.maxChunk.Load(); got != 160 { // (10000 - 2000) over 50
			t.Errorf("device %s: chunks of up to %d sources, want 160", w.label, got)
		}
	}
	sources := make([]graph.VertexID, 500)
	for i := range sources {
		sources[i] = graph.VertexID(i)
	}
	out := graph.NewBlock(sources, k, graph.DistInt32, false)
	out.NumVertices = n
	out.CellTargets = make([]graph.VertexID, len(sources)*k)
	if err := r.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	d := out.Dist.([]int32)
	for i, s := range sources {
		for j := range k {
			if v, dist := out.CellTargets[i*k+j], d[i*k+j]; v != s+graph.VertexID(j)+1 || dist != int32(j+1) {
				t.Fatalf("source %d, rank %d: vertex %d at %d, want %d at %d", s, j+1, v, dist, s+graph.VertexID(j)+1, j+1)
			}
		}
	}
	all := append(slices.Clone(a.chunks), b.chunks...)
	if len(all) < 4 || slices.Max(all) > 160 {
		t.Errorf("chunks %v and %v: want at least 4 of at most 160 sources", a.chunks, b.chunks)
	}

	c, e := &fakeSelector{per: 100}, &fakeSelector{per: 100, refuse: true}
	wc, we := &deviceWorker{label: "0", runner: c, deviceBudget: 10000}, &deviceWorker{label: "1", runner: e, deviceBudget: 10000}
	r2 := newDevicesRunner([]*deviceWorker{wc, we}, n, 2, io.Discard, func(error) bool { return false })
	defer r2.Close()
	if r2.SelectNearest(k) {
		t.Error("SelectNearest true where a device refuses")
	}
}
