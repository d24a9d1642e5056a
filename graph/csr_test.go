package graph_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// naiveArcs is the CSR builder's oracle: a map from (u,v) to the smallest
// weight, self-loops dropped.
func naiveArcs(e *graph.Edges, undirected bool) map[[2]int32]float64 {
	arcs := map[[2]int32]float64{}
	add := func(u, v int32, w float64) {
		if u == v {
			return
		}
		if old, ok := arcs[[2]int32{u, v}]; !ok || w < old {
			arcs[[2]int32{u, v}] = w
		}
	}
	for i := range e.Src {
		w := 1.0
		switch {
		case e.IntWeights != nil:
			w = float64(e.IntWeights[i])
		case e.Float64Weights != nil:
			w = e.Float64Weights[i]
		case e.Float32Weights != nil:
			w = float64(e.Float32Weights[i])
		}
		add(e.Src[i], e.Dst[i], w)
		if undirected {
			add(e.Dst[i], e.Src[i], w)
		}
	}
	return arcs
}

func csrArcs(t *testing.T, g *graph.CSR) map[[2]int32]float64 {
	t.Helper()
	arcs := map[[2]int32]float64{}
	if len(g.Offsets) != g.NumVertices+1 || g.Offsets[0] != 0 || g.Offsets[g.NumVertices] != int64(len(g.Targets)) {
		t.Fatalf("bad offsets %v for %d vertices, %d targets", g.Offsets, g.NumVertices, len(g.Targets))
	}
	for u := 0; u < g.NumVertices; u++ {
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			if k > g.Offsets[u] && g.Targets[k-1] >= g.Targets[k] {
				t.Fatalf("row %d not strictly sorted: %v", u, g.Targets[g.Offsets[u]:g.Offsets[u+1]])
			}
			var w float64
			switch ws := g.Weights.(type) {
			case []int32:
				w = float64(ws[k])
			case []int64:
				w = float64(ws[k])
			case []float32:
				w = float64(ws[k])
			case []float64:
				w = ws[k]
			}
			arcs[[2]int32{int32(u), g.Targets[k]}] = w
		}
	}
	return arcs
}

func sameArcs(t *testing.T, seed uint64, got, want map[[2]int32]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("seed %d: %d arcs, want %d", seed, len(got), len(want))
	}
	for a, w := range want {
		if g, ok := got[a]; !ok || g != w {
			t.Fatalf("seed %d: arc %v weight %v (present %v), want %v", seed, a, g, ok, w)
		}
	}
}

func TestBuildAgainstNaive(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		m := rng.IntN(200)
		e := &graph.Edges{NumVertices: n}
		kind := rng.IntN(4)
		for i := 0; i < m; i++ {
			e.Src = append(e.Src, int32(rng.IntN(n)))
			e.Dst = append(e.Dst, int32(rng.IntN(n)))
			switch kind {
			case 1:
				e.IntWeights = append(e.IntWeights, int64(rng.IntN(20)-2))
			case 2:
				e.Float32Weights = append(e.Float32Weights, float32(rng.Float64()*10))
			case 3:
				e.Float64Weights = append(e.Float64Weights, rng.Float64()*10)
			}
		}
		undirected := rng.IntN(2) == 0
		g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sameArcs(t, seed, csrArcs(t, g), naiveArcs(e, undirected))
	}
}

