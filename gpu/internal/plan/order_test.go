package plan

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestClusterSourcesIsAPermutation checks that the source order of the
// batched kernel takes every row of the block exactly once, for blocks that
// hold every vertex and blocks that hold a scattered subset, on one core
// and in chunks, and that a grid's clusters are compact (a group's sources
// lie within a few steps of each other).
func TestClusterSourcesIsAPermutation(t *testing.T) {
	t.Parallel()
	el, err := gen.Grid(40, 40, 3)
	g := undirectedGraph(t, el, err)
	rank := BFSRank(g)
	seen := make([]bool, g.NumVertices)
	for _, r := range rank {
		if r < 0 || int(r) >= g.NumVertices || seen[r] {
			t.Fatalf("BFSRank is not a permutation: %v", r)
		}
		seen[r] = true
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const chunk = 2 * BatchWidth // chunks even on these small blocks
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
		out := clusterSources(g, src, idx, chunk, false)
		if par := clusterSources(g, src, idx, chunk, true); !slices.Equal(sorted(par), sorted(out)) {
			t.Fatalf("k=%d: clustering in chunks does not take the same rows", k)
		}
		for i, v := range sorted(out) {
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

// TestBFSRankStartsAtTheHub checks that the rank numbers the vertex of
// highest out-degree first and its neighbours next, and numbers every
// vertex of a graph in several components.
func TestBFSRankStartsAtTheHub(t *testing.T) {
	t.Parallel()
	// A star around 3 (arcs both ways), and a separate pair 5–6.
	e := &graph.Edges{NumVertices: 7, Src: []graph.VertexID{3, 3, 3, 5}, Dst: []graph.VertexID{0, 1, 4, 6}}
	g, err := graph.Build(e, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	rank := BFSRank(g)
	if rank[3] != 0 {
		t.Fatalf("hub ranked %d, want 0", rank[3])
	}
	for _, v := range []int{0, 1, 4} {
		if rank[v] < 1 || rank[v] > 3 {
			t.Errorf("neighbour %d of the hub ranked %d, want 1..3", v, rank[v])
		}
	}
	if got := sorted(rank); !slices.Equal(got, []int32{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("rank %v is not a permutation", rank)
	}
}

// TestByRank checks the counting sort of sources by rank against a stable
// comparison sort, with repeated sources.
func TestByRank(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// undirectedGraph builds the undirected CSR of a generated edge list.
func undirectedGraph(t testing.TB, el *gen.EdgeList, err error) *graph.CSR {
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

func sorted(xs []int32) []int32 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys
}
