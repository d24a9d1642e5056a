package arrowio

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestNearestRecords builds the nearest layout of random results, a third
// of the vertices unreached, over windows of several sizes (one window, a
// few, parts on several goroutines): the rows must be every reached vertex
// once, in vertex order, with its distance and source mapped to external
// ids, in records of at most the window's rows; nothing may stay allocated.
func TestNearestRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 17))
	for _, c := range []struct{ n, window int }{{0, 5}, {1, 5}, {20, 7}, {20, 1 << 20}, {300_000, 200_000}, {300_000, 1 << 20}} {
		t.Run(fmt.Sprintf("n=%d/window=%d", c.n, c.window), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, c.n)}
			for i := range v.Ints {
				v.Ints[i] = int64(3*i + 1)
			}
			dist := make([]float32, c.n)
			res := &graph.Nearest{Type: graph.DistFloat32, Dist: dist, Source: make([]graph.VertexID, c.n)}
			for i := range res.Source {
				res.Source[i] = -1
				if rng.IntN(3) > 0 {
					res.Source[i], dist[i] = graph.VertexID(rng.IntN(c.n)), float32(rng.IntN(1000))/4
				}
			}
			b := NewResultBuilder(LayoutNearest, v, graph.DistFloat32, false, mem)
			b.maxRows = c.window
			next := 0 // the next reached vertex expected
			skip := func() {
				for next < c.n && res.Source[next] < 0 {
					next++
				}
			}
			err := b.Nearest(res, func(r arrow.RecordBatch) error {
				if r.NumRows() == 0 || r.NumRows() > int64(c.window) {
					return fmt.Errorf("a record of %d rows, window %d", r.NumRows(), c.window)
				}
				vs, ds, ss := r.Column(0).(*array.Int64), r.Column(1).(*array.Float32), r.Column(2).(*array.Int64)
				for i := range int(r.NumRows()) {
					skip()
					if next == c.n {
						return fmt.Errorf("row %d past the last reached vertex", i)
					}
					if vs.Value(i) != v.Ints[next] || ds.Value(i) != dist[next] || ss.Value(i) != v.Ints[res.Source[next]] {
						return fmt.Errorf("row for vertex %d: (%d, %v, %d), want (%d, %v, %d)", next, vs.Value(i), ds.Value(i), ss.Value(i),
							v.Ints[next], dist[next], v.Ints[res.Source[next]])
					}
					next++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if skip(); next != c.n {
				t.Fatalf("rows stop before vertex %d of %d", next, c.n)
			}
		})
	}
}
