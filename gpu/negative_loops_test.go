package gpu

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestBuildCSRNotesNegativeLoops: the device build drops self-loops as
// graph.Build does and, like it, keeps the negative ones as NegativeLoops
// (MinWeight included), so that the GPU engine refuses them under the
// algorithms that need non-negative weights and the pipeline reports the
// cycle under bellman-ford, whichever built the CSR.
func TestBuildCSRNotesNegativeLoops(t *testing.T) {
	e := openEngine(t)
	edges := &graph.Edges{NumVertices: 4, Src: []graph.VertexID{0, 1, 1, 3, 1, 2}, Dst: []graph.VertexID{1, 1, 2, 3, 1, 2},
		IntWeights: []int64{3, -1, 1, 0, -4, 5}}
	for _, undirected := range []bool{false, true} {
		opt := graph.BuildOptions{Undirected: undirected}
		want, err := graph.Build(edges, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.BuildCSR(context.Background(), edges, opt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := sameCSR(got, want); diff != "" {
			t.Fatalf("undirected %v: %s", undirected, diff)
		}
		if !slices.Equal(got.NegativeLoops, []graph.NegativeLoop{{Vertex: 1, Weight: -4}}) || got.MinWeight != -4 {
			t.Errorf("undirected %v: loops %v, MinWeight %v; want [{1 -4}], -4", undirected, got.NegativeLoops, got.MinWeight)
		}
		for _, algo := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge} {
			r, err := e.Prepare(context.Background(), got, graph.Request{Algorithm: algo})
			if err == nil {
				r.Close()
			}
			var nw *graph.NegativeWeightError
			if !errors.As(err, &nw) || nw.From != 1 || nw.To != 1 {
				t.Errorf("undirected %v, %s: %v, want the negative weight of 1 -> 1", undirected, algo, err)
			}
		}
		var cyc *graph.NegativeCycleError
		if err := got.NegativeLoopCycle(graph.BellmanFord, []graph.VertexID{0}); !errors.As(err, &cyc) || cyc.Vertex != 1 {
			t.Errorf("undirected %v: NegativeLoopCycle = %v, want the loop at 1", undirected, err)
		}
	}
}
