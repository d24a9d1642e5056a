package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// TestMatrixRecordsBuiltAhead checks the matrix layout, whose records the
// producer builds before the writer takes them: rows equal Dijkstra's on a
// graph with unreachable pairs (so the validity bitmap is there), in source
// order over many blocks, and no record is leaked when the writer fails
// part-way or the run is cancelled.
func TestMatrixRecordsBuiltAhead(t *testing.T) {
	const n = 90
	rng := rand.New(rand.NewPCG(5, 8))
	e := graph.Edges{NumVertices: n}
	for i := 0; i < 2*n; i++ {
		e.Src = append(e.Src, int32(rng.IntN(n)))
		e.Dst = append(e.Dst, int32(rng.IntN(n)))
		e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(50)))
	}
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := range n {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "random"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt := Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "cpu", MaxBlock: 7, Allocator: mem}}

	row := 0
	_, err = runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		list := r.Column(1).(*array.FixedSizeList)
		vals := list.ListValues().(*array.Int32)
		for i := 0; i < int(r.NumRows()); i++ {
			want, err := ref.Dijkstra[int32](g.CSR, graph.VertexID(row))
			if err != nil {
				return err
			}
			for t2 := range n {
				k := i*n + t2
				unreachable := want[t2] == graph.Infinity[int32]()
				if vals.IsNull(k) != unreachable || (!unreachable && vals.Value(k) != want[t2]) {
					t.Fatalf("row %d, vertex %d: null %v value %d, want %d", row, t2, vals.IsNull(k), vals.Value(k), want[t2])
				}
			}
			row++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if row != n {
		t.Fatalf("%d rows, want %d", row, n)
	}

	failed := errors.New("writer failed")
	calls := 0
	_, err = runQuery(context.Background(), g, opt, func(arrow.RecordBatch) error {
		if calls++; calls == 3 {
			return failed
		}
		return nil
	})
	if !errors.Is(err, failed) {
		t.Fatalf("err = %v, want the writer's", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	_, err = runQuery(ctx, g, opt, func(arrow.RecordBatch) error {
		if calls++; calls == 2 {
			cancel()
		}
		return nil
	})
	if !IsInterrupted(err) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
}
