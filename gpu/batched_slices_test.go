package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestBatchedSlices runs the batched kernel with its groups in slices of
// one group (plan.Config.SliceBytes of 0.0001 MiB, "slicemb=0.0001": every
// slice's rounds alone, the last-change word reset between them) against
// ref.Dijkstra (full rows, blocks of 1 to every source, a partial last
// group) and the CPU's stats.
func TestBatchedSlices(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	tuning, err := ParseTuning("slicemb=0.0001")
	if err != nil {
		t.Fatal(err)
	}
	for _, dk := range distKinds {
		if dk.name != "int32" && dk.name != "float32" && dk.name != "float64-uniform" {
			continue
		}
		for _, n := range []int{300, 777} {
			o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
				Dyadic: !dk.uniform, Duplicates: n / 10}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{Undirected: n == 300, DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			sources := pickSources(rng, n)
			t.Run(fmt.Sprintf("%s/n=%d", dk.name, n), func(t *testing.T) {
				checkBatchedFrom(t, e, g, sources, tuning.batched())
				want, absSum, absHarm := cpuStats(t, g, graph.Request{Algorithm: graph.Dijkstra}, sources)
				r, err := e.PrepareTuned(context.Background(), g, graph.Request{Algorithm: graph.Auto}, tuning)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				got, err := r.RunStats(context.Background(), sources)
				if err != nil {
					t.Fatal(err)
				}
				compareStats(t, got, want, absSum, absHarm)
			})
		}
	}
}
