package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

type shape struct {
	kind       testgraphs.WeightKind
	distType   graph.DistType // 0: Build's choice
	undirected bool
}

func (s shape) String() string {
	dir := "directed"
	if s.undirected {
		dir = "undirected"
	}
	dt := "auto"
	if s.distType != 0 {
		dt = s.distType.String()
	}
	return fmt.Sprintf("%s-weights/%s-dist/%s", s.kind, dt, dir)
}

func shapes() []shape {
	var out []shape
	for _, undirected := range []bool{false, true} {
		out = append(out,
			shape{testgraphs.Unweighted, 0, undirected},
			shape{testgraphs.Int, 0, undirected},
			shape{testgraphs.Int, graph.DistInt64, undirected},
			shape{testgraphs.Float32, 0, undirected},
			shape{testgraphs.Float64, 0, undirected},
		)
	}
	return out
}

// TestRandomSmallAgainstFloydWarshall: all pairs of small random graphs
// (duplicate edges, zero weights, self-loops) against Floyd-Warshall, with
// dyadic float weights so that sums are exact whatever their order.
func TestRandomSmallAgainstFloydWarshall(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 10))
	trials := 3
	if testing.Short() {
		trials = 1
	}
	for _, sh := range shapes() {
		for trial := range trials {
			n := 1 + rng.IntN(60)
			e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
				N: n, M: rng.IntN(5*n + 1), Kind: sh.kind, MinWeight: 0, MaxWeight: rng.IntN(12),
				Dyadic: true, Duplicates: rng.IntN(n + 1),
			})
			g, err := graph.Build(e, graph.BuildOptions{Undirected: sh.undirected, DistType: sh.distType})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			want := floydWarshallFlat(g)
			hopWant := floydWarshallFlat(unitWeights(g))
			for ename, eng := range engines() {
				for _, algo := range graph.Algorithms {
					withPred := algo.HasPredecessors() && rng.IntN(2) == 0
					out, err := run(eng, g, graph.Request{Algorithm: algo, WithPredecessors: withPred}, allSources(n))
					if err != nil {
						t.Fatalf("seed %d %s trial %d %s %s: %v", seed, sh, trial, ename, algo, err)
					}
					w := want
					if algo.CountsHops() || algo == graph.Auto && !g.Weighted {
						w = hopWant
					}
					if got := asFloat(out); !slices.Equal(got, w) {
						t.Fatalf("seed %d %s trial %d %s %s (n=%d): distances differ from Floyd-Warshall at %d",
							seed, sh, trial, ename, algo, n, firstDiff(got, w))
					}
					checkPreds(t, g, out, algo.CountsHops() || algo == graph.Auto && !g.Weighted)
				}
			}
		}
	}
}

// TestRandomLargeAgainstDijkstra: a few sources of larger random graphs
// (arbitrary float weights: every algorithm reaches the same fixpoint in
// D's arithmetic) against the heap Dijkstra and BFS oracles.
func TestRandomLargeAgainstDijkstra(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	for _, sh := range shapes() {
		n := 500 + rng.IntN(1500)
		if testing.Short() {
			n = 100 + rng.IntN(200)
		}
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: 4 * n, Kind: sh.kind, MinWeight: 0, MaxWeight: 1 + rng.IntN(10000),
			Duplicates: n / 10,
		})
		g, err := graph.Build(e, graph.BuildOptions{Undirected: sh.undirected, DistType: sh.distType})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sources := make([]graph.VertexID, 1+rng.IntN(6))
		for i := range sources {
			sources[i] = graph.VertexID(rng.IntN(n))
		}
		want := oracleRows(t, g, sources, false)
		hopWant := oracleRows(t, g, sources, true)
		for ename, eng := range engines() {
			for _, algo := range graph.Algorithms {
				if algo == graph.CH {
					// ch sums float weights exactly (or refuses them), not
					// in D's arithmetic: TestCHAgainstDijkstra checks it.
					continue
				}
				withPred := algo.HasPredecessors()
				for _, block := range [][]graph.VertexID{sources, sources[:1]} {
					out, err := run(eng, g, graph.Request{Algorithm: algo, WithPredecessors: withPred}, block)
					if err != nil {
						t.Fatalf("seed %d %s %s %s: %v", seed, sh, ename, algo, err)
					}
					w := want[:len(block)*n]
					if algo.CountsHops() || algo == graph.Auto && !g.Weighted {
						w = hopWant[:len(block)*n]
					}
					if got := asFloat(out); !slices.Equal(got, w) {
						i := firstDiff(got, w)
						t.Fatalf("seed %d %s %s %s (n=%d): source %d vertex %d: got %v, want %v",
							seed, sh, ename, algo, n, block[i/n], i%n, got[i], w[i])
					}
					checkPreds(t, g, out, algo.CountsHops() || algo == graph.Auto && !g.Weighted)
				}
			}
		}
	}
}

