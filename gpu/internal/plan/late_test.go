package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// TestSplitLate splits plans beside resident rows (StartResident) around
// a random set of late resident rows and runs them as the runner does:
// the early part with the late rows still holding zeros (rows that have
// not landed), then the late rows filled, then the rest. Every block row
// must equal its source's Dijkstra row, each list must keep its items,
// and on the R-MAT graph some work must run early and some late. Exactly
// the plans whose kernel of more than lateKernelMaxSources sources reads
// a late row must be left unsplit.
func TestSplitLate(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		n := g.NumVertices
		pg := NewGraph(g)
		hubs := pg.Hubs(n / 8)
		phases := DefaultConfig()
		phases.Seeds, phases.SeedsOnMeshes, phases.SeedsMinShare, phases.Phases, phases.PhasesWeighted = 0.2, true, 0, []float64{0.6}, []float64{0.6}
		seed := uint64(len(name))
		t.Logf("%s: seed %d", name, seed)
		rng := rand.New(rand.NewPCG(seed, 7))
		sawEarly, sawLate := false, false
		for _, k := range []int{n / 4, 150} {
			src := make([]int32, k)
			for i, v := range rng.Perm(n)[:k] {
				src[i] = int32(v)
			}
			src[0] = hubs[0]
			for cname, cfg := range map[string]Config{"default": DefaultConfig(), "phases": phases} {
				for _, share := range []float64{0, 0.3, 1} {
					what := fmt.Sprintf("%s/%s k=%d late=%v", name, cname, k, share)
					res := Resident{Vertices: hubs, FirstRow: int32(k) + 2}
					plan, finish, err := pg.StartResident(src, cfg, math.Inf(1), res)
					if err != nil {
						t.Fatal(err)
					}
					if finish != nil {
						finish()
					}
					lateHub := make([]bool, len(hubs))
					for i := range lateHub {
						lateHub[i] = rng.Float64() < share
					}
					late := func(row int32) bool {
						i := row - res.FirstRow
						return i >= 0 && int(i) < len(hubs) && lateHub[i]
					}
					lateSeed := false
					for _, sd := range plan.Seeds {
						for _, a := range plan.MinArcs[sd.First : sd.First+sd.Count] {
							lateSeed = lateSeed || late(a.Row)
						}
					}
					before := []int{len(plan.Copies), len(plan.Mins), len(plan.Derive), plan.Passes[0], plan.Passes[1]}
					plan.SplitLate(late)
					e := plan.Early
					if unsplit := lateSeed && len(plan.Sources) > lateKernelMaxSources; unsplit != (e == nil) {
						t.Fatalf("%s: split %v, with %d kernel sources (a late seed: %v)", what, e != nil, len(plan.Sources), lateSeed)
					}
					if e == nil {
						continue
					}
					if e.KernelLate != lateSeed {
						t.Fatalf("%s: kernel late %v, a late seed %v", what, e.KernelLate, lateSeed)
					}
					if after := []int{len(plan.Copies), len(plan.Mins), len(plan.Derive), plan.Passes[0], plan.Passes[1]}; !slices.Equal(before, after) {
						t.Fatalf("%s: lists %v became %v", what, before, after)
					}
					if share == 0 && (e.Copies != len(plan.Copies) || e.Mins != len(plan.Mins) || e.Passes[0] != plan.Passes[0]) {
						t.Fatalf("%s: nothing late, yet split %+v", what, *e)
					}
					sawEarly = sawEarly || share > 0 && share < 1 && e.Copies+e.Mins+e.Passes[0] > 0
					sawLate = sawLate || share > 0 && share < 1 && e.Copies+e.Mins+e.Passes[0] < len(plan.Copies)+len(plan.Mins)+plan.Passes[0]
					sameAsDijkstra(t, g, runSplit(t, g, k, plan, res, late), src, what)
				}
			}
		}
		if name == "rmat" && (!sawEarly || !sawLate) {
			t.Errorf("%s: work early %v, late %v; want both", name, sawEarly, sawLate)
		}
	}
}

// runSplit computes a block of k rows as the runner does under a plan
// split by SplitLate (Dijkstra standing in for the kernel's first phase,
// the seeds corrected as a later phase corrects them): the resident rows
// late reports hold zeros until the early part has run.
func runSplit(t *testing.T, g *graph.CSR, k int, plan *Block, res Resident, late func(int32) bool) [][]int32 {
	t.Helper()
	n := g.NumVertices
	weights := graph.WeightsOf[int32](g)
	inf := graph.Infinity[int32]()
	dijkstra := func(s int32) []int32 {
		d, err := ref.Dijkstra[int32](g, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	rows := make([][]int32, int(res.FirstRow)+len(res.Vertices))
	for i, v := range res.Vertices {
		row := res.FirstRow + int32(i)
		if rows[row] = dijkstra(v); late(row) {
			rows[row] = make([]int32, n)
		}
	}
	minOver := func(arcs []MinArc, v int) int32 {
		best := int64(inf)
		for _, a := range arcs {
			if d := rows[a.Row][v]; d != inf {
				best = min(best, int64(d)+int64(weights[a.Arc]))
			}
		}
		return int32(min(best, int64(inf)))
	}
	kernel := func() {
		seeded := len(plan.Sources)
		switch {
		case plan.SeedFirst:
			seeded = 0
		case len(plan.Cuts) > 0:
			seeded = plan.Cuts[0]
		}
		for i, s := range plan.Sources {
			if i < seeded {
				rows[plan.Rows[i]] = dijkstra(s)
				continue
			}
			sd := plan.Seeds[i-seeded]
			d := make([]int32, n)
			for v := range d {
				d[v] = minOver(plan.MinArcs[sd.First:sd.First+sd.Count], v)
			}
			correctWithin(g, s, d, inf)
			rows[plan.Rows[i]] = d
		}
	}
	mins := func(ms []MinDerivation) {
		for _, m := range ms {
			out := make([]int32, n)
			for v := range out {
				out[v] = minOver(plan.MinArcs[m.First:m.First+m.Count], v)
			}
			out[m.Source] = 0
			rows[m.Dst] = out
		}
	}
	leaves := func(ds []Derivation) {
		for _, d := range ds {
			from := rows[d.Src]
			out := make([]int32, n)
			for v := range out {
				if out[v] = from[v]; from[v] != inf {
					out[v] += weights[d.Arc]
				}
			}
			out[d.Leaf] = 0
			rows[d.Dst] = out
		}
	}
	copies := func(cs []Copy) {
		for _, c := range cs {
			rows[c.Dst] = slices.Clone(rows[c.Src])
		}
	}
	e := plan.Early
	if !e.KernelLate {
		kernel()
	}
	copies(plan.Copies[:e.Copies])
	mins(plan.Mins[:e.Mins])
	leaves(plan.Derive[:e.Passes[0]])
	for i, v := range res.Vertices { // the late rows land
		if row := res.FirstRow + int32(i); late(row) {
			rows[row] = dijkstra(v)
		}
	}
	if e.KernelLate {
		kernel()
	}
	copies(plan.Copies[e.Copies:])
	mins(plan.Mins[e.Mins:])
	leaves(plan.Derive[e.Passes[0]:plan.Passes[0]])
	leaves(plan.Derive[plan.Passes[0]:])
	return rows[:k]
}
