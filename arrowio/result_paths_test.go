package arrowio

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestPairsPathsBounded builds the pairs with paths of a chain of 60
// vertices (the path to v holds v+1 vertices) under a small cap on a
// record's path vertices: every record stays within the cap plus one
// path, and the records together hold the same rows and paths as one
// builder without the cap.
func TestPairsPathsBounded(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 60
	ids := make([]int64, n)
	dist := make([]int64, n)
	pred := make([]int32, n)
	for v := range n {
		ids[v], dist[v], pred[v] = int64(v), int64(v), int32(v-1)
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ids}
	blk := &graph.Block{Sources: []graph.VertexID{0}, NumVertices: n, Type: graph.DistInt64, Dist: dist, Pred: pred, PathPred: pred}
	build := func(limit int) (paths [][]int64, records int) {
		b := NewResultBuilder(LayoutPairs, v, graph.DistInt64, false, mem)
		b.SetShape(Shape{Paths: true})
		if limit > 0 {
			b.maxPathVerts = limit
		}
		err := b.Block(blk, func(rec arrow.RecordBatch) error {
			records++
			col := rec.Column(int(rec.NumCols()) - 1).(*array.List)
			values := col.ListValues().(*array.Int64)
			if limit > 0 && values.Len() > limit+n {
				t.Fatalf("cap %d: a record of %d rows holds %d path vertices", limit, rec.NumRows(), values.Len())
			}
			offs := col.Offsets()
			for i := range int(rec.NumRows()) {
				var p []int64
				for j := offs[i]; j < offs[i+1]; j++ {
					p = append(p, values.Value(int(j)))
				}
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return paths, records
	}
	whole, one := build(0)
	if one != 1 || len(whole) != n {
		t.Fatalf("without a cap: %d records of %d rows, want 1 of %d", one, len(whole), n)
	}
	for _, limit := range []int{1, 7, 100, 500} {
		got, records := build(limit)
		if records < 2 {
			t.Errorf("cap %d: %d record(s), want the paths split", limit, records)
		}
		if len(got) != len(whole) {
			t.Fatalf("cap %d: %d rows, want %d", limit, len(got), len(whole))
		}
		for i := range whole {
			if len(got[i]) != len(whole[i]) || got[i][0] != 0 || got[i][len(got[i])-1] != int64(i) {
				t.Fatalf("cap %d: row %d's path %v, want %v", limit, i, got[i], whole[i])
			}
		}
	}
}
