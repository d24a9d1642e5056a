package plan

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// TestRelabellingPreservesDistances checks every relabelling on the plan's
// graphs (undirected R-MAT, directed R-MAT with unreachable parts, a grid)
// and on a float-weighted one: perm is a permutation, the permuted graph is
// a valid CSR (rows sorted, weights with their arcs), and Dijkstra on it
// from perm[s] gives at perm[t] the original distance from s to t.
func TestRelabellingPreservesDistances(t *testing.T) {
	t.Parallel()
	graphs := planGraphs(t)
	el, err := gen.RMAT(8, 4, 9, gen.WithFloatWeights(0.1, 10))
	graphs["float"] = undirectedGraph(t, el, err)
	for name, g := range graphs {
		for _, kind := range []Relabel{RelabelBFS, RelabelDegree, RelabelHubs, RelabelRCM} {
			t.Run(fmt.Sprintf("%s/%s", name, kind), func(t *testing.T) {
				t.Parallel()
				n := g.NumVertices
				perm := Relabelling(g, kind, nil)
				if !slices.Equal(sorted(perm), seq(n)) {
					t.Fatalf("relabelling %s is not a permutation of %d vertices", kind, n)
				}
				pg := Permute(g, perm)
				if pg.NumEdges() != g.NumEdges() || pg.NumVertices != n || pg.Type != g.Type || pg.Undirected != g.Undirected {
					t.Fatalf("permuted graph: %d vertices, %d arcs, want %d, %d", pg.NumVertices, pg.NumEdges(), n, g.NumEdges())
				}
				for v := range n {
					row := pg.Targets[pg.Offsets[perm[v]]:pg.Offsets[perm[v]+1]]
					if !slices.IsSorted(row) || len(row) != g.OutDegree(graph.VertexID(v)) {
						t.Fatalf("row of %d (now %d) unsorted or of the wrong length", v, perm[v])
					}
					for e := g.Offsets[v]; e < g.Offsets[v+1]; e++ {
						j, ok := slices.BinarySearch(row, perm[g.Targets[e]])
						if !ok || pg.WeightAt(pg.Offsets[perm[v]]+int64(j)) != g.WeightAt(e) {
							t.Fatalf("arc %d→%d lost or its weight moved", v, g.Targets[e])
						}
					}
				}
				for _, s := range []int32{0, int32(n / 2), int32(n - 1)} {
					want := dists(t, g, s)
					got := dists(t, pg, perm[s])
					for v := range n {
						if got[perm[v]] != want[v] {
							t.Fatalf("d(%d, %d) = %v on the relabelled graph, want %v", s, v, got[perm[v]], want[v])
						}
					}
				}
			})
		}
	}
	if Relabelling(graphs["grid"], RelabelNone, nil) != nil {
		t.Errorf("RelabelNone gave a permutation")
	}
}

