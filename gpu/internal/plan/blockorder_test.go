package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestBlockOrderIsAPermutation checks BlockOrder on the test graphs, on
// every source and on scattered subsets, for blocks small and large: it
// gives every position once, in rising breadth-first rank, and nil for one
// block or a source asked twice.
func TestBlockOrderIsAPermutation(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		pg := NewGraph(g)
		rank := pg.Rank()
		seed := uint64(len(name))
		rng := rand.New(rand.NewPCG(seed, 41))
		n := g.NumVertices
		some := make([]int32, 0, n)
		for _, v := range rng.Perm(n)[:n/3] {
			some = append(some, int32(v))
		}
		for _, src := range [][]int32{identity(n), some} {
			k := len(src)
			for _, block := range []int{1, 7, k / 10, k / 2, k - 1} {
				order := pg.BlockOrder(src, block)
				if len(order) != k {
					t.Fatalf("%s (seed %d), %d sources in blocks of %d: %d positions", name, seed, k, block, len(order))
				}
				seen := make([]bool, k)
				for at, i := range order {
					if i < 0 || int(i) >= k || seen[i] {
						t.Fatalf("%s (seed %d), blocks of %d: position %d twice or out of range", name, seed, block, i)
					}
					seen[i] = true
					if at > 0 && rank[src[i]] < rank[src[order[at-1]]] {
						t.Fatalf("%s (seed %d), blocks of %d: source %d runs after one of higher rank", name, seed, block, src[i])
					}
				}
			}
			if pg.BlockOrder(src, k) != nil || pg.BlockOrder(src, 0) != nil {
				t.Fatalf("%s: an order for one block", name)
			}
		}
		twice := append([]int32{0}, identity(n)...)
		if pg.BlockOrder(twice, 5) != nil {
			t.Fatalf("%s: an order for a source asked twice", name)
		}
	}
}

// TestBlockOrderComputesFewerRows checks what BlockOrder is for: on an
// R-MAT graph the kernel computes fewer rows, summed over the blocks of
// every source, in its order than in the vertices' own, for blocks of a
// tenth, a third and two thirds of the vertices.
func TestBlockOrderComputesFewerRows(t *testing.T) {
	t.Parallel()
	el, err := gen.RMAT(12, 8, 9, gen.WithWeights(1, 100))
	g := undirectedGraph(t, el, err)
	pg := NewGraph(g)
	n := g.NumVertices
	for _, block := range []int{n / 10, n / 3, 2 * n / 3} {
		given, ordered := blockKernelRows(t, pg, identity(n), block), blockKernelRows(t, pg, ordered(pg, block), block)
		t.Logf("blocks of %d of %d sources: the kernel computes %d rows in vertex order, %d in BlockOrder's", block, n, given, ordered)
		if ordered >= given {
			t.Errorf("blocks of %d of %d sources: %d kernel rows in BlockOrder's order, %d in the vertices'", block, n, ordered, given)
		}
	}
}

// BenchmarkBlockOrder reports the kernel's rows, summed over the blocks of
// every source, in the vertices' order and in BlockOrder's, for blocks of
// PATHCTL_BENCH_BLOCKS (comma-separated shares of the vertices, default
// 0.02,0.25,0.5,0.85) on the graphs of BenchmarkPlan; the timer covers
// BlockOrder alone.
func BenchmarkBlockOrder(b *testing.B) {
	shares := []float64{0.02, 0.25, 0.5, 0.85}
	if s := os.Getenv("PATHCTL_BENCH_BLOCKS"); s != "" {
		shares = shares[:0]
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				b.Fatal(err)
			}
			shares = append(shares, v)
		}
	}
	for name, g := range benchGraphs(b) {
		pg := NewGraph(g)
		pg.Shape()
		n := g.NumVertices
		for _, share := range shares {
			block := max(1, int(share*float64(n)))
			b.Run(fmt.Sprintf("%s/share=%g", name, share), func(b *testing.B) {
				var order []int32
				for b.Loop() {
					order = ordered(pg, block)
				}
				b.ReportMetric(float64(blockKernelRows(b, pg, identity(n), block)), "kernel-rows-given")
				b.ReportMetric(float64(blockKernelRows(b, pg, order, block)), "kernel-rows-ordered")
			})
		}
	}
}

