package plan

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

func seq(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
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

// TestApply checks the settings gpu.Tuning passes (pathctl --tune): each
// key sets its field, and a bad key or value is an error naming the
// setting.
func TestApply(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if err := c.Apply("order=id,leaves=0,mins=false,exactfloats=0,seeds=0.2,seedsmin=0.1,phases=0.5/0.8,sparse=8,step=0.25,oneslot=0,hubrows=64,hubseeds=0.3,hubphases=0.5/0.9,hubpack=0,blockorder=0,scratchmb=2,nearfar=on,nearfarmin=99,nearfarscale=1.5,nearfarown=3"); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Order, want.Leaves, want.Mins, want.ExactFloats = OrderID, false, false, false
	want.Seeds, want.SeedsOnMeshes, want.SeedsMinShare, want.Phases, want.PhasesWeighted = 0.2, true, 0.1, []float64{0.5, 0.8}, []float64{0.5, 0.8}
	want.Sparse, want.DeltaScale, want.StepMeshesOnly, want.OneSlotStats, want.HubRows = 8, 0.25, false, false, 64
	want.ScratchBytes, want.BlockOrder = 2<<20, false
	want.HubSeeds, want.HubPhases, want.HubPack = 0.3, []float64{0.5, 0.9}, false
	want.NearFarMode, want.NearFarMinVertices, want.NearFarScale, want.NearFarOwn = NearFarOn, 99, 1.5, 3
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Apply: %+v, want %+v", c, want)
	}
	for spec, msg := range map[string]string{
		"order=random":               `unknown source order "random"`,
		"relabel=bfs":                `unknown key "relabel"`,
		"relabelmin=0":               `unknown key "relabelmin"`,
		"colour=red":                 `unknown key "colour"`,
		"sparse=x":                   `setting "sparse=x"`,
		"leaves":                     "not key=value",
		"seedsmin=2":                 `setting "seedsmin=2": seeds minimum share 2`,
		"seeds=0.1,sparse=99,mins=0": `setting "sparse=99": sparse expansions of up to 99 sources`,
		"slicemb=1":                  `unknown key "slicemb"`,
		"order=block,x=":             `unknown key "x"`,
		"oneslot=maybe":              `setting "oneslot=maybe"`,
		"hubpack=2":                  `setting "hubpack=2"`,
		"hubrows=-2":                 "-2 hub rows",
		"hubseeds=1.5":               "hub seeds share 1.5",
		"hubphases=0.5/2":            "hub phase share 2",
		"scratchmb=-1":               "scratch of -1048576 bytes",
		"nearfar=maybe":              `unknown near-far mode "maybe"`,
		"nearfarmin=-2":              "near-far rounds from -2 vertices",
		"nearfarscale=-1":            "near-far bucket scale -1",
		"nearfarscale=x":             `setting "nearfarscale=x"`,
		"nearfarown=-1":              "near-far expansions of up to -1 relaxations",
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
	if err := c.Apply("order=block"); err != nil || c.Order != OrderBlock {
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
