package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// betweennessShape is one family of random test graphs.
type betweennessShape struct {
	name  string
	edges func(rng *rand.Rand) (n int, src, dst []graph.VertexID)
}

func betweennessShapes() []betweennessShape {
	return []betweennessShape{
		{"star", func(rng *rand.Rand) (int, []graph.VertexID, []graph.VertexID) {
			n := 2 + rng.IntN(30)
			var src, dst []graph.VertexID
			for v := 1; v < n; v++ {
				src, dst = append(src, 0), append(dst, graph.VertexID(v))
				if rng.IntN(2) == 0 { // both ways on half the leaves
					src, dst = append(src, graph.VertexID(v)), append(dst, 0)
				}
			}
			return n, src, dst
		}},
		{"deep dag", func(rng *rand.Rand) (int, []graph.VertexID, []graph.VertexID) {
			n := 2 + rng.IntN(60)
			var src, dst []graph.VertexID
			for v := 1; v < n; v++ {
				src, dst = append(src, graph.VertexID(v-1)), append(dst, graph.VertexID(v))
				if u := v - 1 - rng.IntN(min(v, 4)); u != v-1 {
					src, dst = append(src, graph.VertexID(u)), append(dst, graph.VertexID(v))
				}
			}
			return n, src, dst
		}},
		{"grid", func(rng *rand.Rand) (int, []graph.VertexID, []graph.VertexID) {
			rows, cols := 1+rng.IntN(8), 1+rng.IntN(8)
			var src, dst []graph.VertexID
			for r := range rows {
				for c := range cols {
					v := graph.VertexID(r*cols + c)
					if c+1 < cols {
						src, dst = append(src, v), append(dst, v+1)
					}
					if r+1 < rows {
						src, dst = append(src, v), append(dst, v+graph.VertexID(cols))
					}
				}
			}
			return rows * cols, src, dst
		}},
		{"components", func(rng *rand.Rand) (int, []graph.VertexID, []graph.VertexID) {
			// Small random parts side by side, and isolated vertices.
			n := 0
			var src, dst []graph.VertexID
			for range 1 + rng.IntN(5) {
				size := 1 + rng.IntN(8)
				for range rng.IntN(3 * size) {
					u, v := n+rng.IntN(size), n+rng.IntN(size)
					src, dst = append(src, graph.VertexID(u)), append(dst, graph.VertexID(v))
				}
				n += size
			}
			return n, src, dst
		}},
		{"random", func(rng *rand.Rand) (int, []graph.VertexID, []graph.VertexID) {
			n := 1 + rng.IntN(50)
			var src, dst []graph.VertexID
			for range rng.IntN(4 * n) {
				src, dst = append(src, graph.VertexID(rng.IntN(n))), append(dst, graph.VertexID(rng.IntN(n)))
			}
			return n, src, dst
		}},
	}
}

