package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// BenchmarkPlan times the host plan of a batched block of every source
// (leaves, minimums, the phase split, ordering and seeds; the graph's rank
// and shape are measured once, before the timer) on the undirected edge
// files named by PATHCTL_BENCH_GRAPHS (comma-separated paths, as `pathctl
// gen` writes them for bench/bench_gpu.py), else on the test graphs.
func BenchmarkPlan(b *testing.B) {
	graphs := map[string]*graph.CSR{}
	if list := os.Getenv("PATHCTL_BENCH_GRAPHS"); list != "" {
		for _, p := range strings.Split(list, ",") {
			t, err := arrowio.ReadEdges(p, arrowio.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			g, err := graph.Build(&t.Edges, graph.BuildOptions{Undirected: true})
			if err != nil {
				b.Fatal(err)
			}
			graphs[strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))] = g
		}
	} else {
		graphs = planGraphs(b)
	}
	for name, g := range graphs {
		src := make([]int32, g.NumVertices)
		for i := range src {
			src[i] = int32(i)
		}
		pg := NewGraph(g)
		pg.Shape()
		b.Run(name, func(b *testing.B) {
			var p *Block
			for b.Loop() {
				var err error
				if p, err = pg.Plan(src, DefaultConfig()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(p.Sources)), "kernel-sources")
			first := len(p.Sources)
			if len(p.Cuts) > 0 {
				first = p.Cuts[0]
			}
			b.ReportMetric(float64(first), "first-phase")
			b.ReportMetric(float64(len(p.Mins)), "minimums")
		})
	}
}
