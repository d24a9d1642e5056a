package ref

import (
	"math"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestBrandesKnownAnswers: the oracle on graphs whose betweenness is known
// by hand (networkx's docstring examples among them), raw sums before any
// rescaling.
func TestBrandesKnownAnswers(t *testing.T) {
	build := func(n int, src, dst []graph.VertexID, w []int64, undirected bool) *graph.CSR {
		t.Helper()
		g, err := graph.Build(&graph.Edges{NumVertices: n, Src: src, Dst: dst, IntWeights: w}, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	all := func(n int) []graph.VertexID {
		s := make([]graph.VertexID, n)
		for i := range s {
			s[i] = graph.VertexID(i)
		}
		return s
	}
	cases := []struct {
		name      string
		g         *graph.CSR
		endpoints bool
		want      []float64
	}{
		// The directed 3-path 0 → 1 → 2: one path through 1.
		{"directed path", build(3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, nil, false), false, []float64{0, 1, 0}},
		{"directed path, endpoints", build(3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, nil, false), true, []float64{2, 3, 2}},
		// The undirected 3-path counts (0, 2) and (2, 0).
		{"undirected path", build(3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, nil, true), false, []float64{0, 2, 0}},
		// A star of 4 leaves around 0: 4·3 ordered pairs through the centre.
		{"undirected star", build(5, []graph.VertexID{0, 0, 0, 0}, []graph.VertexID{1, 2, 3, 4}, nil, true), false, []float64{12, 0, 0, 0, 0}},
		// A diamond 0 → {1, 2} → 3 with equal weights: half of the one
		// pair (0, 3) through each middle vertex.
		{"weighted diamond tie", build(4, []graph.VertexID{0, 0, 1, 2}, []graph.VertexID{1, 2, 3, 3}, []int64{2, 1, 1, 2}, false), false, []float64{0, 0.5, 0.5, 0}},
		// The same diamond with 0 → 2 → 3 shorter: every path through 2.
		{"weighted diamond", build(4, []graph.VertexID{0, 0, 1, 2}, []graph.VertexID{1, 2, 3, 3}, []int64{2, 1, 2, 1}, false), false, []float64{0, 0, 1, 0}},
	}
	for _, c := range cases {
		got, err := Brandes(c.g, all(c.g.NumVertices), c.endpoints, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for v := range got {
			if math.Abs(got[v]-c.want[v]) > 1e-12 {
				t.Errorf("%s: vertex %d: %v, want %v (all %v)", c.name, v, got[v], c.want[v], got)
				break
			}
		}
	}
}

// TestBrandesRefusesZeroWeights: a zero weight is an error, not a count.
func TestBrandesRefusesZeroWeights(t *testing.T) {
	g, err := graph.Build(&graph.Edges{NumVertices: 2, Src: []graph.VertexID{0}, Dst: []graph.VertexID{1}, IntWeights: []int64{0}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Brandes(g, []graph.VertexID{0}, false, false); err == nil {
		t.Error("Brandes took a zero weight")
	}
	if _, err := Brandes(g, []graph.VertexID{0}, false, true); err != nil {
		t.Errorf("hops ignore the weights: %v", err)
	}
}

// TestEdgeBrandesKnownAnswers: the edge oracle on the directed 3-path
// 0 → 1 → 2 (each arc on two paths) and the diamond 0 → {1, 2} → 3, where
// the two paths 0 ⇝ 3 split: each outer arc carries one path of its own
// and half of 0 ⇝ 3.
func TestEdgeBrandesKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        int
		src, dst []graph.VertexID
		want     []float64 // in CSR order: by tail, then head
	}{
		{"path", 3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, []float64{2, 2}},
		{"diamond", 4, []graph.VertexID{0, 0, 1, 2}, []graph.VertexID{1, 2, 3, 3}, []float64{1.5, 1.5, 1.5, 1.5}},
	} {
		g, err := graph.Build(&graph.Edges{NumVertices: c.n, Src: c.src, Dst: c.dst}, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sources := make([]graph.VertexID, c.n)
		for i := range sources {
			sources[i] = graph.VertexID(i)
		}
		got, err := EdgeBrandes(g, sources, false)
		if err != nil {
			t.Fatal(err)
		}
		for k := range c.want {
			if got[k] != c.want[k] {
				t.Errorf("%s: arc %d: %v, want %v (all %v)", c.name, k, got[k], c.want[k], got)
			}
		}
	}
}
