package gpu

import (
	"math/rand/v2"
	"slices"
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
		out := clusterSources(g, src, idx)
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
// planned rows, then applying the derivations in their two passes as
// batched_derive does, must give every block row its source's distances;
// on undirected R-MAT graphs (many leaves) and blocks that hold every
// vertex, a scattered subset (parents outside the block) or one source.
func TestBatchedPlanDerivesLeaves(t *testing.T) {
	el, err := gen.RMAT(9, 4, 5, gen.WithWeights(1, 9))
	g := undirectedGraph(t, el, err)
	n := g.NumVertices
	leaves := 0
	for v := range n {
		if _, _, ok := leafParent(g, int32(v)); ok {
			leaves++
		}
	}
	if leaves < n/20 {
		t.Fatalf("only %d leaves of %d vertices: the test graph does not exercise the plan", leaves, n)
	}
	weights := graph.WeightsOf[int32](g)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, order := range []string{"cluster", ""} {
		for _, k := range []int{n, 200, 1} {
			src := make([]int32, k)
			for i, v := range rng.Perm(n)[:k] {
				src[i] = int32(v)
			}
			r := &Runner{g: g}
			batchedOrder = order
			plan := batchedPlanFor(r, src)
			batchedOrder = "cluster"
			if plan.rows == nil {
				if k > BatchWidth || leaves == 0 {
					t.Fatalf("k=%d: no plan", k)
				}
				continue
			}
			rows := make([][]int32, k)
			for i, s := range plan.sources {
				d, err := ref.Dijkstra[int32](g, s)
				if err != nil {
					t.Fatal(err)
				}
				if rows[plan.rows[i]] != nil {
					t.Fatalf("k=%d: row %d computed twice", k, plan.rows[i])
				}
				rows[plan.rows[i]] = d
			}
			for pass, items := range [][]derivation{plan.derive[:plan.passes[0]], plan.derive[plan.passes[0]:]} {
				for _, d := range items {
					from := rows[d.src]
					out := make([]int32, n)
					for v := range out {
						switch {
						case v == int(d.leaf):
							out[v] = 0
						case from[v] == graph.Infinity[int32]():
							out[v] = from[v]
						default:
							out[v] = from[v] + weights[d.arc]
						}
					}
					if pass == 1 && d.dst != d.src {
						t.Fatalf("k=%d: a second-pass derivation not in place", k)
					}
					rows[d.dst] = out
				}
			}
			for i, s := range src {
				want, err := ref.Dijkstra[int32](g, s)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(rows[i], want) {
					t.Fatalf("order %q, k=%d: row %d (source %d) differs from Dijkstra", order, k, i, s)
				}
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
