package gpu

import (
	"errors"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// These tests need no device.

func smallCSR(t *testing.T, weights []int64, typ graph.DistType) *graph.CSR {
	t.Helper()
	e := &graph.Edges{NumVertices: 5, Src: []graph.VertexID{0, 1, 2, 3}, Dst: []graph.VertexID{1, 2, 3, 4}, IntWeights: weights}
	g, err := graph.Build(e, graph.BuildOptions{DistType: typ})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestBytesPerSource(t *testing.T) {
	const n = 5
	for _, tc := range []struct {
		alg  graph.Algorithm
		typ  graph.DistType
		pred bool
		want int // bytes per vertex
	}{
		{graph.Dijkstra, graph.DistInt32, false, 4 + 4 + 1},
		{graph.Dijkstra, graph.DistFloat64, true, 8 + 8 + 1 + 4},
		{graph.Delta, graph.DistInt64, false, 8 + 8 + 2},
		{graph.Edge, graph.DistFloat32, false, 4},
		{graph.Edge, graph.DistFloat32, true, 4 + 4 + 4},
		{graph.BFS, graph.DistInt64, false, 4 + 2},
		{graph.BFS, graph.DistInt64, true, 4 + 2 + 8 + 4},
		{graph.BFSLevel, graph.DistFloat64, false, 4},
		{graph.BellmanFord, graph.DistInt32, false, 4 + 2},
		{graph.BellmanFord, graph.DistInt32, true, 4 + 2 + 8 + 4},
		{graph.BellmanFord, graph.DistFloat64, true, 8 + 2 + 4 + 4},
	} {
		g := smallCSR(t, []int64{1, 2, 3, 4}, tc.typ)
		r := newRunner(nil, g, graph.Request{Algorithm: tc.alg, WithPredecessors: tc.pred}, defaultBatchedConfig())
		// The result rows are held twice: one set computing, one being
		// copied out (overlap.go).
		second := r.DistType().Size()
		if tc.pred {
			second += 4
		}
		if got, want := r.BytesPerSource(), int64(n*(tc.want+second)+perSourceBytes); got != want {
			t.Errorf("%s %s pred=%v: BytesPerSource = %d, want %d", tc.alg, tc.typ, tc.pred, got, want)
		}
		wantType := tc.typ
		if tc.alg.CountsHops() {
			wantType = graph.DistInt32
		}
		if r.DistType() != wantType {
			t.Errorf("%s on %s: DistType = %s, want %s", tc.alg, tc.typ, r.DistType(), wantType)
		}
	}
}

func TestChooseDelta(t *testing.T) {
	g := smallCSR(t, []int64{1, 2, 3, 4}, 0) // mean weight 2.5, mean degree 0.8
	if got := chooseDelta(g, 7.5); got != 7.5 {
		t.Errorf("asked 7.5, got %v", got)
	}
	if got, want := chooseDelta(g, 0), float64(deltaScale*5/2); got != want {
		t.Errorf("default delta = %v, want %v", got, want)
	}
	zero := smallCSR(t, []int64{0, 0, 0, 0}, 0)
	if got := chooseDelta(zero, 0); got != 1 {
		t.Errorf("all-zero weights: delta = %v, want 1", got)
	}
	empty, err := graph.Build(&graph.Edges{NumVertices: 3}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := chooseDelta(empty, 0); got != 1 {
		t.Errorf("no edges: delta = %v, want 1", got)
	}
}

func TestCheckRequest(t *testing.T) {
	neg := smallCSR(t, []int64{1, -2, 3, 4}, 0)
	for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge} {
		err := checkRequest(neg, graph.Request{Algorithm: alg})
		var nw *graph.NegativeWeightError
		if !errors.As(err, &nw) || nw.From != 1 || nw.To != 2 || nw.Weight != -2 || nw.Algorithm != alg {
			t.Errorf("%s on a negative weight: err = %#v", alg, err)
		}
	}
	for _, alg := range []graph.Algorithm{graph.BellmanFord, graph.BFS, graph.BFSLevel} {
		if err := checkRequest(neg, graph.Request{Algorithm: alg}); err != nil {
			t.Errorf("%s on a negative weight: %v", alg, err)
		}
	}
	for _, req := range []graph.Request{
		{Algorithm: graph.Auto},
		{Algorithm: "floyd"},
		{Algorithm: graph.BFSLevel, WithPredecessors: true},
	} {
		if err := checkRequest(neg, req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}
