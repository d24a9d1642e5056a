package gpu

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// TestClusterSourcesIsAPermutation checks that the source order of the
// batched kernel takes every row of the block exactly once, for blocks that
// hold every vertex and blocks that hold a scattered subset, and that a
// grid's clusters are compact (a group's sources lie within a few steps
// of each other).
func TestClusterSourcesIsAPermutation(t *testing.T) {
	el, err := gen.Grid(40, 40, 3)
	g := undirectedGraph(t, el, err)
	rank := bfsRank(g)
	seen := make([]bool, g.NumVertices)
	for _, r := range rank {
		if r < 0 || int(r) >= g.NumVertices || seen[r] {
			t.Fatalf("bfsRank is not a permutation: %v", r)
		}
		seen[r] = true
	}
	rng := rand.New(rand.NewPCG(1, 2))
	defer func(c int) { clusterChunk = c }(clusterChunk)
	clusterChunk = 2 * BatchWidth // chunks even on these small blocks
	for _, k := range []int{g.NumVertices, 333, 40} {
		src := make([]int32, k)
		for i, v := range rng.Perm(g.NumVertices)[:k] {
			src[i] = int32(v)
		}
		if k == g.NumVertices {
			for i := range src {
				src[i] = int32(i)
			}
		}
		idx := make([]int32, k)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(a, b int32) int { return int(rank[src[a]] - rank[src[b]]) })
		out := clusterSources(g, src, idx, false)
		if par := clusterSources(g, src, idx, true); !slices.Equal(sorted(par), sorted(out)) {
			t.Fatalf("k=%d: clustering in chunks does not take the same rows", k)
		}
		got := slices.Clone(out)
		slices.Sort(got)
		for i, v := range got {
			if v != int32(i) {
				t.Fatalf("k=%d: clusterSources is not a permutation of the rows (row %d missing or doubled)", k, i)
			}
		}
		if k != g.NumVertices {
			continue
		}
		// On the full 40×40 grid, the first groups are compact: every source
		// within 8 steps (Manhattan) of the group's first.
		for grp := 0; grp+BatchWidth <= k/2; grp += BatchWidth {
			first := src[out[grp]]
			for _, i := range out[grp : grp+BatchWidth] {
				v := src[i]
				d := abs(int(v/40)-int(first/40)) + abs(int(v%40)-int(first%40))
				if d > 8 {
					t.Fatalf("group at %d: source %d is %d steps from %d", grp, v, d, first)
				}
			}
		}
	}
}

