package cpu

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestNearestSelectedInSearch checks the k nearest that auto's searches
// select (SelectNearest) against a selection made here from the oracle's
// full rows (other vertices than the source, among the targets where
// there are some, within the cutoff, by distance then vertex, Infinity and
// -1 past those reached), on random graphs of every kind auto searches
// (breadth-first, Dial, heap), every source in one block so that each
// worker's row goes from one search to the next, on every engine
// configuration.
func TestNearestSelectedInSearch(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 37))
	for _, c := range searchShapes {
		for trial := range 8 {
			if c.kind == testgraphs.Int && c.dt == 0 {
				c.maxW = 6 // few weights: ties at the k-th
			}
			g := randomSearchGraph(t, seed, rng, c, 200, trial%3 == 0)
			n := g.NumVertices
			k := 1 + rng.IntN(6)
			req := graph.Request{Algorithm: graph.Auto}
			var isTarget []bool
			if trial%2 == 1 {
				isTarget = make([]bool, n)
				for range 1 + rng.IntN(8) {
					v := graph.VertexID(rng.IntN(n))
					if !isTarget[v] { // the pipeline gives distinct targets for the k nearest
						isTarget[v] = true
						req.Targets = append(req.Targets, v)
					}
				}
			}
			cut := math.Inf(1)
			if trial%4 >= 2 {
				cut = float64(rng.IntN(4 * max(1, c.maxW)))
				req.Cutoff, req.HasCutoff = cut, true
			}
			sources := allSources(n)
			want := oracleRows(t, g, sources, false)
			for ename, eng := range engines() {
				name := ename + " " + c.kind.String()
				r, err := eng.Prepare(t.Context(), g, req)
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, name, err)
				}
				if !r.(interface{ SelectNearest(int) bool }).SelectNearest(k) {
					t.Fatalf("seed %d %s: the runner does not select the k nearest", seed, name)
				}
				if d := r.(interface{ Describe() string }).Describe(); !strings.Contains(d, "holds the k nearest") {
					t.Fatalf("seed %d %s: runner %q", seed, name, d)
				}
				out := graph.NewBlock(sources, k, r.DistType(), false)
				out.NumVertices, out.CellTargets = n, make([]graph.VertexID, n*k)
				if err := r.Run(t.Context(), out); err != nil {
					t.Fatalf("seed %d %s: %v", seed, name, err)
				}
				r.Close()
				got := asFloat(out)
				for i, s := range sources {
					type cand struct {
						d float64
						v graph.VertexID
					}
					var cands []cand
					for v := range n {
						d := want[i*n+v]
						if graph.VertexID(v) != s && d <= cut && !math.IsInf(d, 1) && (isTarget == nil || isTarget[v]) {
							cands = append(cands, cand{d, graph.VertexID(v)})
						}
					}
					slices.SortFunc(cands, func(a, b cand) int {
						if x := cmp.Compare(a.d, b.d); x != 0 {
							return x
						}
						return cmp.Compare(a.v, b.v)
					})
					for j := range k {
						wd, wv := math.Inf(1), graph.VertexID(-1)
						if j < len(cands) {
							wd, wv = cands[j].d, cands[j].v
						}
						if got[i*k+j] != wd || out.CellTargets[i*k+j] != wv {
							t.Fatalf("seed %d %s trial %d (n=%d, k=%d, cut %v, targets %v): source %d's nearest #%d is %d at %v, want %d at %v",
								seed, name, trial, n, k, cut, req.Targets, s, j+1, out.CellTargets[i*k+j], got[i*k+j], wv, wd)
						}
					}
				}
			}
		}
	}
}

// TestNearestSelectionDeclined checks that the runner leaves the k
// nearest to the host where its searches cannot select them: another
// algorithm, predecessors, negative weights.
func TestNearestSelectionDeclined(t *testing.T) {
	for _, c := range []struct {
		graph string
		req   graph.Request
	}{
		{"ties", graph.Request{Algorithm: graph.Dijkstra}},
		{"ties", graph.Request{Algorithm: graph.Auto, WithPredecessors: true}},
		{"negative-weights", graph.Request{Algorithm: graph.Auto}},
	} {
		tc, err := testgraphs.Find(c.graph)
		if err != nil {
			t.Fatal(err)
		}
		g, err := tc.CSR()
		if err != nil {
			t.Fatal(err)
		}
		r, err := New().Prepare(t.Context(), g, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if r.(interface{ SelectNearest(int) bool }).SelectNearest(2) {
			t.Errorf("%s %+v: the runner selects the k nearest", c.graph, c.req)
		}
		r.Close()
	}
}
