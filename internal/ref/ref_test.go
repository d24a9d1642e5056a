package ref

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestCases checks every oracle against the hand-written answers of the
// shared table (and so the table against the oracles).
func TestCases(t *testing.T) {
	for _, c := range testgraphs.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			g, err := c.CSR()
			if err != nil {
				t.Fatal(err)
			}
			if g.Type != c.WantType {
				t.Fatalf("distance type %v, want %v", g.Type, c.WantType)
			}
			switch g.Type {
			case graph.DistInt32:
				checkCase[int32](t, &c, g)
			case graph.DistInt64:
				checkCase[int64](t, &c, g)
			case graph.DistFloat32:
				checkCase[float32](t, &c, g)
			case graph.DistFloat64:
				checkCase[float64](t, &c, g)
			}
		})
	}
}

func checkCase[D graph.Number](t *testing.T, c *testgraphs.Case, g *graph.CSR) {
	ids := c.Vertices()
	n := len(ids)
	want, hops := c.WantMatrix(), c.HopMatrix()
	fw := FloydWarshall[D](g)
	for s := range n {
		src := graph.VertexID(s)
		wantRow := toD[D](want[s*n : (s+1)*n])
		bf, err := BellmanFord[D](g, src)
		if c.ReachesCycle(ids[s]) {
			var nc *graph.NegativeCycleError
			if !errors.As(err, &nc) || !slices.Contains(c.CycleVertices, ids[nc.Vertex]) || nc.Source != src {
				t.Errorf("source %s: BellmanFord error %v, want a negative cycle through one of %v", ids[s], err, c.CycleVertices)
			}
			if fw[s][s] >= 0 && slices.Contains(c.CycleVertices, ids[s]) {
				t.Errorf("source %s on a negative cycle: FloydWarshall diagonal %v", ids[s], fw[s][s])
			}
		} else {
			if err != nil {
				t.Fatalf("source %s: BellmanFord: %v", ids[s], err)
			}
			if !slices.Equal(bf, wantRow) {
				t.Errorf("source %s: BellmanFord %v, want %v", ids[s], bf, wantRow)
			}
			if c.WantErr == nil && !slices.Equal(fw[s], wantRow) {
				t.Errorf("source %s: FloydWarshall %v, want %v", ids[s], fw[s], wantRow)
			}
		}
		d, err := Dijkstra[D](g, src)
		switch {
		case c.HasNegative():
			if err == nil {
				t.Errorf("source %s: Dijkstra accepted negative weights", ids[s])
			}
		case err != nil:
			t.Fatal(err)
		case !slices.Equal(d, wantRow):
			t.Errorf("source %s: Dijkstra %v, want %v", ids[s], d, wantRow)
		}
		h, err := BFS(g, src)
		if err != nil {
			t.Fatal(err)
		}
		if wantHops := toD[int32](hops[s*n : (s+1)*n]); !slices.Equal(h, wantHops) {
			t.Errorf("source %s: BFS %v, want %v", ids[s], h, wantHops)
		}
	}
}

// toD converts an expected row (+Inf for unreachable) to D.
func toD[D graph.Number](row []float64) []D {
	out := make([]D, len(row))
	for i, x := range row {
		if math.IsInf(x, 1) {
			out[i] = graph.Infinity[D]()
		} else {
			out[i] = D(x)
		}
	}
	return out
}

// TestOraclesAgree compares the oracles with each other on random graphs.
func TestOraclesAgree(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	for trial := range 40 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64, testgraphs.Unweighted}[trial%4]
		n := 1 + rng.IntN(40)
		opt := testgraphs.RandomOptions{
			N: n, M: rng.IntN(4 * n), Kind: kind, MinWeight: 0, MaxWeight: 1 + rng.IntN(20),
			Dyadic: true, Duplicates: rng.IntN(5),
		}
		undirected := trial%3 == 0
		e, _ := testgraphs.Random(rng, opt)
		g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		switch g.Type {
		case graph.DistInt32:
			agree[int32](t, seed, trial, g)
		case graph.DistInt64:
			agree[int64](t, seed, trial, g)
		case graph.DistFloat32:
			agree[float32](t, seed, trial, g)
		case graph.DistFloat64:
			agree[float64](t, seed, trial, g)
		}
	}
}

func agree[D graph.Number](t *testing.T, seed uint64, trial int, g *graph.CSR) {
	t.Helper()
	fw := FloydWarshall[D](g)
	for s := range g.NumVertices {
		src := graph.VertexID(s)
		d, err := Dijkstra[D](g, src)
		if err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		bf, err := BellmanFord[D](g, src)
		if err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
		if !slices.Equal(d, fw[s]) || !slices.Equal(bf, fw[s]) {
			t.Fatalf("seed %d trial %d source %d:\nDijkstra      %v\nBellmanFord   %v\nFloydWarshall %v", seed, trial, s, d, bf, fw[s])
		}
		if !g.Weighted {
			h, _ := BFS(g, src)
			if !slices.Equal(toD[int32](toFloat(d)), h) {
				t.Fatalf("seed %d trial %d source %d: BFS %v, Dijkstra %v", seed, trial, s, h, d)
			}
		}
		pred := treeOf(g, src, d)
		if err := CheckPredecessors(g, src, d, pred); err != nil {
			t.Fatalf("seed %d trial %d: %v", seed, trial, err)
		}
	}
}