// undirectedGraph builds the undirected CSR of a generated edge list.
func undirectedGraph(t *testing.T, el *gen.EdgeList, err error) *graph.CSR {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	edges, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestBatchedPlanDerivesLeaves checks the batched kernel's source plan on
// the host: computing the planned sources' rows with Dijkstra into their
// planned rows, then applying the minimum derivations and the leaves'
// derivations in their two passes as batched_mins and batched_derive do,
// must give every block row its source's distances. Graphs: an undirected
// R-MAT graph (many leaves), a directed one (minimums only) and a grid
// (every other vertex derivable); blocks that hold every vertex, a
// scattered subset (parents outside the block) or one source.
func TestBatchedPlanDerivesLeaves(t *testing.T) {
	el, err := gen.RMAT(9, 4, 5, gen.WithWeights(1, 9))
	rmat := undirectedGraph(t, el, err)
	el, err = gen.RMAT(9, 4, 6, gen.WithWeights(0, 9))
	if err != nil {
		t.Fatal(err)
	}
	edges, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	directed, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	el, err = gen.Grid(17, 23, 7, gen.WithWeights(1, 20))
	grid := undirectedGraph(t, el, err)
	leaves := 0
	for v := range rmat.NumVertices {
		if _, _, ok := leafParent(rmat, int32(v)); ok {
			leaves++
		}
	}
	if leaves < rmat.NumVertices/20 {
		t.Fatalf("only %d leaves of %d vertices: the test graph does not exercise the plan", leaves, rmat.NumVertices)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(p, w []float64) { batchedPhases, batchedPhasesWeighted = p, w }(batchedPhases, batchedPhasesWeighted)
	for name, g := range map[string]*graph.CSR{"rmat": rmat, "directed": directed, "grid": grid} {
		n := g.NumVertices
		for _, order := range []string{"cluster", "", "cluster/3 phases", "cluster/4 phases"} {
			order, phases, _ := strings.Cut(order, "/")
			switch phases {
			case "":
				batchedPhases = nil
			case "3 phases":
				batchedPhases = []float64{0.7}
			case "4 phases":
				batchedPhases = []float64{0.6, 0.8}
			}
			batchedPhasesWeighted = batchedPhases
			for _, k := range []int{n, 200, 1} {
				src := make([]int32, k)
				for i, v := range rng.Perm(n)[:k] {
					src[i] = int32(v)
				}
				if k == 200 {
					src[1] = src[0] // a source asked twice gets both rows
				}
				batchedOrder = order
				before := slices.Clone(src)
				plan := batchedPlanFor(&Runner{g: g}, src)
				if !slices.Equal(src, before) {
					t.Fatalf("%s, k=%d: the plan reordered the caller's sources", name, k)
				}
				batchedOrder = "cluster"
				if plan.rows == nil {
					if k > BatchWidth {
						t.Fatalf("%s, k=%d: no plan", name, k)
					}
					continue
				}
				if k == n && len(plan.mins) < n/5 {
					t.Errorf("%s: %d of %d sources derived by minimums", name, len(plan.mins), n)
				}
				if k == n && name == "rmat" && len(plan.cuts) != 1+len(batchedPhases) {
					t.Errorf("rmat, %s: phase ends %v, want %d phases", phases, plan.cuts, 2+len(batchedPhases))
				}
				if k == n && name != "grid" && len(plan.cuts) == 0 {
					t.Errorf("%s: one phase for every source", name)
				}
				rows := applyPlan(t, g, k, plan)
				for i, s := range src {
					want, err := ref.Dijkstra[int32](g, s)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(rows[i], want) {
						t.Fatalf("%s, order %q, k=%d: row %d (source %d) differs from Dijkstra", name, order, k, i, s)
					}
				}
			}
		}
	}
}

// applyPlan computes a block of k rows as the batched kernel and its
// derivation kernels would under plan, with Dijkstra standing in for the
// kernel, failing where the plan computes a row twice, leaves one out, or
// reads a row before it is final.
func applyPlan(t *testing.T, g *graph.CSR, k int, plan kernelSources) [][]int32 {
	t.Helper()
	n := g.NumVertices
	weights := graph.WeightsOf[int32](g)
	inf := graph.Infinity[int32]()
	rows := make([][]int32, k)
	phase1 := len(plan.sources)
	bounds := append(slices.Clone(plan.cuts), len(plan.sources))
	if len(plan.cuts) > 0 {
		phase1 = plan.cuts[0]
		if len(plan.seeds) != len(plan.sources)-phase1 {
			t.Fatalf("%d seeds for %d sources after the first phase", len(plan.seeds), len(plan.sources)-phase1)
		}
		if !slices.IsSorted(bounds) || bounds[0] <= 0 || slices.Contains(bounds[1:], bounds[0]) {
			t.Fatalf("phase ends %v over %d sources", bounds, len(plan.sources))
		}
	}
	phaseOf := func(i int) int { // the phase of kernel source i
		p, _ := slices.BinarySearch(bounds, i+1)
		return p
	}
	for i, s := range plan.sources {
		var d []int32
		if i < phase1 {
			var err error
			if d, err = ref.Dijkstra[int32](g, s); err != nil {
				t.Fatal(err)
			}
		} else {
			seed := plan.seeds[i-phase1]
			if seed.source != s || seed.dst != plan.rows[i] {
				t.Fatalf("seed %d is for source %d row %d, want %d row %d", i-phase1, seed.source, seed.dst, s, plan.rows[i])
			}
			d = make([]int32, n)
			for v := range d {
				best := int64(inf)
				for _, a := range plan.minArcs[seed.first : seed.first+seed.count] {
					from := rows[a.row]
					if j := slices.Index(plan.rows, a.row); from == nil || j < 0 || phaseOf(j) >= phaseOf(i) {
						t.Fatalf("seed of source %d reads row %d, which no earlier phase computes", s, a.row)
					}
					if from[v] != inf {
						best = min(best, int64(from[v])+int64(weights[a.arc]))
					}
				}
				d[v] = int32(best)
			}
			correctFrom(g, s, d)
		}
		if rows[plan.rows[i]] != nil {
			t.Fatalf("row %d computed twice", plan.rows[i])
		}
		rows[plan.rows[i]] = d
	}
	computed := slices.Clone(rows) // what the minimums may read
	for _, m := range plan.mins {
		out := make([]int32, n)
		for v := range out {
			best := int64(inf)
			for _, a := range plan.minArcs[m.first : m.first+m.count] {
				from := computed[a.row]
				if from == nil {
					t.Fatalf("minimum of source %d reads row %d, which the kernel does not compute", m.source, a.row)
				}
				if from[v] != inf {
					best = min(best, int64(from[v])+int64(weights[a.arc]))
				}
			}
			out[v] = int32(best)
			if v == int(m.source) {
				out[v] = 0
			}
		}
		if rows[m.dst] != nil {
			t.Fatalf("row %d computed and derived", m.dst)
		}
		rows[m.dst] = out
	}
	for pass, items := range [][]derivation{plan.derive[:plan.passes[0]], plan.derive[plan.passes[0]:]} {
		for _, d := range items {
			from := rows[d.src]
			out := make([]int32, n)
			for v := range out {
				switch {
				case v == int(d.leaf):
					out[v] = 0
				case from[v] == inf:
					out[v] = from[v]
				default:
					out[v] = from[v] + weights[d.arc]
				}
			}
			if pass == 1 && d.dst != d.src {
				t.Fatalf("a second-pass derivation not in place")
			}
			rows[d.dst] = out
		}
	}
	return rows
}

// correctFrom is the second phase of the batched kernel on the host: label
// correcting from s alone over labels d that hold the seeds.
func correctFrom(g *graph.CSR, s int32, d []int32) {
	weights := graph.WeightsOf[int32](g)
	d[s] = 0
	queue := []int32{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := g.Offsets[u]; e < g.Offsets[u+1]; e++ {
			if v := g.Targets[e]; d[u]+weights[e] < d[v] {
				d[v] = d[u] + weights[e]
				queue = append(queue, v)
			}
		}
	}
}

// TestPackInt32s checks the packing of the batched plan's int32 arrays into
// the 8-byte words of its upload: read back as little-endian int32s, the
// words give the values in order, an odd count padded with a zero.
func TestPackInt32s(t *testing.T) {
	for _, v := range [][]int32{{}, {7}, {1, -2}, {5, 6, 7}, {-1, 2147483647, -2147483648, 0}} {
		words := packInt32s([]int64{42}, v)
		if len(words) != 1+(len(v)+1)/2 || words[0] != 42 {
			t.Fatalf("%v: %d words, first %d", v, len(words), words[0])
		}
		if len(v) == 0 {
			continue
		}
		got := unsafe.Slice((*int32)(unsafe.Pointer(&words[1])), 2*(len(words)-1))
		if !slices.Equal(got[:len(v)], v) || (len(v)%2 == 1 && got[len(v)] != 0) {
			t.Fatalf("packed %v as %v", v, got)
		}
	}
}

// TestByRank checks the counting sort of sources by rank against a stable
// comparison sort, with repeated sources.
func TestByRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 500} {
		rank := make([]int32, n)
		for i, v := range rng.Perm(n) {
			rank[i] = int32(v)
		}
		ks := make([]int32, 3*n)
		for i := range ks {
			ks[i] = int32(rng.IntN(n))
		}
		want := make([]int32, len(ks))
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return int(rank[ks[a]] - rank[ks[b]]) })
		if got := byRank(rank, ks); !slices.Equal(got, want) {
			t.Fatalf("n=%d: byRank = %v, want %v", n, got, want)
		}
	}
}

// TestByDegree checks the counting sort by out-degree, both ways, against
// a stable comparison sort.
func TestByDegree(t *testing.T) {
	el, err := gen.RMAT(9, 8, 5)
	g := undirectedGraph(t, el, err)
	rng := rand.New(rand.NewPCG(5, 6))
	vs := make([]int32, 2*g.NumVertices)
	for i := range vs {
		vs[i] = int32(rng.IntN(g.NumVertices))
	}
	for _, desc := range []bool{false, true} {
		want := make([]int32, len(vs))
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int {
			da, db := g.OutDegree(graph.VertexID(vs[a])), g.OutDegree(graph.VertexID(vs[b]))
			if desc {
				da, db = db, da
			}
			return int(da - db)
		})
		if got := byDegree(g, vs, desc); !slices.Equal(got, want) {
			t.Fatalf("desc=%v: byDegree differs from a stable sort", desc)
		}
	}
}

func sorted(xs []int32) []int32 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys
}
