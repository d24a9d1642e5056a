package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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

// BenchmarkPlanResident plans a block of a random share of the vertices
// (PATHCTL_BENCH_SHARE, default 0.02: R-MAT 20's stats blocks on an 80 GB
// device) beside the rows of 0 to 4,096 hubs (StartResident, as the GPU
// runner's Config.HubRows keeps them), on the graphs of BenchmarkPlan, and
// reports what the kernel is left with: its sources, the minimums and
// leaves derived, the kernel sources started from resident rows and the
// seed arcs they read.
func BenchmarkPlanResident(b *testing.B) {
	share := 0.02
	if s := os.Getenv("PATHCTL_BENCH_SHARE"); s != "" {
		var err error
		if share, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatal(err)
		}
	}
	for name, g := range benchGraphs(b) {
		n := g.NumVertices
		k := max(1, int(share*float64(n)))
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]int32, k)
		for i, v := range rng.Perm(n)[:k] {
			src[i] = int32(v)
		}
		pg := NewGraph(g)
		pg.Shape()
		last := -1
		for _, h := range []int{0, 256, 1024, 4096} {
			res := Resident{Vertices: pg.Hubs(min(h, k/8)), FirstRow: int32(k)}
			if len(res.Vertices) == last {
				continue
			}
			last = len(res.Vertices)
			b.Run(fmt.Sprintf("%s/k=%d/hubs=%d", name, k, len(res.Vertices)), func(b *testing.B) {
				var p *Block
				for b.Loop() {
					var finish func()
					var err error
					if p, finish, err = pg.StartResident(src, DefaultConfig(), math.Inf(1), res); err != nil {
						b.Fatal(err)
					}
					if finish != nil {
						finish()
					}
				}
				seeded, arcs := 0, 0
				if p.SeedFirst {
					for _, s := range p.Seeds {
						if s.Count > 0 {
							seeded++
						}
						arcs += int(s.Count)
					}
				}
				b.ReportMetric(float64(len(p.Sources)), "kernel-sources")
				b.ReportMetric(float64(len(p.Mins)), "minimums")
				b.ReportMetric(float64(len(p.Derive)), "leaves")
				b.ReportMetric(float64(seeded), "seeded")
				b.ReportMetric(float64(arcs), "seed-arcs")
				b.ReportMetric(float64(len(p.Cuts)+1), "phases")
			})
		}
	}
}