// TestRandomNegative: bellman-ford (and auto) on negative weights without
// negative cycles (weights shifted by vertex potentials), and with a
// planted negative cycle, the only one (other weights are large).
func TestRandomNegative(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 12))
	trials := 6
	if testing.Short() {
		trials = 2
	}
	for trial := range trials {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64, testgraphs.Float32}[trial%3]
		n := 2 + rng.IntN(300)
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: 3 * n, Kind: kind, MinWeight: 0, MaxWeight: 20, Dyadic: true, Potential: 30,
		})
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !g.HasNegative() && n > 10 {
			t.Fatalf("seed %d: potentials made no negative weight", seed)
		}
		sources := allSources(min(n, 20))
		want := oracleRows(t, g, sources, false)
		for ename, eng := range engines() {
			for _, algo := range []graph.Algorithm{graph.BellmanFord, graph.Auto} {
				out, err := run(eng, g, graph.Request{Algorithm: algo, WithPredecessors: true}, sources)
				if err != nil {
					t.Fatalf("seed %d trial %d %s %s: %v", seed, trial, ename, algo, err)
				}
				if got := asFloat(out); !slices.Equal(got, want) {
					t.Fatalf("seed %d trial %d %s %s: differs from ref.BellmanFord at %d", seed, trial, ename, algo, firstDiff(got, want))
				}
				checkPreds(t, g, out, false)
			}
			if g.HasNegative() {
				if _, err := run(eng, g, graph.Request{Algorithm: graph.Dijkstra}, sources); !errors.Is(err, graph.ErrNegativeWeight) {
					t.Fatalf("seed %d: dijkstra on negative weights: %v", seed, err)
				}
			}
		}

		// A planted cycle of k arcs of weight -1; every other arc weighs at
		// least k, so every other simple cycle weighs more than zero.
		k := 2 + rng.IntN(min(n-1, 6))
		e, cycle := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: 2 * n, Kind: kind, MinWeight: k, MaxWeight: k + 10, Cycle: k,
		})
		g, err = graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for s := range min(n, 12) {
			src := graph.VertexID(s)
			hops, _ := ref.BFS(g, src)
			reaches := slices.ContainsFunc(cycle, func(v graph.VertexID) bool { return hops[v] != math.MaxInt32 })
			for ename, eng := range engines() {
				out, err := run(eng, g, graph.Request{Algorithm: graph.BellmanFord, WithPredecessors: true}, []graph.VertexID{src})
				var nc *graph.NegativeCycleError
				switch {
				case reaches && (!errors.As(err, &nc) || nc.Source != src || !slices.Contains(cycle, nc.Vertex)):
					t.Fatalf("seed %d trial %d %s source %d: %v, want a negative cycle through one of %v", seed, trial, ename, s, err, cycle)
				case !reaches && err != nil:
					t.Fatalf("seed %d trial %d %s source %d: %v", seed, trial, ename, s, err)
				case !reaches:
					want := oracleRows(t, g, []graph.VertexID{src}, false)
					if got := asFloat(out); !slices.Equal(got, want) {
						t.Fatalf("seed %d trial %d %s source %d: differs from ref.BellmanFord at %d", seed, trial, ename, s, firstDiff(got, want))
					}
					checkPreds(t, g, out, false)
				}
			}
		}
	}
}

