package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// TestRoundsWithin checks the round bound's cases, and that it bounds the
// rounds of the slowest schedule the kernel may follow: synchronous rounds
// (every round relaxes the arcs of the vertices the round before changed,
// from their values at the round's start; the device reads values at
// least as new), relaxing nothing past the cutoff, on the plan's graphs of
// integer weights from 1, for several cutoffs and sources. The last round
// that changes a distance must come no later than RoundsWithin − 1.
func TestRoundsWithin(t *testing.T) {
	t.Parallel()
	graphs := planGraphs(t)
	rmat, directed := graphs["rmat"], graphs["directed"]
	for _, c := range []struct {
		g    *graph.CSR
		cut  float64
		want int
	}{
		{rmat, 0, 1}, {rmat, 6, 7}, {rmat, 6.9, 7}, {rmat, math.Inf(1), 0}, {rmat, math.NaN(), 0}, {rmat, 1e12, 0},
		{directed, 6, 0}, // zero weights: no bound
	} {
		if got := RoundsWithin(c.g, c.cut); got != c.want {
			t.Errorf("RoundsWithin(min weight %v, %v) = %d, want %d", c.g.MinWeight, c.cut, got, c.want)
		}
	}
	el, err := gen.RMAT(9, 4, 5, gen.WithFloatWeights(1, 9))
	if g := undirectedGraph(t, el, err); RoundsWithin(g, 6) != 0 {
		t.Errorf("float weights: a bound of %d rounds, want none", RoundsWithin(g, 6))
	}
	el, err = gen.RMAT(9, 4, 5, gen.WithWeights(3, 9))
	heavy := undirectedGraph(t, el, err)
	if got := RoundsWithin(heavy, 10); got != 4 {
		t.Errorf("RoundsWithin(min weight 3, 10) = %d, want 4", got)
	}
	for name, g := range map[string]*graph.CSR{"rmat": rmat, "grid": graphs["grid"], "heavy": heavy} {
		for _, cut := range []float64{0, 4, 9, 25, 60} {
			bound := RoundsWithin(g, cut)
			for s := int32(0); int(s) < g.NumVertices; s += 37 {
				if last := lastChangingRound(g, s, int32(cut)); last > bound-1 {
					t.Fatalf("%s, source %d, cutoff %v: a distance changed in round %d, past the bound of %d rounds", name, s, cut, last, bound)
				}
			}
		}
	}
}

// lastChangingRound runs synchronous label correcting from s relaxing
// nothing past cut and returns the last round that changed a distance
// (round 1 expands s).
func lastChangingRound(g *graph.CSR, s, cut int32) int {
	w := graph.WeightsOf[int32](g)
	d := make([]int32, g.NumVertices)
	for i := range d {
		d[i] = graph.Infinity[int32]()
	}
	d[s] = 0
	frontier, last := []int32{s}, 0
	for round := 1; len(frontier) > 0; round++ {
		start := slices.Clone(d)
		changed := map[int32]bool{}
		for _, u := range frontier {
			for e := g.Offsets[u]; e < g.Offsets[u+1]; e++ {
				if nd := start[u] + w[e]; nd <= cut && nd < d[g.Targets[e]] {
					d[g.Targets[e]] = nd
					changed[g.Targets[e]] = true
				}
			}
		}
		frontier = frontier[:0]
		for v := range changed {
			frontier = append(frontier, v)
		}
		if len(changed) > 0 {
			last = round
		}
	}
	return last
}

