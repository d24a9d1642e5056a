package cpu

import (
	"context"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// betweennessBenchSources is the slice of sources a benchmark iteration
// runs: exact betweenness of R-MAT 14 is 16,384 searches, minutes on two
// cores; the figure reported is the whole run extrapolated from the slice
// (searches cost alike from source to source on these graphs).
const betweennessBenchSources = 256

// BenchmarkBetweenness times Brandes's passes on R-MAT 14 (edge factor
// 16, weights 1..100, and as hops) and on a 100×100 grid (weights 1..3,
// many ties; and hops), on every core. It reports sources/s and the
// seconds an exact run (every vertex a source) would take, and checks the
// slice's sums against the serial oracle on the first 8 sources.
func BenchmarkBetweenness(b *testing.B) {
	for _, bg := range []struct {
		name string
		list func() (*gen.EdgeList, error)
		hops bool
	}{
		{"rmat14-int-1-100", func() (*gen.EdgeList, error) { return gen.RMAT(14, 16, 1, gen.WithWeights(1, 100)) }, false},
		{"rmat14-hops", func() (*gen.EdgeList, error) { return gen.RMAT(14, 16, 1) }, true},
		{"grid100-int-1-3", func() (*gen.EdgeList, error) { return gen.Grid(100, 100, 1, gen.WithWeights(1, 3)) }, false},
		{"grid100-hops", func() (*gen.EdgeList, error) { return gen.Grid(100, 100, 1) }, true},
	} {
		list, err := bg.list()
		if err != nil {
			b.Fatal(err)
		}
		e, err := list.GraphEdges()
		if err != nil {
			b.Fatal(err)
		}
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sources := allSources(g.NumVertices)[:min(betweennessBenchSources, g.NumVertices)]
		opt := BetweennessOptions{Hops: bg.hops}
		want, err := ref.Brandes(g, sources[:8], false, bg.hops)
		if err != nil {
			b.Fatal(err)
		}
		got, err := New().Betweenness(context.Background(), g, sources[:8], opt)
		if err != nil {
			b.Fatal(err)
		}
		for v := range want {
			if !closeEnough(got[v], want[v]) {
				b.Fatalf("%s: vertex %d: %v, oracle %v", bg.name, v, got[v], want[v])
			}
		}
		b.Run(bg.name, func(b *testing.B) {
			eng := New()
			for b.Loop() {
				if _, err := eng.Betweenness(context.Background(), g, sources, opt); err != nil {
					b.Fatal(err)
				}
			}
			perSource := b.Elapsed().Seconds() / float64(b.N*len(sources))
			b.ReportMetric(1/perSource, "sources/s")
			b.ReportMetric(perSource*float64(g.NumVertices), "s/exact")
		})
	}
}
