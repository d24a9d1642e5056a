package hierarchy_test

// An external test package: the benchmark runs the CPU engine beside the
// hierarchy, and package cpu imports hierarchy (its ch runner).

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// gridCSR is pathctl gen grid's graph: a rows×cols two-way grid, weights
// 1..100.
func gridCSR(b *testing.B, rows, cols int) *graph.CSR {
	b.Helper()
	list, err := gen.Grid(rows, cols, 1)
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
	return g
}

// BenchmarkHierarchy builds the hierarchy of road-like grids and times its
// queries beside the CPU engine's one-to-all search:
//
//	build            preprocessing (s/build, shortcuts/arc)
//	phast            one-to-all by PHAST from one source
//	cpu-one-to-all   the CPU engine (auto) from the same source
//	distance         one pair, bidirectional upward search
//	table-1000x1000  many-to-many, 1000 random sources × 1000 targets
func BenchmarkHierarchy(b *testing.B) {
	for _, size := range []struct {
		name       string
		rows, cols int
	}{{"grid-256", 256, 256}, {"grid-1000", 1000, 1000}} {
		b.Run(size.name, func(b *testing.B) {
			g := gridCSR(b, size.rows, size.cols)
			n := g.NumVertices
			start := time.Now()
			h, err := hierarchy.Build(g, hierarchy.Options{})
			if err != nil {
				b.Fatal(err)
			}
			buildTime := time.Since(start)
			rng := rand.New(rand.NewPCG(1, 1))
			source := graph.VertexID(rng.IntN(n))

			b.Run("build", func(b *testing.B) {
				for b.Loop() {
					if _, err := hierarchy.Build(g, hierarchy.Options{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(h.Shortcuts())/float64(g.NumEdges()), "shortcuts/arc")
				b.ReportMetric(float64(h.Arcs())/float64(g.NumEdges()), "hierarchy-arcs/arc")
			})
			b.Logf("%s: first build %v, %d shortcuts for %d arcs", size.name, buildTime, h.Shortcuts(), g.NumEdges())
			b.Run("phast", func(b *testing.B) {
				q := h.NewQuery()
				row := make([]int64, n)
				for b.Loop() {
					if err := q.DistancesFrom(source, row); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			})
			b.Run("cpu-one-to-all", func(b *testing.B) {
				r, err := cpu.New().Prepare(context.Background(), g, graph.Request{Algorithm: graph.Auto})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				out := graph.NewBlock([]graph.VertexID{source}, n, r.DistType(), false)
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			})
			b.Run("distance", func(b *testing.B) {
				q := h.NewQuery()
				for b.Loop() {
					if _, err := q.Distance(source, graph.VertexID(rng.IntN(n))); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("table-1000x1000", func(b *testing.B) {
				sources, targets := make([]graph.VertexID, 1000), make([]graph.VertexID, 1000)
				for i := range sources {
					sources[i], targets[i] = graph.VertexID(rng.IntN(n)), graph.VertexID(rng.IntN(n))
				}
				for b.Loop() {
					if _, err := h.Table(sources, targets); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			})
		})
	}
}