func identity(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// ordered is every vertex in BlockOrder's order for blocks of block.
func ordered(pg *Graph, block int) []int32 {
	src := identity(pg.g.NumVertices)
	order := pg.BlockOrder(src, block)
	if order == nil {
		return src
	}
	out := make([]int32, len(order))
	for i, p := range order {
		out[i] = src[p]
	}
	return out
}

// blockKernelRows is how many rows the kernel computes over the blocks of
// block sources cut from src in its order, under the default plan.
func blockKernelRows(t testing.TB, pg *Graph, src []int32, block int) int {
	t.Helper()
	rows := 0
	for lo := 0; lo < len(src); lo += block {
		p, err := pg.Plan(append([]int32(nil), src[lo:min(lo+block, len(src))]...), DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		rows += len(p.Sources)
	}
	return rows
}

// TestHubsFirst checks that HubsFirst keeps a permutation of the order,
// brings the hubs among the sources to its front in the hubs' order, and
// keeps the others in the order's.
func TestHubsFirst(t *testing.T) {
	sources := []int32{9, 4, 7, 1, 3, 8}
	order := []int32{5, 2, 0, 4, 1, 3} // 8 7 9 3 4 1
	hubs := []int32{3, 6, 9}           // 6 is not a source
	got := HubsFirst(order, sources, hubs)
	want := []int32{4, 0, 5, 2, 1, 3} // 3 9 | 8 7 4 1
	if !slices.Equal(got, want) {
		t.Fatalf("HubsFirst = %v, want %v", got, want)
	}
}

// TestHubsSpread checks that HubsSpread keeps a permutation of the
// order and gives each block of block sources its share of the hubs at
// its front, in the hubs' order, the others following in order's.
func TestHubsSpread(t *testing.T) {
	sources := []int32{9, 4, 7, 1, 3, 8, 2, 5, 6, 0}
	order := []int32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0} // 0 6 5 2 8 3 1 7 4 9
	hubs := []int32{3, 6, 9, 1}                    // 4 hubs, in this order
	for _, c := range []struct {
		block int
		want  []int32
	}{
		// blocks of 5: two hubs each; 3 6 | 0 5 2, 9 1 | 8 7 4
		{5, []int32{4, 8, 9, 7, 6, 0, 3, 5, 2, 1}},
		// blocks of 4, 4, 2: 1, 2 and 1 hubs (4·4/10 → 1, 4·8/10 → 3, 4)
		{4, []int32{4, 9, 7, 6, 8, 0, 5, 2, 3, 1}},
		// one block: the hubs first
		{10, []int32{4, 8, 0, 3, 9, 7, 6, 5, 2, 1}},
	} {
		got := HubsSpread(order, sources, hubs, c.block)
		if !slices.Equal(got, c.want) {
			t.Errorf("block %d: HubsSpread = %v, want %v", c.block, got, c.want)
		}
		seen := make([]bool, len(sources))
		for _, p := range got {
			if seen[p] {
				t.Fatalf("block %d: position %d twice in %v", c.block, p, got)
			}
			seen[p] = true
		}
	}
}

// TestCoreDerivesTheRest checks Graph.Core: its vertices are those the
// kernel computes in a block of every vertex, by falling out-degree, and a
// block of other vertices beside the core's rows
// derives every row (no kernel source), each equal to Dijkstra's.
func TestCoreDerivesTheRest(t *testing.T) {
	t.Parallel()
	for name, g := range planGraphs(t) {
		n := g.NumVertices
		pg := NewGraph(g)
		core, err := pg.Core(n, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(core) == 0 || len(core) == n {
			t.Fatalf("%s: a core of %d of %d vertices", name, len(core), n)
		}
		whole, err := pg.Plan(identity(n), DefaultConfig()) // the core is its kernel's sources
		if err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(slices.Values(core)), slices.Sorted(slices.Values(whole.Sources)); !slices.Equal(got, want) {
			t.Fatalf("%s: a core of %d vertices, the whole block's kernel computes %d", name, len(got), len(want))
		}
		in := make([]bool, n)
		for i, v := range core {
			in[v] = true
			if i > 0 && g.OutDegree(v) > g.OutDegree(core[i-1]) {
				t.Fatalf("%s: core vertex %d of degree above its predecessor's", name, i)
			}
		}
		var rest []int32
		for v := range int32(n) {
			if !in[v] && v%2 == 0 {
				rest = append(rest, v)
			}
		}
		res := Resident{Vertices: core, FirstRow: int32(len(rest))}
		b, err := pg.Plan(rest, DefaultConfig()) // beside nothing: the kernel computes rows
		if err != nil {
			t.Fatal(err)
		}
		alone := len(b.Sources)
		b, finish, err := pg.StartResident(rest, DefaultConfig(), math.Inf(1), res)
		if err != nil {
			t.Fatal(err)
		}
		if finish != nil {
			finish()
		}
		if g.Undirected && len(b.Sources) != 0 {
			t.Errorf("%s: %d kernel sources of %d beside the core (%d alone)", name, len(b.Sources), len(rest), alone)
		}
		sameAsDijkstra(t, g, applyPlanWithin(t, g, len(rest), b, graph.Infinity[int32](), res), rest, name)
	}
}
