package cpu

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// BenchmarkAPSP times all-pairs runs (every vertex a source) of each
// algorithm on random graphs of n = 4096 and average out-degree 16, and
// reports pairs per second.
func BenchmarkAPSP(b *testing.B) {
	for _, bg := range []struct {
		name string
		kind testgraphs.WeightKind
		maxW int
	}{
		{"int-1-100", testgraphs.Int, 100},
		{"float64", testgraphs.Float64, 1},
		{"unweighted", testgraphs.Unweighted, 1},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		n := 4096
		e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 16 * n, Kind: bg.kind, MinWeight: 1, MaxWeight: bg.maxW})
		if bg.kind == testgraphs.Float64 {
			e.Float64Weights = e.Float64Weights[:0]
			for range e.Src {
				e.Float64Weights = append(e.Float64Weights, rng.Float64())
			}
		}
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, algo := range graph.Algorithms {
			b.Run(bg.name+"/"+string(algo), func(b *testing.B) {
				eng := New()
				r, err := eng.Prepare(context.Background(), g, graph.Request{Algorithm: algo})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				sources := allSources(n)
				if algo != graph.Auto && algo != graph.BFS && algo != graph.BFSLevel {
					sources = sources[:256] // the seed kernels are slower; time a slice
				}
				out := graph.NewBlock(sources, n, r.DistType(), false)
				b.ResetTimer()
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(sources)*n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			})
		}
	}
}
