package cpu

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestRunOverwritesStaleBlocks: Run writes every distance (and every
// predecessor) of a full-row block, so that a block whose memory held an
// earlier block's rows (pipeline's block pool) comes out as a fresh one,
// for every algorithm, with and without a cutoff, on graphs with
// unreachable vertices.
func TestRunOverwritesStaleBlocks(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 21))
	ctx := context.Background()
	for _, sh := range shapes() {
		n := 20 + rng.IntN(60)
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{
			N: n, M: n, Kind: sh.kind, MinWeight: 0, MaxWeight: 1 + rng.IntN(12), Dyadic: true,
		})
		g, err := graph.Build(e, graph.BuildOptions{Undirected: sh.undirected, DistType: sh.distType})
		if err != nil {
			t.Fatal(err)
		}
		for ename, eng := range engines() {
			for _, algo := range append([]graph.Algorithm{graph.Auto}, graph.Algorithms...) {
				for _, cut := range []bool{false, true} {
					req := graph.Request{Algorithm: algo, WithPredecessors: algo.HasPredecessors()}
					if cut {
						req.HasCutoff, req.Cutoff = true, 3
					}
					r, err := eng.Prepare(ctx, g, req)
					if err != nil {
						t.Fatal(err)
					}
					sources := allSources(n)
					fresh := graph.NewBlock(sources, n, r.DistType(), req.WithPredecessors)
					stale := graph.NewBlock(sources, n, r.DistType(), req.WithPredecessors)
					fillStale(stale)
					for _, b := range []*graph.Block{fresh, stale} {
						if err := r.Run(ctx, b); err != nil {
							t.Fatal(err)
						}
					}
					r.Close()
					if got, want := asFloat(stale), asFloat(fresh); !slices.Equal(got, want) {
						t.Fatalf("seed %d %s %s %s cut %v: a stale block's distances differ at %d", seed, sh, ename, algo, cut, firstDiff(got, want))
					}
					if !slices.Equal(stale.Pred, fresh.Pred) {
						t.Fatalf("seed %d %s %s %s cut %v: a stale block's predecessors differ", seed, sh, ename, algo, cut)
					}
				}
			}
		}
	}
}

// fillStale gives every distance and predecessor of b a value no run writes
// (a small distance, a vertex that is nobody's predecessor here).
func fillStale(b *graph.Block) {
	switch d := b.Dist.(type) {
	case []int32:
		for i := range d {
			d[i] = 1
		}
	case []int64:
		for i := range d {
			d[i] = 1
		}
	case []float32:
		for i := range d {
			d[i] = 0.5
		}
	case []float64:
		for i := range d {
			d[i] = 0.5
		}
	}
	for i := range b.Pred {
		b.Pred[i] = graph.VertexID(1 << 30)
	}
}