func toFloat[D graph.Number](row []D) []float64 {
	out := make([]float64, len(row))
	for i, x := range row {
		if x == graph.Infinity[D]() {
			out[i] = math.Inf(1)
		} else {
			out[i] = float64(x)
		}
	}
	return out
}

// treeOf builds predecessors by a breadth-first walk over tight arcs.
func treeOf[D graph.Number](g *graph.CSR, src graph.VertexID, dist []D) []graph.VertexID {
	w := graph.WeightsOf[D](g)
	pred := make([]graph.VertexID, g.NumVertices)
	for i := range pred {
		pred[i] = -1
	}
	seen := make([]bool, g.NumVertices)
	seen[src] = true
	queue := []graph.VertexID{src}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			v := g.Targets[k]
			if !seen[v] && graph.AddSaturating(dist[u], w[k]) == dist[v] {
				seen[v], pred[v] = true, u
				queue = append(queue, v)
			}
		}
	}
	return pred
}

// TestBellmanFordNegative checks negative weights without cycles (weights
// shifted by potentials) against Floyd-Warshall, and planted negative cycles.
func TestBellmanFordNegative(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	for trial := range 30 {
		n := 2 + rng.IntN(30)
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: 3 * n, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 10, Potential: 15,
		})
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fw := FloydWarshall[int32](g)
		for s := range n {
			bf, err := BellmanFord[int32](g, graph.VertexID(s))
			if err != nil || !slices.Equal(bf, fw[s]) {
				t.Fatalf("seed %d trial %d source %d: BellmanFord %v (%v), FloydWarshall %v", seed, trial, s, bf, err, fw[s])
			}
			if err := CheckPredecessors(g, graph.VertexID(s), bf, treeOf(g, graph.VertexID(s), bf)); err != nil {
				t.Fatalf("seed %d trial %d: %v", seed, trial, err)
			}
		}
		k := 2 + rng.IntN(min(n-1, 5))
		e, cycle := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: 2 * n, Kind: testgraphs.Int, MinWeight: k, MaxWeight: k + 10, Cycle: k,
		})
		g, err = graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for s := range n {
			hops, _ := BFS(g, graph.VertexID(s))
			reaches := slices.ContainsFunc(cycle, func(v graph.VertexID) bool { return hops[v] != math.MaxInt32 })
			bf, err := BellmanFord[int32](g, graph.VertexID(s))
			var nc *graph.NegativeCycleError
			switch {
			case reaches && (!errors.As(err, &nc) || !slices.Contains(cycle, nc.Vertex)):
				t.Fatalf("seed %d trial %d source %d: error %v, want a negative cycle through one of %v", seed, trial, s, err, cycle)
			case !reaches && err != nil:
				t.Fatalf("seed %d trial %d source %d: %v", seed, trial, s, err)
			case !reaches:
				d, _ := Dijkstra[int32](subgraphWithout(g, cycle), graph.VertexID(s))
				if !slices.Equal(d, bf) {
					t.Fatalf("seed %d trial %d source %d: BellmanFord %v, Dijkstra %v", seed, trial, s, bf, d)
				}
			}
		}
	}
}

// subgraphWithout drops the arcs leaving the given vertices, which a source
// that cannot reach them never uses; what is left has no negative weight.
func subgraphWithout(g *graph.CSR, drop []graph.VertexID) *graph.CSR {
	e := &graph.Edges{NumVertices: g.NumVertices, IntWeights: []int64{}}
	w := graph.WeightsOf[int32](g)
	for u := range g.NumVertices {
		if slices.Contains(drop, graph.VertexID(u)) {
			continue
		}
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			e.Src = append(e.Src, graph.VertexID(u))
			e.Dst = append(e.Dst, g.Targets[k])
			e.IntWeights = append(e.IntWeights, int64(w[k]))
		}
	}
	h, _ := graph.Build(e, graph.BuildOptions{DistType: graph.DistInt32})
	return h
}

// TestCheckPredecessorsRejects feeds broken predecessor arrays.
func TestCheckPredecessorsRejects(t *testing.T) {
	c, err := testgraphs.Find("zero-weights") // 0->1->2->0 all weigh 0; 2->3 5; 0->3 6
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.CSR()
	if err != nil {
		t.Fatal(err)
	}
	dist, _ := Dijkstra[int32](g, 0)
	good := []graph.VertexID{-1, 0, 1, 2}
	if err := CheckPredecessors(g, 0, dist, good); err != nil {
		t.Fatalf("valid tree rejected: %v", err)
	}
	for _, tc := range []struct {
		name string
		pred []graph.VertexID
	}{
		{"source has a predecessor", []graph.VertexID{2, 0, 1, 2}},
		{"reachable without predecessor", []graph.VertexID{-1, 0, -1, 2}},
		{"not tight", []graph.VertexID{-1, 0, 1, 0}},
		{"no such arc", []graph.VertexID{-1, 0, 0, 2}},
		{"zero-weight cycle", []graph.VertexID{-1, 2, 1, 2}},
		{"out of range", []graph.VertexID{-1, 9, 1, 2}},
		{"short", []graph.VertexID{-1, 0, 1}},
	} {
		if err := CheckPredecessors(g, 0, dist, tc.pred); err == nil {
			t.Errorf("%s: accepted %v", tc.name, tc.pred)
		}
	}
	dist3, _ := Dijkstra[int32](g, 3) // 3 reaches nothing
	if err := CheckPredecessors(g, 3, dist3, []graph.VertexID{-1, -1, 2, -1}); err == nil {
		t.Error("unreachable vertex with a predecessor accepted")
	}
}