func TestChooseDistType(t *testing.T) {
	cases := []struct {
		name string
		e    graph.Edges
		want graph.DistType
	}{
		{"unweighted", graph.Edges{NumVertices: 10, Src: []int32{0}, Dst: []int32{1}}, graph.DistInt32},
		{"small ints", graph.Edges{NumVertices: 10, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{100}}, graph.DistInt32},
		// n·max|w| is the bound: a relaxation adds an arc to a path of up to
		// n-1 arcs, so (n-1)·max|w| fitting is not enough.
		{"int32 boundary", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{math.MaxInt32 / 3}}, graph.DistInt32},
		{"just over", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{math.MaxInt32/3 + 1}}, graph.DistInt64},
		{"paths fit, sums do not", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{math.MaxInt32 / 2}}, graph.DistInt64},
		{"negative, sums do not fit", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{-(math.MaxInt32/2 + 1)}}, graph.DistInt64},
		{"heavy self-loop dropped", graph.Edges{NumVertices: 3, Src: []int32{0, 2}, Dst: []int32{1, 2}, IntWeights: []int64{1, math.MaxInt64}}, graph.DistInt32},
		{"negative large", graph.Edges{NumVertices: 1 << 20, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{-5000}}, graph.DistInt64},
		{"float32", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float32Weights: []float32{1}}, graph.DistFloat32},
		{"float64", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float64Weights: []float64{1}}, graph.DistFloat64},
	}
	for _, c := range cases {
		if got := graph.ChooseDistType(&c.e); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestIntSumsFit: n·w <= limit exactly, without overflow in the product.
func TestIntSumsFit(t *testing.T) {
	for _, c := range []struct {
		n     int
		w     uint64
		limit uint64
		want  bool
	}{
		{0, math.MaxUint64, 1, true},
		{1, math.MaxUint64, 1, true},
		{5, 0, 1, true},
		{3, math.MaxInt32 / 3, math.MaxInt32, true},
		{3, math.MaxInt32/3 + 1, math.MaxInt32, false},
		{2, math.MaxInt32 / 2, math.MaxInt32, true},
		{2, math.MaxInt32/2 + 1, math.MaxInt32, false},
		{1 << 30, math.MaxInt64 >> 30, math.MaxInt64, true},
		{1 << 30, math.MaxInt64>>30 + 1, math.MaxInt64, false},
		{graph.MaxVertices, math.MaxUint64, math.MaxInt64, false},
	} {
		if got := graph.IntSumsFit(c.n, c.w, c.limit); got != c.want {
			t.Errorf("IntSumsFit(%d, %d, %d) = %v, want %v", c.n, c.w, c.limit, got, c.want)
		}
	}
}

// TestInt32SumsDoNotWrap: where ChooseDistType picks int32, the largest sum
// a relaxation can form, (n-1) arcs plus one, stays below int32's Infinity.
func TestInt32SumsDoNotWrap(t *testing.T) {
	for _, n := range []int{2, 3, 7, 1000, 1 << 20} {
		for _, w := range []int64{math.MaxInt32 / int64(n), math.MaxInt32/int64(n) + 1, math.MaxInt32 / int64(n-1)} {
			e := graph.Edges{NumVertices: n, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{w}}
			if graph.ChooseDistType(&e) == graph.DistInt32 && int64(n)*w > math.MaxInt32 {
				t.Errorf("n %d, w %d: int32 chosen, but a relaxation sums up to %d", n, w, int64(n)*w)
			}
		}
	}
}

func TestBuildRejects(t *testing.T) {
	bad := []struct {
		name string
		e    graph.Edges
		opt  graph.BuildOptions
	}{
		{"out of range", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{2}}, graph.BuildOptions{}},
		{"nan", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float64Weights: []float64{math.NaN()}}, graph.BuildOptions{}},
		{"inf", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float32Weights: []float32{float32(math.Inf(1))}}, graph.BuildOptions{}},
		{"int32 too narrow", graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{math.MaxInt32}}, graph.BuildOptions{DistType: graph.DistInt32}},
		{"int for floats", graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float64Weights: []float64{0.5}}, graph.BuildOptions{DistType: graph.DistInt64}},
		{"length mismatch", graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1}}, graph.BuildOptions{}},
	}
	for _, c := range bad {
		if _, err := graph.Build(&c.e, c.opt); err == nil {
			t.Errorf("%s: Build accepted it", c.name)
		}
	}
}

