package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestTargetsStopEarly runs auto's searches (breadth-first, Dial, heap)
// with targets, which stop once every target is settled, on random graphs
// whose targets are few, repeated, the source itself or unreachable, for
// every source in one block (so that each worker's buffers go from a
// stopped search to the next), with and without predecessors and a
// cutoff: every target's distance must equal the oracle's, and every
// target's predecessor must end a shortest path to it.
func TestTargetsStopEarly(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 31))
	for _, c := range searchShapes {
		for trial := range 6 {
			g := randomSearchGraph(t, seed, rng, c, 300, trial%3 == 0)
			n := g.NumVertices
			targets := make([]graph.VertexID, 1+rng.IntN(4))
			for i := range targets {
				targets[i] = graph.VertexID(rng.IntN(n))
			}
			if trial%2 == 1 {
				targets = append(targets, targets[0]) // a repeat
			}
			sources := allSources(n)
			want := oracleRows(t, g, sources, false)
			req := graph.Request{Algorithm: graph.Auto, Targets: targets, WithPredecessors: trial%2 == 0}
			cut := math.Inf(1)
			if trial%3 == 2 {
				cut = float64(rng.IntN(3 * max(1, c.maxW)))
				req.Cutoff, req.HasCutoff = cut, true
			}
			for ename, eng := range engines() {
				name := func() string {
					return ename + " " + c.kind.String()
				}
				r, err := eng.Prepare(t.Context(), g, req)
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, name(), err)
				}
				if d := r.(interface{ Describe() string }).Describe(); !strings.Contains(d, "stops once it has settled every target") {
					t.Fatalf("seed %d %s: runner %q", seed, name(), d)
				}
				out := graph.NewTargetBlock(sources, targets, n, r.DistType(), req.WithPredecessors)
				if err := r.Run(t.Context(), out); err != nil {
					t.Fatalf("seed %d %s: %v", seed, name(), err)
				}
				r.Close()
				got, w := asFloat(out), len(targets)
				for i, s := range sources {
					for j, v := range targets {
						wd := want[i*n+int(v)]
						if wd > cut {
							wd = math.Inf(1)
						}
						if got[i*w+j] != wd {
							t.Fatalf("seed %d %s trial %d (n=%d): d(%d, %d) = %v, want %v", seed, name(), trial, n, s, v, got[i*w+j], wd)
						}
						if out.Pred == nil || math.IsInf(wd, 1) {
							continue
						}
						p := out.Pred[i*w+j]
						if v == s {
							if p != -1 {
								t.Fatalf("seed %d %s: the source %d's predecessor is %d", seed, name(), s, p)
							}
							continue
						}
						aw, ok := arcWeightOf(g, p, v)
						if !g.Weighted {
							aw = 1
						}
						if p < 0 || !ok || want[i*n+int(p)]+aw != wd {
							t.Fatalf("seed %d %s: predecessor %d of %d from %d ends no shortest path (d = %v)", seed, name(), p, v, s, wd)
						}
					}
				}
			}
		}
	}
}

// TestStopAtFullRows runs auto's searches with Request.StopAt (full rows
// of which only the targets' cells must be final: the pipeline's paths to
// some targets) on random graphs of every kind auto searches, every
// source in one block: each target's distance must be the oracle's, and
// walking its predecessors back must reach the source over arcs of the
// graph whose weights sum to that distance.
func TestStopAtFullRows(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	for _, c := range searchShapes {
		for trial := range 6 {
			g := randomSearchGraph(t, seed, rng, c, 300, trial%3 == 0)
			n := g.NumVertices
			stop := make([]graph.VertexID, 1+rng.IntN(4))
			for i := range stop {
				stop[i] = graph.VertexID(rng.IntN(n))
			}
			sources := allSources(n)
			want := oracleRows(t, g, sources, false)
			req := graph.Request{Algorithm: graph.Auto, StopAt: stop, WithPredecessors: true}
			if d := New().Resolve(g, req); !strings.Contains(d, "stops once it has settled every target") {
				t.Fatalf("seed %d: StopAt not honoured: %q", seed, d)
			}
			for ename, eng := range engines() {
				out, err := run(eng, g, req, sources)
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, ename, err)
				}
				got := asFloat(out)
				for i, s := range sources {
					for _, v := range stop {
						wd := want[i*n+int(v)]
						if got[i*n+int(v)] != wd {
							t.Fatalf("seed %d %s %v trial %d (n=%d): d(%d, %d) = %v, want %v", seed, ename, c.kind, trial, n, s, v, got[i*n+int(v)], wd)
						}
						if math.IsInf(wd, 1) {
							continue
						}
						sum, at := 0.0, v
						for steps := 0; at != s; steps++ {
							p := out.Pred[i*n+int(at)]
							aw, ok := arcWeightOf(g, p, at)
							if !g.Weighted {
								aw = 1
							}
							if !ok || steps > n {
								t.Fatalf("seed %d %s %v: the predecessors from %d back to %d break at %d (predecessor %d)", seed, ename, c.kind, v, s, at, p)
							}
							sum, at = sum+aw, p
						}
						if sum != wd {
							t.Fatalf("seed %d %s %v: the path from %d to %d weighs %v, not %v", seed, ename, c.kind, s, v, sum, wd)
						}
					}
				}
			}
		}
	}
}

// searchShape is a kind of random graph for auto's searches: its weights,
// their largest, and the distance type (0: Build's choice).
type searchShape struct {
	kind testgraphs.WeightKind
	maxW int
	dt   graph.DistType
}

// searchShapes give each of auto's searches (breadth-first, Dial, heap;
// another where a graph draws no arc or no weight above 0) its graphs.
var searchShapes = []searchShape{
	{testgraphs.Unweighted, 0, 0},
	{testgraphs.Int, 20, 0},
	{testgraphs.Int, 100000, graph.DistInt64},
	{testgraphs.Float64, 10, 0},
	{testgraphs.Float32, 10, 0},
}

// randomSearchGraph draws a graph of 1+rng.IntN(maxN) vertices of shape
// c, undirected where undirected, with dyadic float weights (exact sums)
// and repeated edges.
func randomSearchGraph(t *testing.T, seed uint64, rng *rand.Rand, c searchShape, maxN int, undirected bool) *graph.CSR {
	t.Helper()
	n := 1 + rng.IntN(maxN)
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
		N: n, M: rng.IntN(4*n + 1), Kind: c.kind, MinWeight: 0, MaxWeight: max(1, c.maxW), Dyadic: true,
		Duplicates: rng.IntN(n/4 + 1),
	})
	g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected, DistType: c.dt})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return g
}