// dists is ref.Dijkstra of g's own distance type, as float64s.
func dists(t *testing.T, g *graph.CSR, s int32) []float64 {
	t.Helper()
	var out []float64
	switch g.Type {
	case graph.DistInt32:
		d, err := ref.Dijkstra[int32](g, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range d {
			out = append(out, float64(x))
		}
	default:
		d, err := ref.Dijkstra[float64](g, s)
		if err != nil {
			t.Fatal(err)
		}
		out = d
	}
	return out
}

func seq(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// TestRelabellingOrders checks what each order promises: degree puts the
// out-degrees in falling order, hubs puts every hub before every other
// vertex, and bfs is BFSRank.
func TestRelabellingOrders(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	n := g.NumVertices
	deg := func(perm []int32) []int {
		out := make([]int, n)
		for v, p := range perm {
			out[p] = g.OutDegree(graph.VertexID(v))
		}
		return out
	}
	if d := deg(Relabelling(g, RelabelDegree, nil)); !slices.IsSortedFunc(d, func(a, b int) int { return b - a }) {
		t.Errorf("degree order: out-degrees %v... do not fall", d[:min(20, n)])
	}
	d := deg(Relabelling(g, RelabelHubs, nil))
	mean := float64(g.NumEdges()) / float64(n)
	hubs := 0
	for hubs < n && float64(d[hubs]) >= relabelHubFactor*mean {
		hubs++
	}
	if hubs == 0 || hubs == n {
		t.Fatalf("%d hubs of %d vertices: the test graph does not exercise the order", hubs, n)
	}
	for i := hubs; i < n; i++ {
		if float64(d[i]) >= relabelHubFactor*mean {
			t.Fatalf("hub of degree %d at %d, after the first non-hub at %d", d[i], i, hubs)
		}
	}
	if !slices.Equal(Relabelling(g, RelabelBFS, nil), BFSRank(g)) {
		t.Errorf("bfs relabelling differs from BFSRank")
	}
}

// TestExactSums checks ExactSumsOf: integer-valued and dyadic float
// weights qualify while every sum of n weights fits the type's mantissa;
// weights like 0.1, sums past 2^24 in float32, and integer graphs do not.
func TestExactSums(t *testing.T) {
	t.Parallel()
	mk := func(typ graph.DistType, n int, w ...float64) *graph.CSR {
		g := &graph.CSR{NumVertices: n, Type: typ, Weighted: true, Offsets: make([]int64, n+1)}
		for i := range w {
			g.Targets = append(g.Targets, int32((i+1)%n))
		}
		for i := 1; i <= n; i++ {
			g.Offsets[i] = min(int64(i), int64(len(w)))
		}
		g.Offsets[n] = int64(len(w))
		switch typ {
		case graph.DistFloat32:
			ws := make([]float32, len(w))
			for i, x := range w {
				ws[i] = float32(x)
			}
			g.Weights = ws
		case graph.DistFloat64:
			g.Weights = slices.Clone(w)
		default:
			ws := make([]int32, len(w))
			for i, x := range w {
				ws[i] = int32(x)
			}
			g.Weights = ws
		}
		return g
	}
	for _, c := range []struct {
		name string
		g    *graph.CSR
		want bool
	}{
		{"float32 integers", mk(graph.DistFloat32, 1000, 1, 2, 100, 0), true},
		{"float64 dyadic", mk(graph.DistFloat64, 1000, 0.5, 0.25, 3.75), true},
		{"float32 tenths", mk(graph.DistFloat32, 10, 0.1, 1), false},
		{"float64 tenths", mk(graph.DistFloat64, 10, 0.1, 1), false},
		{"float32 past 2^24", mk(graph.DistFloat32, 200000, 100, 1), false},
		{"float64 large", mk(graph.DistFloat64, 200000, 100, 1), true},
		{"float64 tiny fraction", mk(graph.DistFloat64, 1000, math.Ldexp(1, -60), 1), false},
		{"int32", mk(graph.DistInt32, 10, 1, 2), false},
	} {
		if got := ExactSumsOf(c.g); got != c.want {
			t.Errorf("%s: ExactSums = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestExactFloatsPlanAsIntegers checks that a float graph with exact sums
// is planned exactly as the same graph with integer weights (leaves,
// minimums, phases: the derivations TestPlanDerivesEveryRow checks), and
// with ExactFloats off, or fractional weights, derives nothing.
func TestExactFloatsPlanAsIntegers(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	for _, typ := range []graph.DistType{graph.DistFloat32, graph.DistFloat64} {
		fg := *g
		iw := graph.WeightsOf[int32](g)
		switch typ {
		case graph.DistFloat32:
			w := make([]float32, len(iw))
			for i, x := range iw {
				w[i] = float32(x)
			}
			fg.Weights = w
		default:
			w := make([]float64, len(iw))
			for i, x := range iw {
				w[i] = float64(x)
			}
			fg.Weights = w
		}
		fg.Type = typ
		all := seq(g.NumVertices)
		want, err := Plan(g, all, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Plan(&fg, all, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Derive) == 0 || len(want.Mins) == 0 || len(want.Cuts) == 0 {
			t.Fatalf("the integer plan derives nothing: the test graph does not exercise it")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s with integer values: plan differs from the integer graph's", typ)
		}
		off := DefaultConfig()
		off.ExactFloats = false
		if p, err := Plan(&fg, all, off); err != nil || len(p.Derive)+len(p.Mins)+len(p.Cuts) != 0 {
			t.Errorf("%s, ExactFloats off: %v, or derivations planned", typ, err)
		}
	}
}

// TestApply checks the settings PATHCTL_BATCHED passes: each key sets its
// field, and a bad key or value is an error naming it.
func TestApply(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if err := c.Apply("relabel=hubs,relabelmin=7, order=id,leaves=0,mins=false,exactfloats=0,seeds=0.2,seedsmin=0.1,phases=0.5/0.8,sparse=8,slicemb=1.5,step=0.25,oneslot=0,hubrows=64,hubseeds=0.3,hubphases=0.5/0.9,hubpack=0,blockorder=0,scratchmb=2,nearfar=on,nearfarmin=99,nearfarscale=1.5,nearfarown=3"); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Relabel, want.RelabelMinSources, want.Order, want.Leaves, want.Mins, want.ExactFloats = RelabelHubs, 7, OrderID, false, false, false
	want.Seeds, want.SeedsOnMeshes, want.SeedsMinShare, want.Phases, want.PhasesWeighted = 0.2, true, 0.1, []float64{0.5, 0.8}, []float64{0.5, 0.8}
	want.Sparse, want.SliceBytes, want.DeltaScale, want.StepMeshesOnly, want.OneSlotStats, want.HubRows = 8, 3<<19, 0.25, false, false, 64
	want.ScratchBytes, want.BlockOrder = 2<<20, false
	want.HubSeeds, want.HubPhases, want.HubPack = 0.3, []float64{0.5, 0.9}, false
	want.NearFarMode, want.NearFarMinVertices, want.NearFarScale, want.NearFarOwn = NearFarOn, 99, 1.5, 3
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Apply: %+v, want %+v", c, want)
	}
	for spec, msg := range map[string]string{
		"relabel=random":  `unknown relabelling "random"`,
		"colour=red":      `unknown key "colour"`,
		"sparse=x":        `setting "sparse=x"`,
		"relabel":         "not key=value",
		"relabelmin=-1":   "relabelling from -1 sources",
		"seedsmin=2":      "seeds minimum share 2",
		"slicemb=-1":      "slices of -1048576 bytes",
		"order=block,x=":  `unknown key "x"`,
		"oneslot=maybe":   `setting "oneslot=maybe"`,
		"hubpack=2":       `setting "hubpack=2"`,
		"hubrows=-2":      "-2 hub rows",
		"hubseeds=1.5":    "hub seeds share 1.5",
		"hubphases=0.5/2": "hub phase share 2",
		"scratchmb=-1":    "scratch of -1048576 bytes",
		"nearfar=maybe":   `unknown near-far mode "maybe"`,
		"nearfarmin=-2":   "near-far rounds from -2 vertices",
		"nearfarscale=-1": "near-far bucket scale -1",
		"nearfarscale=x":  `setting "nearfarscale=x"`,
		"nearfarown=-1":   "near-far expansions of up to -1 relaxations",
	} {
		c := DefaultConfig()
		if err := c.Apply(spec); err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "plan: ") {
			t.Errorf("Apply(%q) = %v, want an error naming %s", spec, err, msg)
		}
	}
	c = DefaultConfig()
	if err := c.Apply(""); err != nil || !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("Apply of nothing changed the configuration or failed: %v", err)
	}
	c = DefaultConfig()
	if err := c.Apply("relabel=none,order=block"); err != nil || c.Relabel != RelabelNone || c.Order != OrderBlock {
		t.Errorf("none and block: %v, %+v", err, c)
	}
	for spec, mode := range map[string]NearFarMode{"nearfar=auto": NearFarAuto, "nearfar=off": NearFarOff, "nearfar=on": NearFarOn} {
		c = DefaultConfig()
		if err := c.Apply(spec); err != nil || c.NearFarMode != mode {
			t.Errorf("%s: %v, mode %q", spec, err, c.NearFarMode)
		}
	}
}

// TestOrderID checks that OrderID groups the kernel sources by vertex id.
func TestOrderID(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["grid"]
	n := g.NumVertices
	src := seq(n)
	slices.Reverse(src)
	cfg := DefaultConfig()
	cfg.Order, cfg.Leaves, cfg.Mins = OrderID, false, false
	p, err := Plan(g, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Sources, seq(n)) {
		t.Errorf("order id: sources %v..., want rising ids", p.Sources[:10])
	}
	for i, s := range p.Sources {
		if src[p.Rows[i]] != s {
			t.Fatalf("source %d planned into row %d, which holds %d", s, p.Rows[i], src[p.Rows[i]])
		}
	}
}

// TestRelabelledPlanMapsBack checks the composition the GPU runner makes
// (gpu/relabel.go): a block planned on the permuted graph (its shape and
// rank carried over by Renumbered) for the renumbered sources, its rows computed there (applyPlan: Dijkstra for the
// kernel, then the derivations), and every row's column j read at perm[j],
// gives every block row its source's distances on the original graph.
func TestRelabelledPlanMapsBack(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		for _, kind := range []Relabel{RelabelBFS, RelabelHubs, RelabelRCM} {
			t.Run(fmt.Sprintf("%s/%s", name, kind), func(t *testing.T) {
				t.Parallel()
				n := g.NumVertices
				perm := Relabelling(g, kind, nil)
				pg := Permute(g, perm)
				src := seq(n)
				slices.Reverse(src)
				mapped := make([]int32, n)
				for i, s := range src {
					mapped[i] = perm[s]
				}
				cfg := DefaultConfig()
				cfg.Order = OrderID
				if kind == RelabelHubs {
					cfg.Order = OrderCluster
				}
				renum := NewGraph(g).Renumbered(pg, perm)
				if renum.Shape() != ShapeOf(pg) {
					t.Fatalf("renumbered shape %+v, want %+v", renum.Shape(), ShapeOf(pg))
				}
				if !slices.Equal(sorted(renum.Rank()), seq(n)) {
					t.Fatalf("renumbered rank is not a permutation")
				}
				p, err := renum.Plan(mapped, cfg)
				if err != nil {
					t.Fatal(err)
				}
				rows := applyPlan(t, pg, n, p)
				for i, s := range src {
					want, err := ref.Dijkstra[int32](g, s)
					if err != nil {
						t.Fatal(err)
					}
					for j := range n {
						if got := rows[i][perm[j]]; got != want[j] {
							t.Fatalf("row %d (source %d): column %d = %d, want %d", i, s, j, got, want[j])
						}
					}
				}
			})
		}
	}
}

// TestSeedsMinShare checks that a block below SeedsMinShare of the
// vertices runs one phase and one above it several.
func TestSeedsMinShare(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	part := seq(g.NumVertices * 2 / 5)
	cfg := DefaultConfig()
	cfg.SeedsMinShare = 0.5
	if p, err := Plan(g, part, cfg); err != nil || len(p.Cuts) != 0 {
		t.Fatalf("a block of 40 %% of the vertices, SeedsMinShare 0.5: %v, phase ends %v; want one phase", err, p.Cuts)
	}
	cfg.SeedsMinShare = 0.3
	if p, err := Plan(g, part, cfg); err != nil || len(p.Cuts) == 0 {
		t.Fatalf("a block of 40 %% of the vertices, SeedsMinShare 0.3: %v, one phase", err)
	}
}
