package pipeline

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestBlockPool checks that a recycled distance array serves the next
// block of its type that fits (a smaller one too), that a block of another
// type or a larger one gets fresh memory, that recycling twice gives the
// array back once, and that the pool keeps at most blockPoolMax arrays.
func TestBlockPool(t *testing.T) {
	var p blockPool
	src := allSources(4)
	first := func(b *graph.Block) *int32 { return &b.Dist.([]int32)[0] }
	a := p.block(src, 10, graph.DistInt32, false)
	b := p.block(src, 10, graph.DistInt32, true)
	if first(a) == first(b) {
		t.Fatal("two live blocks share an array")
	}
	a.Recycle()
	a.Recycle()
	if len(p.free) != 1 {
		t.Fatalf("%d arrays pooled after recycling one block twice, want 1", len(p.free))
	}
	if f := p.block(src, 10, graph.DistInt64, false); len(p.free) != 1 || len(f.Dist.([]int64)) != 40 {
		t.Fatal("a block of another type took the int32 array")
	}
	if f := p.block(allSources(5), 10, graph.DistInt32, false); len(p.free) != 1 || len(f.Dist.([]int32)) != 50 {
		t.Fatal("a larger block took a smaller array")
	}
	c := p.block(src[:3], 10, graph.DistInt32, true)
	if first(c) != first(a) || len(c.Dist.([]int32)) != 30 || len(c.Pred) != 30 || len(p.free) != 0 {
		t.Fatalf("a smaller block did not reuse the recycled array (%d pooled)", len(p.free))
	}
	c.Recycle()
	d := p.block(src, 10, graph.DistInt32, false)
	if first(d) != first(a) || len(d.Dist.([]int32)) != 40 {
		t.Fatal("the array recycled by a smaller block does not serve a full block again")
	}
	for range blockPoolMax + 2 {
		p.block(src, 10, graph.DistInt32, false).Recycle()
	}
	if len(p.free) > blockPoolMax {
		t.Fatalf("%d arrays pooled, at most %d", len(p.free), blockPoolMax)
	}
}

// fakePinner records what a blockPool pins and unpins.
type fakePinner struct {
	mu     sync.Mutex
	pinned map[*byte]int
	calls  int
}

func (f *fakePinner) PinHost(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if _, ok := f.pinned[&b[0]]; ok {
		return errors.New("pinned twice")
	}
	f.pinned[&b[0]] = len(b)
	return nil
}

func (f *fakePinner) UnpinHost(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pinned[&b[0]] != len(b) {
		return errors.New("unpinning what is not pinned")
	}
	delete(f.pinned, &b[0])
	return nil
}

// TestBlockPoolPins checks that a pool with a HostPinner pins the arrays
// it makes up to blockPoolMax, prefilled ones first, that blocks carry
// room for their bitmap, that an array the pool drops is unpinned, and that
// close unpins the rest while a block still alive keeps its memory.
func TestBlockPoolPins(t *testing.T) {
	f := &fakePinner{pinned: map[*byte]int{}}
	p := &blockPool{pin: f}
	const n = 10
	src := allSources(4)
	p.prefill(2, len(src)*n, graph.DistInt32)
	var live []*graph.Block
	for range blockPoolMax + 2 {
		b := p.block(src, n, graph.DistInt32, false)
		if len(b.Valid) != (len(src)*n+7)/8 {
			t.Fatalf("block has %d bytes of bitmap room, want %d", len(b.Valid), (len(src)*n+7)/8)
		}
		live = append(live, b)
	}
	if len(f.pinned) != blockPoolMax || len(p.pinned) != blockPoolMax {
		t.Fatalf("%d arrays pinned (pool says %d), want %d", len(f.pinned), len(p.pinned), blockPoolMax)
	}
	pinnedDist := func(b *graph.Block) bool { _, ok := f.pinned[&distBytes(b.Dist)[0]]; return ok }
	if !pinnedDist(live[0]) || !pinnedDist(live[1]) || pinnedDist(live[blockPoolMax]) {
		t.Error("the prefilled arrays are not the first blocks' pinned ones, or a fifth array was pinned")
	}
	// Fill the pool with two unpinned arrays and two pinned ones; the
	// next pinned array recycled is dropped, and must be unpinned.
	for _, i := range []int{blockPoolMax, blockPoolMax + 1, 0, 1} {
		live[i].Recycle()
	}
	if len(f.pinned) != blockPoolMax {
		t.Fatalf("%d arrays pinned with the pool full, want %d", len(f.pinned), blockPoolMax)
	}
	live[2].Recycle()
	if len(f.pinned) != blockPoolMax-1 || pinnedDist(live[2]) {
		t.Fatalf("%d arrays pinned after the pool dropped a pinned one, want %d", len(f.pinned), blockPoolMax-1)
	}
	p.close()
	if len(f.pinned) != 0 {
		t.Fatalf("%d arrays still pinned after close", len(f.pinned))
	}
	d := live[blockPoolMax-1].Dist.([]int32)
	d[0] = 7 // still valid memory
	live[blockPoolMax-1].Recycle()
	if len(p.free) != 0 {
		t.Error("a closed pool took an array back")
	}
}

// TestSplitMergeBlocks checks that splitting blocks into pieces and
// merging them back gives the original plan, and that merging never
// joins blocks that are not adjacent or would exceed the size.
func TestSplitMergeBlocks(t *testing.T) {
	plan := PlanBlocks(1000, 1, 0, 300)
	pieces := splitBlocks(plan, 7)
	covered := 0
	for i, b := range pieces {
		if b.End-b.Start > 7 || b.End <= b.Start || (i > 0 && pieces[i-1].End != b.Start) {
			t.Fatalf("piece %d = %v", i, b)
		}
		covered += b.End - b.Start
	}
	if covered != 1000 {
		t.Fatalf("pieces cover %d sources", covered)
	}
	if got := mergeBlocks(pieces, 300); !slices.Equal(got, plan) {
		t.Fatalf("merged back: %v, want %v", got, plan)
	}
	gap := []SourceBlock{{0, 5}, {6, 9}, {9, 20}, {20, 21}}
	if got, want := mergeBlocks(gap, 12), []SourceBlock{{0, 5}, {6, 9}, {9, 21}}; !slices.Equal(got, want) {
		t.Fatalf("mergeBlocks(%v, 12) = %v, want %v", gap, got, want)
	}
}