// TestStartWithinCutoff checks the plan's reductions under a cutoff on
// the undirected R-MAT graph, one block of every vertex: a cutoff whose
// balls are small (0, and the graph's smallest weight) plans without
// minimums and in one phase, leaves kept; a cutoff past every distance,
// none, or CutoffReach 0 plans as without a cutoff; every plan still
// derives every row (applyPlanWithin against Dijkstra clipped); a
// negative or NaN cutoff is refused.
func TestStartWithinCutoff(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	n := g.NumVertices
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	pg := NewGraph(g)
	full, err := pg.Plan(all, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Mins) == 0 || len(full.Cuts) == 0 || len(full.Derive) == 0 {
		t.Fatalf("without a cutoff: %d minimums, phase ends %v, %d leaves; the graph does not exercise the plan", len(full.Mins), full.Cuts, len(full.Derive))
	}
	noReach := DefaultConfig()
	noReach.CutoffReach = 0
	for _, c := range []struct {
		cut   float64
		cfg   Config
		small bool
	}{
		{0, DefaultConfig(), true}, {g.MinWeight, DefaultConfig(), true}, {1e9, DefaultConfig(), false},
		{math.Inf(1), DefaultConfig(), false}, {0, noReach, false},
	} {
		t.Run(fmt.Sprintf("cutoff=%v/reach=%v", c.cut, c.cfg.CutoffReach), func(t *testing.T) {
			p, finish, err := pg.StartWithin(all, c.cfg, c.cut)
			if err != nil {
				t.Fatal(err)
			}
			if finish != nil {
				finish()
			}
			if c.small && (len(p.Mins) != 0 || len(p.Cuts) != 0 || len(p.Derive) != len(full.Derive)) {
				t.Errorf("small balls: %d minimums, phase ends %v, %d leaves; want none, one phase, %d leaves", len(p.Mins), p.Cuts, len(p.Derive), len(full.Derive))
			}
			if !c.small && (len(p.Mins) != len(full.Mins) || !slices.Equal(p.Cuts, full.Cuts)) {
				t.Errorf("large balls: %d minimums, phase ends %v; want the plan without a cutoff's %d, %v", len(p.Mins), p.Cuts, len(full.Mins), full.Cuts)
			}
			cut := graph.Infinity[int32]()
			if c.cut < float64(cut) {
				cut = int32(c.cut)
			}
			rows := applyPlanWithin(t, g, n, p, cut, Resident{})
			for i, s := range all {
				want, err := ref.Dijkstra[int32](g, s)
				if err != nil {
					t.Fatal(err)
				}
				for v, d := range want {
					if d > cut {
						want[v] = graph.Infinity[int32]()
					}
				}
				if !slices.Equal(rows[i], want) {
					t.Fatalf("row %d differs from Dijkstra clipped at %v", i, c.cut)
				}
			}
		})
	}
	for _, bad := range []float64{-1, math.NaN()} {
		if _, _, err := pg.StartWithin(all, DefaultConfig(), bad); err == nil || !strings.HasPrefix(err.Error(), "plan: cutoff") {
			t.Errorf("cutoff %v: err = %v, want one naming the cutoff", bad, err)
		}
	}
}

// TestBallSize checks the bounded search against Dijkstra: the count of
// vertices within the cutoff, or the limit where there are more.
func TestBallSize(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		for _, s := range []int32{0, int32(g.NumVertices / 2)} {
			want, err := ref.Dijkstra[int32](g, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, cut := range []int32{0, 3, 10, 40} {
				within := 0
				for _, d := range want {
					if d <= cut {
						within++
					}
				}
				for _, limit := range []int{1, within, within + 1, g.NumVertices} {
					if got, exp := ballSize(g, s, float64(cut), limit), min(within, limit); got != exp {
						t.Errorf("%s, source %d, cutoff %d, limit %d: ball of %d, want %d", name, s, cut, limit, got, exp)
					}
				}
			}
		}
	}
}

// TestArcsByWeight checks the arcs the cutoff rounds walk: every row holds
// the CSR row's arcs (target and weight together), in rising weight, ties
// by target, for integer and float weights, and a second call returns the
// same arrays.
func TestArcsByWeight(t *testing.T) {
	t.Parallel()
	graphs := planGraphs(t)
	el, err := gen.RMAT(9, 4, 5, gen.WithFloatWeights(0.5, 9))
	graphs["float"] = undirectedGraph(t, el, err)
	for name, g := range graphs {
		pg := NewGraph(g)
		targets, weights := pg.ArcsByWeight()
		if len(targets) != len(g.Targets) {
			t.Fatalf("%s: %d targets, want %d", name, len(targets), len(g.Targets))
		}
		if again, _ := pg.ArcsByWeight(); len(again) > 0 && &again[0] != &targets[0] {
			t.Errorf("%s: a second call sorted the arcs again", name)
		}
		sorted := &graph.CSR{NumVertices: g.NumVertices, Offsets: g.Offsets, Targets: targets, Weights: weights, Type: g.Type}
		for u := range g.NumVertices {
			type arc struct {
				t int32
				w float64
			}
			var want, got []arc
			for e := g.Offsets[u]; e < g.Offsets[u+1]; e++ {
				want = append(want, arc{g.Targets[e], g.WeightAt(e)})
				got = append(got, arc{sorted.Targets[e], sorted.WeightAt(e)})
			}
			for i := 1; i < len(got); i++ {
				if got[i].w < got[i-1].w || (got[i].w == got[i-1].w && got[i].t <= got[i-1].t) {
					t.Fatalf("%s: row %d not in rising (weight, target): %v", name, u, got)
				}
			}
			less := func(a, b arc) int {
				if a.t != b.t {
					return int(a.t - b.t)
				}
				return 0
			}
			slices.SortFunc(want, less)
			slices.SortFunc(got, less)
			if !slices.Equal(want, got) {
				t.Fatalf("%s: row %d holds %v, want the arcs %v", name, u, got, want)
			}
		}
	}
}