func TestStats(t *testing.T) {
	// Path 0 -1-> 1 -2-> 2, vertex 3 unreachable.
	b := graph.NewBlock([]int32{0, 3}, 4, graph.DistInt32, false)
	inf := graph.Infinity[int32]()
	copy(graph.DistOf[int32](b), []int32{0, 1, 3, inf, inf, inf, inf, 0})
	s := graph.ComputeStats(b)
	if s.Reachable[0] != 2 || s.SumInt[0] != 4 || s.Eccentricity[0] != 3 {
		t.Fatalf("source 0: reach %d sum %d ecc %v", s.Reachable[0], s.SumInt[0], s.Eccentricity[0])
	}
	if want := (2.0 / 4) * (2.0 / 3); math.Abs(s.Closeness[0]-want) > 1e-15 {
		t.Fatalf("closeness %v, want %v", s.Closeness[0], want)
	}
	if want := 1.0 + 1.0/3; math.Abs(s.Harmonic[0]-want) > 1e-15 {
		t.Fatalf("harmonic %v, want %v", s.Harmonic[0], want)
	}
	if s.Reachable[1] != 0 || s.Closeness[1] != 0 || s.Harmonic[1] != 0 {
		t.Fatalf("isolated source: %+v", s)
	}
}

// FuzzBuild feeds arbitrary edge lists to Build and checks the CSR against
// the naive builder: it must never panic, and a success must be exact.
func FuzzBuild(f *testing.F) {
	f.Add(uint8(4), false, []byte{0, 1, 5, 1, 2, 3, 2, 2, 9, 0, 1, 1})
	f.Add(uint8(1), true, []byte{})
	f.Add(uint8(3), true, []byte{0, 1, 200, 1, 0, 255})
	f.Fuzz(func(t *testing.T, n uint8, undirected bool, data []byte) {
		e := &graph.Edges{NumVertices: int(n)}
		for len(data) >= 3 {
			e.Src = append(e.Src, int32(int8(data[0])))
			e.Dst = append(e.Dst, int32(int8(data[1])))
			e.IntWeights = append(e.IntWeights, int64(int8(data[2])))
			data = data[3:]
		}
		g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
		if err != nil {
			for i := range e.Src {
				if e.Src[i] < 0 || int(e.Src[i]) >= int(n) || e.Dst[i] < 0 || int(e.Dst[i]) >= int(n) {
					return
				}
			}
			t.Fatalf("valid edges rejected: %v", err)
		}
		sameArcs(t, 0, csrArcs(t, g), naiveArcs(e, undirected))
	})
}

// TestExactFloatSums: float32 weights with fractions (0.1 is a multiple
// of 2^-27 as a float32) have sums exact at 53 bits but not at 24; eighths
// at both; float64 fractions (52 fraction bits) at neither; negative,
// infinite and integer weights never; and the n·max bound counts.
func TestExactFloatSums(t *testing.T) {
	csr := func(n int, w any) *graph.CSR { return &graph.CSR{NumVertices: n, Weights: w} }
	cases := []struct {
		name       string
		g          *graph.CSR
		at24, at53 bool
	}{
		{"float32 tenths", csr(1000, []float32{0.1, 2.5, 9.9}), false, true},
		{"float32 eighths", csr(1000, []float32{0.125, 2.5, 9.875}), true, true},
		{"float64 tenths", csr(1000, []float64{0.1, 2.5}), false, false},
		{"float64 eighths", csr(1000, []float64{0.125, 3}), true, true},
		{"negative", csr(10, []float32{-0.5, 1}), false, false},
		{"infinite", csr(10, []float64{math.Inf(1), 1}), false, false},
		{"integers", csr(10, []int32{1, 2}), false, false},
		{"zeros", csr(10, []float32{0, 0}), true, true},
		// 2^20 vertices of weight 16 with 3 fraction bits: n·max·2^f = 2^27,
		// beyond 24 bits but inside 53.
		{"long paths", csr(1<<20, []float32{16, 0.125}), false, true},
	}
	for _, c := range cases {
		if got := graph.ExactFloatSums(c.g, 24); got != c.at24 {
			t.Errorf("%s: exact at 24 bits %v, want %v", c.name, got, c.at24)
		}
		if got := graph.ExactFloatSums(c.g, 53); got != c.at53 {
			t.Errorf("%s: exact at 53 bits %v, want %v", c.name, got, c.at53)
		}
	}
}
