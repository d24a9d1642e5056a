package gen

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// generator is one way of calling a generator, for the tests that hold for
// all of them.
type generator struct {
	name string
	make func(seed uint64, opts ...Option) (*EdgeList, error)
	// arcs and vertices expected without WithUndirectedPairs.
	arcs, vertices int64
}

// Sizes span several chunks so that the parallel split is exercised.
var generators = []generator{
	{"rmat-14-16", func(s uint64, o ...Option) (*EdgeList, error) { return RMAT(14, 16, s, o...) }, 16 << 14, 1 << 14},
	{"grid-300x200", func(s uint64, o ...Option) (*EdgeList, error) { return Grid(300, 200, s, o...) }, 2 * (300*199 + 299*200), 300 * 200},
	{"uniform-50000-4", func(s uint64, o ...Option) (*EdgeList, error) { return Uniform(50000, 4, s, o...) }, 50000 * 4, 50000},
}

func mustGen(t *testing.T, g generator, seed uint64, opts ...Option) *EdgeList {
	t.Helper()
	e, err := g.make(seed, opts...)
	if err != nil {
		t.Fatalf("%s seed %d: %v", g.name, seed, err)
	}
	return e
}

func equalLists(a, b *EdgeList) bool {
	return a.NumVertices == b.NumVertices &&
		slices.Equal(a.Src, b.Src) && slices.Equal(a.Dst, b.Dst) &&
		slices.Equal(a.Weights, b.Weights) && slices.Equal(a.FloatWeights, b.FloatWeights) &&
		(a.Weights == nil) == (b.Weights == nil) && (a.FloatWeights == nil) == (b.FloatWeights == nil)
}

