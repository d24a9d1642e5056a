package gen

import (
	"runtime"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// roadReached counts the vertices that vertex 0 reaches in e, and those
// that reach it (along reversed arcs), by internal/ref's BFS.
func roadReached(t *testing.T, e *EdgeList) (out, in int) {
	t.Helper()
	edges, err := e.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	count := func(edges *graph.Edges) int {
		csr, err := graph.Build(edges, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hops, err := ref.BFS(csr, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range hops {
			if h != graph.Infinity[int32]() {
				n++
			}
		}
		return n
	}
	out = count(edges)
	edges.Src, edges.Dst = edges.Dst, edges.Src
	return out, count(edges)
}

// TestRoadDeterministic: one seed gives the same arcs and weights whatever
// GOMAXPROCS (rows of more than one chunk), another seed other weights.
func TestRoadDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *EdgeList
	for _, procs := range []int{1, 2, 7} {
		runtime.GOMAXPROCS(procs)
		e, err := Road(300, 250, 0.4, 42)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = e
			continue
		}
		if !slices.Equal(e.Src, first.Src) || !slices.Equal(e.Dst, first.Dst) || !slices.Equal(e.Weights, first.Weights) {
			t.Fatalf("GOMAXPROCS %d: another graph for the same seed", procs)
		}
	}
	other, err := Road(300, 250, 0.4, 43)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Weights, first.Weights) && slices.Equal(other.Src, first.Src) {
		t.Error("seeds 42 and 43 give the same graph")
	}
}

// TestRoadCountsAndWeights: without one-way streets the arcs are Grid's;
// with them, fewer, one per one-way block. Weights are positive tenths of
// a second of a block of 75..125 m at the class's speed, highways the
// fastest per metre.
func TestRoadCountsAndWeights(t *testing.T) {
	const rows, cols = 70, 45
	blocks := int64(rows*(cols-1) + (rows-1)*cols)
	for _, oneway := range []float64{0, 0.3, 1} {
		e, err := Road(rows, cols, oneway, 5)
		if err != nil {
			t.Fatal(err)
		}
		if e.NumVertices != rows*cols {
			t.Fatalf("oneway %v: %d vertices, want %d", oneway, e.NumVertices, rows*cols)
		}
		arcs := int64(e.Len())
		switch {
		case oneway == 0 && arcs != 2*blocks:
			t.Errorf("oneway 0: %d arcs, want %d", arcs, 2*blocks)
		case oneway > 0 && !(arcs < 2*blocks && arcs > blocks):
			t.Errorf("oneway %v: %d arcs, want between %d and %d", oneway, arcs, blocks, 2*blocks)
		}
		for i, w := range e.Weights {
			u, v := min(e.Src[i], e.Dst[i]), max(e.Src[i], e.Dst[i])
			line := u / cols // a horizontal block's row
			if v == u+cols {
				line = u % cols // a vertical block's column
			}
			if u != v-1 && v != u+cols {
				t.Fatalf("arc %d: %d -> %d joins no neighbours", i, e.Src[i], e.Dst[i])
			}
			kmh := roadClass(line)
			lo, hi := int64(0.75*RoadBlockMetres/(kmh/3.6)*10)-1, int64(1.25*RoadBlockMetres/(kmh/3.6)*10)+1
			if w < 1 || w < lo || w > hi {
				t.Fatalf("arc %d (%d -> %d, %v km/h): weight %d outside [%d, %d]", i, e.Src[i], e.Dst[i], kmh, w, lo, hi)
			}
		}
	}
	f, err := Road(10, 10, 0, 5, WithFloatWeights(0, 1))
	if err != nil || f.FloatWeights == nil || f.FloatWeights[0] <= 0 {
		t.Errorf("float weights: %v, %v", err, f)
	}
	u, err := Road(10, 10, 0.5, 5, Unweighted())
	if err != nil || u.Weighted() {
		t.Errorf("unweighted: %v, weighted %v", err, u.Weighted())
	}
}

// TestRoadReachable: every vertex reaches vertex 0 and is reached from it
// (strongly connected), with and without one-way streets: one-way segments
// end at two-way arterials.
func TestRoadReachable(t *testing.T) {
	for _, tc := range []struct {
		rows, cols int
		oneway     float64
	}{{40, 37, 0}, {40, 37, 0.5}, {33, 70, 1}, {1, 9, 1}, {9, 1, 1}, {17, 3, 0.8}} {
		e, err := Road(tc.rows, tc.cols, tc.oneway, 9)
		if err != nil {
			t.Fatal(err)
		}
		out, in := roadReached(t, e)
		if n := tc.rows * tc.cols; out != n || in != n {
			t.Errorf("road %d×%d oneway %v: vertex 0 reaches %d and is reached by %d of %d vertices", tc.rows, tc.cols, tc.oneway, out, in, n)
		}
	}
}

// TestRoadRefusals: negative sizes and fractions outside [0, 1].
func TestRoadRefusals(t *testing.T) {
	for _, tc := range []struct {
		rows, cols int
		oneway     float64
	}{{-1, 3, 0}, {3, -1, 0}, {3, 3, -0.1}, {3, 3, 1.5}} {
		if _, err := Road(tc.rows, tc.cols, tc.oneway, 1); err == nil {
			t.Errorf("Road(%d, %d, %v) gave no error", tc.rows, tc.cols, tc.oneway)
		}
	}
	if e, err := Road(0, 0, 0, 1); err != nil || e.Len() != 0 {
		t.Errorf("Road(0, 0): %v, %d arcs", err, e.Len())
	}
}
