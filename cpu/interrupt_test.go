package cpu

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// cancelAfter is a context whose Err is nil for its first allow calls and
// context.Canceled from then on: a cancellation that lands while a source
// is being searched, at a point the test controls.
type cancelAfter struct {
	context.Context
	allow int64
	calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.allow {
		return context.Canceled
	}
	return nil
}

// chain is the path 0 -> 1 -> … -> n-1, arc i weighing 1 + i%7, as an
// unweighted, an int32 or a float64 graph.
func chain(t *testing.T, n int, weights string) *graph.CSR {
	t.Helper()
	e := &graph.Edges{NumVertices: n}
	for i := 0; i+1 < n; i++ {
		e.Src, e.Dst = append(e.Src, graph.VertexID(i)), append(e.Dst, graph.VertexID(i+1))
		switch weights {
		case "int":
			e.IntWeights = append(e.IntWeights, int64(1+i%7))
		case "float":
			e.Float64Weights = append(e.Float64Weights, float64(1+i%7))
		}
	}
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// chainDistances are the distances of chain(n, weights) from src.
func chainDistances(n int, weights string, src int) []float64 {
	d := make([]float64, n)
	for v := range n {
		switch {
		case v < src:
			d[v] = math.Inf(1)
		case v > src && weights == "none":
			d[v] = d[v-1] + 1
		case v > src:
			d[v] = d[v-1] + float64(1+(v-1)%7)
		}
	}
	return d
}

// TestSingleSourceInterruptible: a cancellation that comes while one large
// source is searched stops that search (the row is left unfinished), for
// every kernel, the serial ones of auto (queue BFS, Dial, heap) included;
// before, those ran the source to its end. The runner then computes the
// next block correctly from the same pooled workspace.
func TestSingleSourceInterruptible(t *testing.T) {
	const n = 4 * popsPerCheck
	for _, tc := range []struct {
		name, weights string
		algo          graph.Algorithm
	}{
		{"auto queue bfs", "none", graph.Auto},
		{"auto dial", "int", graph.Auto},
		{"auto heap", "float", graph.Auto},
		{"dijkstra", "int", graph.Dijkstra},
		{"delta", "float", graph.Delta},
		{"bellman-ford", "int", graph.BellmanFord},
		{"bfs", "none", graph.BFS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := chain(t, n, tc.weights)
			r, err := New(WithThreads(1)).Prepare(context.Background(), g, graph.Request{Algorithm: tc.algo})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// Run looks once before the source; the search's own looks
			// see the cancellation.
			ctx := &cancelAfter{Context: context.Background(), allow: 1}
			out := graph.NewBlock([]graph.VertexID{0}, n, r.DistType(), false)
			err = r.Run(ctx, out)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v, want context.Canceled", err)
			}
			if last, full := asFloat(out)[n-1], chainDistances(n, tc.weights, 0)[n-1]; last == full {
				t.Errorf("the search ran to the end of the chain (distance %v) after the cancellation", last)
			}
			// An interrupted search leaves its workspace fit for the next
			// source (the heap's positions, Dial's buckets).
			switch rr := r.(type) {
			case *runner[int32]:
				solveAfterInterrupt(t, rr, chainDistances(n, tc.weights, 3))
			case *runner[float64]:
				solveAfterInterrupt(t, rr, chainDistances(n, tc.weights, 3))
			default:
				t.Fatalf("runner %T", r)
			}
		})
	}
}

// solveAfterInterrupt interrupts a search from vertex 0 on one workspace,
// then searches from vertex 3 on the same workspace and compares with want.
func solveAfterInterrupt[D graph.Number](t *testing.T, r *runner[D], want []float64) {
	t.Helper()
	ws := r.workspace(&cancelAfter{Context: context.Background()}, 1)
	row := make([]D, r.n)
	if err := r.solve(ws, 0, row, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted search: %v", err)
	}
	ws.ctx = context.Background()
	if err := r.solve(ws, 3, row, nil); err != nil {
		t.Fatal(err)
	}
	got := toFloat(row)
	for v := range got {
		if got[v] != want[v] {
			t.Fatalf("after an interrupted search, vertex %d: %v, want %v", v, got[v], want[v])
		}
	}
}