// randomBetweennessGraph draws a graph of shape sh with weights of kind
// (1..3 for integers, to make ties; for int-top 1, half and all of the
// bucket queue's largest weight, and for int-wide three multiples of a
// weight above it; any positive value for floats).
func randomBetweennessGraph(t *testing.T, rng *rand.Rand, sh betweennessShape, kind string, undirected bool) *graph.CSR {
	t.Helper()
	n, src, dst := sh.edges(rng)
	e := &graph.Edges{NumVertices: n, Src: src, Dst: dst}
	opt := graph.BuildOptions{Undirected: undirected}
	switch kind {
	case "int32", "int64":
		for range src {
			e.IntWeights = append(e.IntWeights, 1+rng.Int64N(3))
		}
	case "int-top": // up to maxDialWeight: the bucket ring's widest
		for range src {
			e.IntWeights = append(e.IntWeights, []int64{1, maxDialWeight / 2, maxDialWeight}[rng.IntN(3)])
		}
	case "int-wide": // above maxDialWeight: the heap, with ties as many
		for range src {
			e.IntWeights = append(e.IntWeights, (1+rng.Int64N(3))*(maxDialWeight/2+1))
		}
		if kind == "int64" {
			opt.DistType = graph.DistInt64
		}
	case "float32":
		for range src {
			e.Float32Weights = append(e.Float32Weights, float32(0.1+rng.Float64()*3))
		}
	case "float64":
		for range src {
			// Halves and quarters tie often; the other values seldom.
			w := float64(1+rng.IntN(8)) / 4
			if rng.IntN(3) == 0 {
				w = 0.1 + rng.Float64()
			}
			e.Float64Weights = append(e.Float64Weights, w)
		}
	}
	g, err := graph.Build(e, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func closeEnough(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1)
}

// TestBetweennessAgainstBrandes: the engine's vertex and edge betweenness
// against the serial oracle on random graphs of every shape, weight kind
// and direction, with and without endpoints (which edges ignore), from
// every source and from a few.
func TestBetweennessAgainstBrandes(t *testing.T) {
	rng := testgraphs.Rand(t, 41)
	trials := 4
	if testing.Short() {
		trials = 1
	}
	for _, sh := range betweennessShapes() {
		for _, kind := range []string{"hops", "int32", "int64", "int-top", "int-wide", "float32", "float64"} {
			for _, undirected := range []bool{false, true} {
				for trial := range trials {
					g := randomBetweennessGraph(t, rng, sh, kind, undirected)
					sources := allSources(g.NumVertices)
					if trial%2 == 1 {
						sources = sources[:0]
						for v := range g.NumVertices {
							if rng.IntN(3) == 0 {
								sources = append(sources, graph.VertexID(v))
							}
						}
					}
					endpoints := trial%4 >= 2
					name := fmt.Sprintf("%s/%s/undirected=%v/trial %d (n %d, %d sources, endpoints %v)", sh.name, kind, undirected, trial, g.NumVertices, len(sources), endpoints)
					want, err := ref.Brandes(g, sources, endpoints, kind == "hops")
					if err != nil {
						t.Fatalf("%s: oracle: %v", name, err)
					}
					got, err := New(WithThreads(3)).Betweenness(context.Background(), g, sources, BetweennessOptions{Endpoints: endpoints, Hops: kind == "hops"})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for v := range want {
						if !closeEnough(got[v], want[v]) {
							t.Fatalf("%s: vertex %d: %v, oracle %v", name, v, got[v], want[v])
						}
					}
					wantArcs, err := ref.EdgeBrandes(g, sources, kind == "hops")
					if err != nil {
						t.Fatalf("%s: edge oracle: %v", name, err)
					}
					gotArcs, err := New(WithThreads(3)).EdgeBetweenness(context.Background(), g, sources, BetweennessOptions{Endpoints: endpoints, Hops: kind == "hops"})
					if err != nil {
						t.Fatalf("%s: edges: %v", name, err)
					}
					for k := range wantArcs {
						if !closeEnough(gotArcs[k], wantArcs[k]) {
							t.Fatalf("%s: arc %d: %v, oracle %v", name, k, gotArcs[k], wantArcs[k])
						}
					}
				}
			}
		}
	}
}

// TestBetweennessSameWhateverThreads: the sum is the same, bit for bit,
// on 1, 2 and 7 threads (the blocks' partial sums are added in block
// order), on a graph with enough sources for many blocks.
func TestBetweennessSameWhateverThreads(t *testing.T) {
	rng := testgraphs.Rand(t, 42)
	n := 300
	e := &graph.Edges{NumVertices: n}
	for range 4 * n {
		e.Src, e.Dst = append(e.Src, graph.VertexID(rng.IntN(n))), append(e.Dst, graph.VertexID(rng.IntN(n)))
		e.Float64Weights = append(e.Float64Weights, 0.1+rng.Float64())
	}
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var first []float64
	for _, threads := range []int{1, 2, 7} {
		got, err := New(WithThreads(threads)).Betweenness(context.Background(), g, allSources(n), BetweennessOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
			continue
		}
		for v := range got {
			if got[v] != first[v] {
				t.Fatalf("%d threads: vertex %d: %v, one thread %v", threads, v, got[v], first[v])
			}
		}
	}
}

// TestBetweennessRefusesNonPositiveWeights: zero and negative weights are
// errors naming the arc; counting hops ignores them.
func TestBetweennessRefusesNonPositiveWeights(t *testing.T) {
	for _, w := range []int64{0, -2} {
		g, err := graph.Build(&graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 2}, IntWeights: []int64{1, w}}, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = New().Betweenness(context.Background(), g, allSources(3), BetweennessOptions{})
		if err == nil || !strings.Contains(err.Error(), "positive weights") || !strings.Contains(err.Error(), "1 -> 2") {
			t.Errorf("weight %d: %v, want a refusal naming arc 1 -> 2", w, err)
		}
		if _, err := New().Betweenness(context.Background(), g, allSources(3), BetweennessOptions{Hops: true}); err != nil {
			t.Errorf("weight %d, hops: %v", w, err)
		}
	}
}

// TestBetweennessCancelled: a cancelled context stops the run with its
// cause, and no partial sum is returned.
func TestBetweennessCancelled(t *testing.T) {
	g, err := graph.Build(&graph.Edges{NumVertices: 100, Src: []graph.VertexID{0}, Dst: []graph.VertexID{1}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := New().Betweenness(ctx, g, allSources(100), BetweennessOptions{})
	if err == nil || got != nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("cancelled: %v, %v", got, err)
	}
}