func withProcs(n int, f func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	for _, g := range generators {
		for _, opts := range [][]Option{nil, {WithFloatWeights(0, 1)}} {
			var one, four *EdgeList
			withProcs(1, func() { one = mustGen(t, g, 42, opts...) })
			withProcs(4, func() { four = mustGen(t, g, 42, opts...) })
			if !equalLists(one, four) {
				t.Errorf("%s: GOMAXPROCS 1 and 4 give different graphs for seed 42", g.name)
			}
			again := mustGen(t, g, 42, opts...)
			if !equalLists(one, again) {
				t.Errorf("%s: two runs with seed 42 differ", g.name)
			}
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	for _, g := range generators {
		a, b := mustGen(t, g, 1), mustGen(t, g, 2)
		if equalLists(a, b) {
			t.Errorf("%s: seeds 1 and 2 give the same graph", g.name)
		}
	}
}

func TestSizesAndIDRange(t *testing.T) {
	for _, g := range generators {
		e := mustGen(t, g, 7)
		if e.NumVertices != g.vertices {
			t.Errorf("%s: %d vertices, want %d", g.name, e.NumVertices, g.vertices)
		}
		if int64(e.Len()) != g.arcs || len(e.Dst) != e.Len() || len(e.Weights) != e.Len() {
			t.Errorf("%s: len src/dst/weights %d/%d/%d, want %d", g.name, len(e.Src), len(e.Dst), len(e.Weights), g.arcs)
		}
		if e.FloatWeights != nil {
			t.Errorf("%s: float weights set by default", g.name)
		}
		for i := range e.Src {
			if e.Src[i] < 0 || e.Src[i] >= e.NumVertices || e.Dst[i] < 0 || e.Dst[i] >= e.NumVertices {
				t.Fatalf("%s: arc %d (%d→%d) outside [0, %d)", g.name, i, e.Src[i], e.Dst[i], e.NumVertices)
			}
		}
	}
}

func TestWeightRanges(t *testing.T) {
	cases := []struct {
		name       string
		opt        Option
		lo, hi     float64
		float      bool
		allIntsHit bool
	}{
		{"default", nil, DefaultMinWeight, DefaultMaxWeight, false, true},
		{"narrow", WithWeights(5, 7), 5, 7, false, true},
		{"negative", WithWeights(-3, 2), -3, 2, false, true},
		{"constant", WithWeights(9, 9), 9, 9, false, true},
		{"float-default", WithFloatWeights(DefaultMinFloatWeight, DefaultMaxFloatWeight), 0, 1, true, false},
		{"float-wide", WithFloatWeights(-2.5, 1e6), -2.5, 1e6, true, false},
		{"float-constant", WithFloatWeights(0.25, 0.25), 0.25, 0.25, true, false},
	}
	for _, g := range generators {
		for _, c := range cases {
			e := mustGen(t, g, 3, c.opt)
			if c.float {
				if e.Weights != nil || len(e.FloatWeights) != e.Len() {
					t.Fatalf("%s/%s: want only float weights", g.name, c.name)
				}
				for i, w := range e.FloatWeights {
					if w < c.lo || (w >= c.hi && c.hi > c.lo) || (c.hi == c.lo && w != c.lo) {
						t.Fatalf("%s/%s: weight %d = %g outside [%g, %g)", g.name, c.name, i, w, c.lo, c.hi)
					}
				}
				continue
			}
			if e.FloatWeights != nil || len(e.Weights) != e.Len() {
				t.Fatalf("%s/%s: want only int weights", g.name, c.name)
			}
			seen := map[int64]bool{}
			for i, w := range e.Weights {
				if float64(w) < c.lo || float64(w) > c.hi {
					t.Fatalf("%s/%s: weight %d = %d outside [%g, %g]", g.name, c.name, i, w, c.lo, c.hi)
				}
				seen[w] = true
			}
			if c.allIntsHit && len(seen) != int(c.hi-c.lo)+1 {
				t.Errorf("%s/%s: %d distinct weights, want every one of %g..%g", g.name, c.name, len(seen), c.lo, c.hi)
			}
		}
	}
}

func TestUnweighted(t *testing.T) {
	for _, g := range generators {
		e := mustGen(t, g, 5, Unweighted())
		if e.Weighted() {
			t.Errorf("%s: Unweighted() left a weight column", g.name)
		}
	}
}

// The endpoints come from their own streams: weight options must not move them.
func TestShapeIndependentOfWeights(t *testing.T) {
	for _, g := range generators {
		base := mustGen(t, g, 11)
		for _, opt := range []Option{Unweighted(), WithFloatWeights(0, 1), WithWeights(1, 2)} {
			e := mustGen(t, g, 11, opt)
			if !slices.Equal(base.Src, e.Src) || !slices.Equal(base.Dst, e.Dst) {
				t.Errorf("%s: weight options changed the arcs", g.name)
			}
		}
	}
}

func TestUndirectedPairs(t *testing.T) {
	for _, g := range generators {
		if g.name[:4] == "grid" {
			continue
		}
		directed := mustGen(t, g, 9)
		e := mustGen(t, g, 9, WithUndirectedPairs())
		if e.Len() != 2*directed.Len() {
			t.Fatalf("%s: %d arcs with pairs, want %d", g.name, e.Len(), 2*directed.Len())
		}
		for k := range directed.Len() {
			if e.Src[2*k] != directed.Src[k] || e.Dst[2*k] != directed.Dst[k] ||
				e.Src[2*k+1] != directed.Dst[k] || e.Dst[2*k+1] != directed.Src[k] {
				t.Fatalf("%s: pair %d is (%d→%d, %d→%d), want %d→%d and back", g.name, k,
					e.Src[2*k], e.Dst[2*k], e.Src[2*k+1], e.Dst[2*k+1], directed.Src[k], directed.Dst[k])
			}
			if e.Weights[2*k] != e.Weights[2*k+1] || e.Weights[2*k] != directed.Weights[k] {
				t.Fatalf("%s: pair %d weights %d, %d, want %d", g.name, k, e.Weights[2*k], e.Weights[2*k+1], directed.Weights[k])
			}
		}
	}
}

func degrees(e *EdgeList) (out, in []int) {
	out = make([]int, e.NumVertices)
	in = make([]int, e.NumVertices)
	for i := range e.Src {
		out[e.Src[i]]++
		in[e.Dst[i]]++
	}
	return out, in
}

func TestRMATSkew(t *testing.T) {
	const scale, ef = 14, 16
	e, err := RMAT(scale, ef, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := degrees(e)
	maxDeg := slices.Max(out)
	mean := float64(e.Len()) / float64(e.NumVertices)
	if float64(maxDeg) < 20*mean {
		t.Errorf("max out-degree %d is not ≫ mean %.1f", maxDeg, mean)
	}
	zero := 0
	for _, d := range out {
		if d == 0 {
			zero++
		}
	}
	// A power-law graph leaves many vertices without out-arcs; a uniform
	// graph of mean degree 16 would leave e^-16·n ≈ 0.
	if zero < len(out)/10 {
		t.Errorf("only %d of %d vertices have no out-arcs; R-MAT should leave many", zero, len(out))
	}
}

// Without the permutation, each level's quadrant choice is visible in the
// ids: the top bits of (u, v) are (0,0) with probability a, (0,1) with b,
// (1,0) with c, (1,1) with d. With it, every arc is the same arc relabelled.
func TestRMATQuadrantsAndPermutation(t *testing.T) {
	const scale, ef, seed = 14, 16, 21
	raw, err := RMAT(scale, ef, seed, WithVertexPermutation(false))
	if err != nil {
		t.Fatal(err)
	}
	for level := range scale {
		shift := scale - 1 - level
		var count [4]float64
		for i := range raw.Src {
			q := (raw.Src[i]>>shift&1)<<1 | raw.Dst[i]>>shift&1
			count[q]++
		}
		m := float64(raw.Len())
		want := [4]float64{Graph500A, Graph500B, Graph500C, 1 - Graph500A - Graph500B - Graph500C}
		for q := range count {
			if got := count[q] / m; math.Abs(got-want[q]) > 0.01 {
				t.Errorf("level %d quadrant %d: fraction %.4f, want %.2f", level, q, got, want[q])
			}
		}
	}
	out, _ := degrees(raw)
	if slices.Max(out) != out[0] {
		t.Errorf("unpermuted R-MAT: vertex 0 has degree %d, below the max %d", out[0], slices.Max(out))
	}

	permuted, err := RMAT(scale, ef, seed)
	if err != nil {
		t.Fatal(err)
	}
	scrambler := newIDScrambler(scale, seed)
	moved := 0
	for x := range int64(1 << scale) {
		if scrambler.apply(x) != x {
			moved++
		}
	}
	if moved < (1<<scale)/2 {
		t.Errorf("relabelling moved only %d of %d ids", moved, 1<<scale)
	}
	for i := range raw.Src {
		if permuted.Src[i] != scrambler.apply(raw.Src[i]) || permuted.Dst[i] != scrambler.apply(raw.Dst[i]) {
			t.Fatalf("arc %d: permuted %d→%d is not the relabelled %d→%d", i, permuted.Src[i], permuted.Dst[i], raw.Src[i], raw.Dst[i])
		}
	}
	pout, _ := degrees(permuted)
	if hub := scrambler.apply(0); pout[hub] != out[0] || hub == 0 {
		t.Errorf("the hub 0 (degree %d) became %d with degree %d", out[0], hub, pout[hub])
	}
	sortedRaw, sortedPermuted := slices.Sorted(slices.Values(out)), slices.Sorted(slices.Values(pout))
	if !slices.Equal(sortedRaw, sortedPermuted) {
		t.Error("relabelling changed the degree sequence")
	}
	if !slices.Equal(raw.Weights, permuted.Weights) {
		t.Error("the permutation changed the weights")
	}
}

// The relabelling must be a bijection on [0, 2^scale) for every scale and seed.
func TestIDScramblerIsBijection(t *testing.T) {
	for scale := range 17 {
		for _, seed := range []uint64{0, 1, 99, math.MaxUint64} {
			s := newIDScrambler(scale, seed)
			n := int64(1) << scale
			seen := make([]bool, n)
			for x := range n {
				y := s.apply(x)
				if y < 0 || y >= n || seen[y] {
					t.Fatalf("scale %d seed %d: %d maps to %d, out of range or taken", scale, seed, x, y)
				}
				seen[y] = true
			}
		}
	}
}

func TestRMATParams(t *testing.T) {
	// a = 1 puts every arc in quadrant (0,0) at every level: all arcs 0→0.
	e, err := RMAT(6, 4, 1, WithRMATParams(1, 0, 0), WithVertexPermutation(false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.Src {
		if e.Src[i] != 0 || e.Dst[i] != 0 {
			t.Fatalf("a=1: arc %d is %d→%d, want 0→0", i, e.Src[i], e.Dst[i])
		}
	}
	// d = 1 puts every arc at the last vertex.
	e, err = RMAT(6, 4, 1, WithRMATParams(0, 0, 0), WithVertexPermutation(false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.Src {
		if e.Src[i] != 63 || e.Dst[i] != 63 {
			t.Fatalf("d=1: arc %d is %d→%d, want 63→63", i, e.Src[i], e.Dst[i])
		}
	}
}

func TestGridStructure(t *testing.T) {
	cases := []struct{ rows, cols int }{{300, 200}, {1, 5}, {5, 1}, {2, 2}, {1, 1}, {0, 7}, {7, 0}}
	for _, c := range cases {
		e, err := Grid(c.rows, c.cols, 17)
		if err != nil {
			t.Fatalf("%d×%d: %v", c.rows, c.cols, err)
		}
		R, C := int64(c.rows), int64(c.cols)
		if e.NumVertices != R*C {
			t.Fatalf("%d×%d: %d vertices", c.rows, c.cols, e.NumVertices)
		}
		weight := map[[2]int64]int64{}
		for i := range e.Src {
			u, v := e.Src[i], e.Dst[i]
			ur, uc, vr, vc := u/C, u%C, v/C, v%C
			dr, dc := abs(ur-vr), abs(uc-vc)
			if dr+dc != 1 {
				t.Fatalf("%d×%d: arc %d→%d joins (%d,%d) and (%d,%d), not neighbours", c.rows, c.cols, u, v, ur, uc, vr, vc)
			}
			if _, dup := weight[[2]int64{u, v}]; dup {
				t.Fatalf("%d×%d: arc %d→%d twice", c.rows, c.cols, u, v)
			}
			weight[[2]int64{u, v}] = e.Weights[i]
		}
		for arc, w := range weight {
			back, ok := weight[[2]int64{arc[1], arc[0]}]
			if !ok || back != w {
				t.Fatalf("%d×%d: arc %v weighs %d, its reverse %d (present %v)", c.rows, c.cols, arc, w, back, ok)
			}
		}
		out, in := degrees(e)
		for u := range e.NumVertices {
			r, col := u/C, u%C
			want := 0
			for _, nb := range [][2]int64{{r - 1, col}, {r + 1, col}, {r, col - 1}, {r, col + 1}} {
				if nb[0] >= 0 && nb[0] < R && nb[1] >= 0 && nb[1] < C {
					want++
				}
			}
			if out[u] != want || in[u] != want {
				t.Fatalf("%d×%d: vertex (%d,%d) has out %d in %d, want %d", c.rows, c.cols, r, col, out[u], in[u], want)
			}
			if r > 0 && r < R-1 && col > 0 && col < C-1 && want != 4 {
				t.Fatalf("interior vertex with %d neighbours", want)
			}
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestUniformProperties(t *testing.T) {
	const n, d = 50000, 4
	e, err := Uniform(n, d, 13)
	if err != nil {
		t.Fatal(err)
	}
	out, in := degrees(e)
	for i := range e.Src {
		if e.Src[i] == e.Dst[i] {
			t.Fatalf("self-loop at arc %d", i)
		}
	}
	// Degrees are Binomial(m, 1/n) ≈ Poisson(4): a max far above ~20 would
	// mean a biased draw, and so would a skewed share of sources or targets
	// in the lower half of the ids.
	if slices.Max(out) > 20 || slices.Max(in) > 20 {
		t.Errorf("max degrees out %d in %d, too high for Poisson(%d)", slices.Max(out), slices.Max(in), d)
	}
	low := 0
	for i := range e.Src {
		if e.Src[i] < n/2 {
			low++
		}
		if e.Dst[i] < n/2 {
			low++
		}
	}
	if frac := float64(low) / float64(2*e.Len()); math.Abs(frac-0.5) > 0.01 {
		t.Errorf("%.4f of endpoints in the lower half of the ids, want 0.5", frac)
	}
	// Two vertices: every arc must be 0→1 or 1→0.
	two, err := Uniform(2, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range two.Src {
		if two.Src[i]+two.Dst[i] != 1 {
			t.Fatalf("n=2: arc %d→%d", two.Src[i], two.Dst[i])
		}
	}
}

func TestEmptyGraphs(t *testing.T) {
	for _, e := range []func() (*EdgeList, error){
		func() (*EdgeList, error) { return RMAT(5, 0, 1) },
		func() (*EdgeList, error) { return Uniform(0, 0, 1) },
		func() (*EdgeList, error) { return Uniform(10, 0, 1) },
		func() (*EdgeList, error) { return Grid(0, 0, 1) },
	} {
		g, err := e()
		if err != nil {
			t.Fatal(err)
		}
		if g.Len() != 0 || g.Weights == nil {
			t.Errorf("empty graph: %d arcs, weights %v", g.Len(), g.Weights)
		}
	}
}

func TestBadArguments(t *testing.T) {
	cases := []struct {
		name string
		call func() (*EdgeList, error)
	}{
		{"rmat scale negative", func() (*EdgeList, error) { return RMAT(-1, 16, 1) }},
		{"rmat scale too big", func() (*EdgeList, error) { return RMAT(MaxScale+1, 16, 1) }},
		{"rmat edge factor negative", func() (*EdgeList, error) { return RMAT(4, -1, 1) }},
		{"rmat edge factor huge", func() (*EdgeList, error) { return RMAT(30, math.MaxInt, 1) }},
		{"rmat probabilities negative", func() (*EdgeList, error) { return RMAT(4, 4, 1, WithRMATParams(-0.1, 0.5, 0.5)) }},
		{"rmat probabilities above one", func() (*EdgeList, error) { return RMAT(4, 4, 1, WithRMATParams(0.5, 0.5, 0.5)) }},
		{"rmat probabilities NaN", func() (*EdgeList, error) { return RMAT(4, 4, 1, WithRMATParams(math.NaN(), 0, 0)) }},
		{"empty int range", func() (*EdgeList, error) { return RMAT(4, 4, 1, WithWeights(5, 4)) }},
		{"empty float range", func() (*EdgeList, error) { return Grid(4, 4, 1, WithFloatWeights(1, 0)) }},
		{"NaN float range", func() (*EdgeList, error) { return Grid(4, 4, 1, WithFloatWeights(math.NaN(), 1)) }},
		{"infinite float range", func() (*EdgeList, error) { return Uniform(4, 4, 1, WithFloatWeights(0, math.Inf(1))) }},
		{"grid negative", func() (*EdgeList, error) { return Grid(-1, 4, 1) }},
		{"grid too many vertices", func() (*EdgeList, error) { return Grid(1<<16, 1<<16, 1) }},
		{"uniform negative n", func() (*EdgeList, error) { return Uniform(-1, 4, 1) }},
		{"uniform negative degree", func() (*EdgeList, error) { return Uniform(10, -4, 1) }},
		{"uniform one vertex", func() (*EdgeList, error) { return Uniform(1, 4, 1) }},
		{"uniform too many vertices", func() (*EdgeList, error) { return Uniform(math.MaxInt32+1, 1, 1) }},
		{"uniform degree huge", func() (*EdgeList, error) { return Uniform(1<<30, math.MaxInt, 1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := c.call()
			if err == nil {
				t.Fatalf("no error; got %d arcs", e.Len())
			}
			if e != nil {
				t.Errorf("non-nil list with error %v", err)
			}
			if len(err.Error()) < 5 || err.Error()[:5] != "gen: " {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestBelowIsUniform(t *testing.T) {
	r := newStream(1, purposeWeights, 0)
	const n, draws = 7, 700000
	var count [n]int
	for range draws {
		count[r.below(n)]++
	}
	// Chi-square with 6 degrees of freedom: 22.5 is the 0.999 quantile.
	chi := 0.0
	for _, c := range count {
		d := float64(c) - draws/n
		chi += d * d / (draws / n)
	}
	if chi > 22.5 {
		t.Errorf("below(7) counts %v, chi-square %.1f", count, chi)
	}
	for range 1000 {
		if x := r.float(); x < 0 || x >= 1 {
			t.Fatalf("float() = %g outside [0, 1)", x)
		}
	}
}

func TestGraphEdgesBuilds(t *testing.T) {
	for _, g := range generators {
		for _, opt := range []Option{nil, WithFloatWeights(0.5, 2), Unweighted()} {
			e := mustGen(t, g, 2, opt)
			ge, err := e.GraphEdges()
			if err != nil {
				t.Fatal(err)
			}
			if ge.NumVertices != int(e.NumVertices) || ge.Len() != e.Len() || ge.Weighted() != e.Weighted() {
				t.Fatalf("%s: GraphEdges has %d vertices %d arcs weighted %v", g.name, ge.NumVertices, ge.Len(), ge.Weighted())
			}
			for i := range e.Src {
				if int64(ge.Src[i]) != e.Src[i] || int64(ge.Dst[i]) != e.Dst[i] {
					t.Fatalf("%s: arc %d changed", g.name, i)
				}
			}
			csr, err := graph.Build(ge, graph.BuildOptions{})
			if err != nil {
				t.Fatalf("%s: Build: %v", g.name, err)
			}
			// The CSR drops self-loops and keeps one arc per (u, v).
			distinct := map[[2]int64]bool{}
			for i := range e.Src {
				if e.Src[i] != e.Dst[i] {
					distinct[[2]int64{e.Src[i], e.Dst[i]}] = true
				}
			}
			if csr.NumVertices != int(e.NumVertices) || csr.NumEdges() != int64(len(distinct)) {
				t.Errorf("%s: CSR has %d vertices %d arcs, want %d and %d", g.name, csr.NumVertices, csr.NumEdges(), e.NumVertices, len(distinct))
			}
		}
	}
}