// oracleRows returns the oracle's rows for sources: ref.BFS for hops,
// ref.Dijkstra or (negative weights) ref.BellmanFord otherwise.
func oracleRows(t *testing.T, g *graph.CSR, sources []graph.VertexID, hops bool) []float64 {
	t.Helper()
	var out []float64
	for _, s := range sources {
		var row []float64
		var err error
		switch {
		case hops || !g.Weighted:
			var h []int32
			h, err = ref.BFS(g, s)
			row = toFloat(h)
		case g.Type == graph.DistInt32:
			row, err = oracleRow[int32](g, s)
		case g.Type == graph.DistInt64:
			row, err = oracleRow[int64](g, s)
		case g.Type == graph.DistFloat32:
			row, err = oracleRow[float32](g, s)
		default:
			row, err = oracleRow[float64](g, s)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, row...)
	}
	return out
}

func oracleRow[D graph.Number](g *graph.CSR, s graph.VertexID) ([]float64, error) {
	var d []D
	var err error
	if g.HasNegative() {
		d, err = ref.BellmanFord[D](g, s)
	} else {
		d, err = ref.Dijkstra[D](g, s)
	}
	return toFloat(d), err
}

func floydWarshallFlat(g *graph.CSR) []float64 {
	var out []float64
	switch g.Type {
	case graph.DistInt32:
		for _, row := range ref.FloydWarshall[int32](g) {
			out = append(out, toFloat(row)...)
		}
	case graph.DistInt64:
		for _, row := range ref.FloydWarshall[int64](g) {
			out = append(out, toFloat(row)...)
		}
	case graph.DistFloat32:
		for _, row := range ref.FloydWarshall[float32](g) {
			out = append(out, toFloat(row)...)
		}
	default:
		for _, row := range ref.FloydWarshall[float64](g) {
			out = append(out, toFloat(row)...)
		}
	}
	return out
}

func firstDiff(a, b []float64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRandomLongPaths: long chains with heavy integer weights up to auto's
// bucket-queue limit (and zeros), where a bucket walk meets long runs of
// empty buckets, against ref.Dijkstra.
func TestRandomLongPaths(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 13))
	n := 3000
	e := &graph.Edges{NumVertices: n}
	for i := range n - 1 {
		e.Src = append(e.Src, graph.VertexID(i))
		e.Dst = append(e.Dst, graph.VertexID(i+1))
		e.IntWeights = append(e.IntWeights, int64(rng.IntN(2)*maxDialWeight))
	}
	for range n / 3 {
		e.Src = append(e.Src, graph.VertexID(rng.IntN(n)))
		e.Dst = append(e.Dst, graph.VertexID(rng.IntN(n)))
		e.IntWeights = append(e.IntWeights, int64(rng.IntN(maxDialWeight+1)))
	}
	for _, undirected := range []bool{false, true} {
		g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			t.Fatal(err)
		}
		sources := []graph.VertexID{0, graph.VertexID(rng.IntN(n)), graph.VertexID(n - 1)}
		want := oracleRows(t, g, sources, false)
		for ename, eng := range engines() {
			for _, algo := range []graph.Algorithm{graph.Auto, graph.Delta, graph.Dijkstra} {
				out, err := run(eng, g, graph.Request{Algorithm: algo, WithPredecessors: true}, sources)
				if err != nil {
					t.Fatalf("seed %d %s %s: %v", seed, ename, algo, err)
				}
				if got := asFloat(out); !slices.Equal(got, want) {
					t.Fatalf("seed %d %s %s undirected=%v: differs from ref.Dijkstra at %d", seed, ename, algo, undirected, firstDiff(got, want))
				}
				checkPreds(t, g, out, false)
			}
		}
	}
}
