package gpu

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestClusterSourcesIsAPermutation checks that the source order of the
// batched kernel takes every row of the block exactly once, for blocks that
// hold every vertex and blocks that hold a scattered subset, and that a
// grid's clusters are compact (a group's sources lie within a few steps
// of each other).
func TestClusterSourcesIsAPermutation(t *testing.T) {
	el, err := gen.Grid(40, 40, 3)
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

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
