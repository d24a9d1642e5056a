package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
)

// loopEdges: 0 -> 1 (3), a negative self-loop 1 -> 1 (-1, and a heavier
// -1 duplicate dropped in favour of -4 when dup), 1 -> 2 (1), 3 -> 2 (4),
// a non-negative self-loop 3 -> 3 (0). 0 and 1 reach the loop; 2 and 3
// do not.
func loopEdges(dup bool) *graph.Edges {
	e := &graph.Edges{NumVertices: 4,
		Src: []graph.VertexID{0, 1, 1, 3, 3}, Dst: []graph.VertexID{1, 1, 2, 2, 3}, IntWeights: []int64{3, -1, 1, 4, 0}}
	if dup {
		e.Src, e.Dst, e.IntWeights = append(e.Src, 1), append(e.Dst, 1), append(e.IntWeights, -4)
	}
	return e
}

// TestNegativeSelfLoopIsKept: Build drops every self-loop from the rows but
// keeps a negative one as NegativeLoops (smallest weight per vertex), so
// that HasNegative, MinWeight and NegativeWeight count it. A negative
// self-loop was dropped like the others: 1 -> 2 was 3 beside 2,2,-1.
func TestNegativeSelfLoopIsKept(t *testing.T) {
	for _, dup := range []bool{false, true} {
		g, err := graph.Build(loopEdges(dup), graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := -1.0
		if dup {
			want = -4
		}
		if !slices.Equal(g.NegativeLoops, []graph.NegativeLoop{{Vertex: 1, Weight: want}}) {
			t.Errorf("dup %v: NegativeLoops = %v, want [{1 %v}]", dup, g.NegativeLoops, want)
		}
		if !g.HasNegative() || g.MinWeight != want || g.NumEdges() != 3 {
			t.Errorf("dup %v: HasNegative %v, MinWeight %v, %d arcs; want true, %v, 3", dup, g.HasNegative(), g.MinWeight, g.NumEdges(), want)
		}
		nw := g.NegativeWeight(graph.Dijkstra)
		if nw == nil || nw.From != 1 || nw.To != 1 || nw.Weight != want || !errors.Is(nw, graph.ErrNegativeWeight) {
			t.Errorf("dup %v: NegativeWeight = %v, want the loop 1 -> 1 of weight %v", dup, nw, want)
		}
		if tr := graph.Transpose(g); !slices.Equal(tr.NegativeLoops, g.NegativeLoops) || !tr.HasNegative() {
			t.Errorf("dup %v: the transpose lost the loop: %v", dup, tr.NegativeLoops)
		}
	}
	// Non-negative self-loops stay ignored.
	g, err := graph.Build(&graph.Edges{NumVertices: 2, Src: []graph.VertexID{0, 1, 0}, Dst: []graph.VertexID{1, 1, 0},
		Float32Weights: []float32{3, 0, 2.5}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.HasNegative() || g.NegativeLoops != nil || g.MinWeight != 3 || g.NegativeWeight(graph.Dijkstra) != nil {
		t.Errorf("non-negative loops: HasNegative %v, loops %v, MinWeight %v", g.HasNegative(), g.NegativeLoops, g.MinWeight)
	}
	// A float loop, and one on a vertex with no other arc.
	g, err = graph.Build(&graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 2}, Dst: []graph.VertexID{1, 2},
		Float64Weights: []float64{1, -0.5}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.NegativeLoops, []graph.NegativeLoop{{Vertex: 2, Weight: -0.5}}) || g.MinWeight != -0.5 {
		t.Errorf("float loop: %v, MinWeight %v", g.NegativeLoops, g.MinWeight)
	}
}

// TestNegativeLoopCycle: bellman-ford and auto get a *NegativeCycleError
// naming the loop for the first source that reaches it, directed, reversed
// and undirected; sources that reach no loop and the other algorithms get
// none (the others refuse the loop as a negative weight instead).
func TestNegativeLoopCycle(t *testing.T) {
	g, err := graph.Build(loopEdges(false), graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := graph.Build(loopEdges(false), graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		g          *graph.CSR
		algo       graph.Algorithm
		sources    []graph.VertexID
		wantSource graph.VertexID // -1: no error
	}{
		{"from 0", g, graph.BellmanFord, []graph.VertexID{0}, 0},
		{"from the loop", g, graph.BellmanFord, []graph.VertexID{1}, 1},
		{"first that reaches", g, graph.BellmanFord, []graph.VertexID{3, 2, 0, 1}, 0},
		{"auto", g, graph.Auto, []graph.VertexID{0}, 0},
		{"not reached", g, graph.BellmanFord, []graph.VertexID{2, 3}, -1},
		{"reversed: 2 is reached from the loop", graph.Transpose(g), graph.BellmanFord, []graph.VertexID{3, 2}, 2},
		{"reversed: 0 is not", graph.Transpose(g), graph.BellmanFord, []graph.VertexID{0}, -1},
		{"undirected", u, graph.BellmanFord, []graph.VertexID{3}, 3},
		{"dijkstra", g, graph.Dijkstra, []graph.VertexID{0}, -1},
		{"bfs", g, graph.BFS, []graph.VertexID{0}, -1},
	} {
		err := tc.g.NegativeLoopCycle(tc.algo, tc.sources)
		if tc.wantSource < 0 {
			if err != nil {
				t.Errorf("%s: %v, want none", tc.name, err)
			}
			continue
		}
		var cyc *graph.NegativeCycleError
		if !errors.As(err, &cyc) || !errors.Is(err, graph.ErrNegativeCycle) || cyc.Vertex != 1 || cyc.Source != tc.wantSource {
			t.Errorf("%s: %v, want a negative cycle through vertex 1 from source %d", tc.name, err, tc.wantSource)
		}
	}
	// Without a negative loop there is nothing to report.
	plain, err := graph.Build(&graph.Edges{NumVertices: 2, Src: []graph.VertexID{0}, Dst: []graph.VertexID{1}, IntWeights: []int64{-2}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.NegativeLoopCycle(graph.BellmanFord, []graph.VertexID{0, 1}); err != nil {
		t.Errorf("no loop: %v", err)
	}
}

// TestNegativeLoopRefusedByTheCPUEngine: the algorithms that need
// non-negative weights refuse a graph whose only negative weight is a
// self-loop, naming the loop, directed and undirected.
func TestNegativeLoopRefusedByTheCPUEngine(t *testing.T) {
	for _, undirected := range []bool{false, true} {
		e := &graph.Edges{NumVertices: 2, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 1}, IntWeights: []int64{3, -1}}
		g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			t.Fatal(err)
		}
		for _, algo := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge} {
			r, err := cpu.New().Prepare(context.Background(), g, graph.Request{Algorithm: algo})
			if err == nil {
				r.Close()
			}
			var nw *graph.NegativeWeightError
			if !errors.As(err, &nw) || nw.From != 1 || nw.To != 1 || nw.Weight != -1 || nw.Algorithm != algo {
				t.Errorf("undirected %v, %s: %v, want the negative weight of 1 -> 1", undirected, algo, err)
			}
		}
	}
}
