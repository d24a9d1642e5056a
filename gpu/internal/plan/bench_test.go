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
	for name, g := range benchGraphs(b) {
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

// benchGraphs reads the undirected edge files named by
// PATHCTL_BENCH_GRAPHS (comma-separated paths, as `pathctl gen` writes
// them), else gives the test graphs.
func benchGraphs(b *testing.B) map[string]*graph.CSR {
	graphs := map[string]*graph.CSR{}
	list := os.Getenv("PATHCTL_BENCH_GRAPHS")
	if list == "" {
		return planGraphs(b)
	}
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
	return graphs
}

// BenchmarkRelabel times what the GPU runner's first batched block spends
// on a relabelling (Config.Relabel) on the host: the order (BFSRank
// included, as the runner's first plan would otherwise compute it later)
// and the permuted CSR, on the graphs of BenchmarkPlan.
func BenchmarkRelabel(b *testing.B) {
	for name, g := range benchGraphs(b) {
		for _, kind := range []Relabel{RelabelBFS, RelabelDegree, RelabelHubs, RelabelRCM} {
			b.Run(name+"/"+string(kind), func(b *testing.B) {
				for b.Loop() {
					Permute(g, Relabelling(g, kind, nil))
				}
				b.ReportMetric(float64(g.NumEdges()), "arcs")
			})
		}
	}
}
