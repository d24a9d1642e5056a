package pipeline

import (
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
