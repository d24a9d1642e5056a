package gpu

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// suiteGraphs reads the undirected edge files named by
// PATHCTL_BENCH_GRAPHS (comma-separated paths, as `pathctl gen` writes
// them for bench/bench_gpu.py), so that the kernel is timed on exactly the
// graphs of the benchmark table.
func suiteGraphs(b testing.TB) map[string]*graph.CSR {
	list := os.Getenv("PATHCTL_BENCH_GRAPHS")
	if list == "" {
		b.Skip("PATHCTL_BENCH_GRAPHS names no edge files")
	}
	out := map[string]*graph.CSR{}
	for _, p := range strings.Split(list, ",") {
		t, err := arrowio.ReadEdges(p, arrowio.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		g, err := graph.Build(&t.Edges, graph.BuildOptions{Undirected: true})
		if err != nil {
			b.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))] = g
	}
	return out
}

// BenchmarkBatchedSuite runs every source of each graph as one block (as
// the pipeline does when the device holds it) through the batched kernel,
// in each configuration of PATHCTL_BATCHED_VARIANTS (suiteVariant), and
// reports the kernel time. A variant with a cutoff (cut=D) runs the narrowed request, its
// kernel time including the gather's clip, and checks rows clipped at D.
func BenchmarkBatchedSuite(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	graphs := suiteGraphs(b)
	for name, g := range graphs {
		n := g.NumVertices
		sources := make([]graph.VertexID, n)
		for i := range sources {
			sources[i] = graph.VertexID(i)
		}
		check := []int{0, n / 3, n - 1}
		wants := map[int][]int32{}
		for _, i := range check {
			if wants[i], err = ref.Dijkstra[int32](g, sources[i]); err != nil {
				b.Fatal(err)
			}
		}
		out := graph.NewBlock(sources, n, g.Type, false)
		for _, variant := range strings.Split(os.Getenv("PATHCTL_BATCHED_VARIANTS"), ",") {
			b.Run(fmt.Sprintf("%s/n=%d/m=%d/%s", name, n, g.NumEdges(), variant), func(b *testing.B) {
				cfg, err := suiteVariant(variant)
				if err != nil {
					b.Fatal(err)
				}
				cut, err := suiteCutoff(variant)
				if err != nil {
					b.Fatal(err)
				}
				req := graph.Request{Algorithm: Batched}
				if !math.IsInf(cut, 1) {
					req.Cutoff, req.HasCutoff = cut, true
				}
				r, err := e.prepare(context.Background(), g, req, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				var kernel float64
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					kernel += r.KernelTime().Seconds()
				}
				for _, i := range check {
					row := graph.Row[int32](out, i)
					want := clipRows([][]int32{wants[i]}, cut)[0]
					for v := range row {
						if row[v] != want[v] {
							b.Fatalf("source %d: dist[%d] = %d, want %d", i, v, row[v], want[v])
						}
					}
				}
				b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
			})
		}
	}
}

// suiteVariant is the configuration a variant of BenchmarkBatchedSuite
// names: dash-separated words over the default configuration with the
// block's order: cluster or bfs
// (the source order), noleaves (every source in the kernel but for
// minimums), nomins (no minimum derivations), serial (clusters on one
// core), phases=X/Y (later phases' cumulative shares; "phases=" runs two),
// seeds=X (the first phase's share, also on meshes), sparse=X, step=X (the
// threshold's scale, also on graphs that do not look like meshes),
// id (the sources by vertex id), noexact (no
// float reductions), nearfar and nonearfar (near-far rounds forced on or
// off: plan.Config.NearFarMode), nfscale=X (NearFarScale), nfown=N
// (NearFarOwn).
func suiteVariant(variant string) (batchedConfig, error) {
	cfg := defaultBatchedConfig()
	cfg.Order = plan.OrderBlock
	var err error
	for _, word := range strings.Split(variant, "-") {
		switch {
		case word == "nocut": // suiteCutoff's words
			cfg.KernelCutoff = false
		case strings.HasPrefix(word, "reach="):
			if cfg.CutoffReach, err = strconv.ParseFloat(word[6:], 64); err != nil {
				return cfg, err
			}
		case word == "cluster":
			cfg.Order = plan.OrderCluster
		case word == "bfs":
			cfg.Order = plan.OrderRank
		case word == "noleaves":
			cfg.Leaves = false
		case word == "nomins":
			cfg.Mins = false
		case word == "serial":
			cfg.ClusterChunk = math.MaxInt32
		case strings.HasPrefix(word, "seeds="):
			if cfg.Seeds, err = strconv.ParseFloat(word[6:], 64); err != nil {
				return cfg, err
			}
			cfg.SeedsOnMeshes = true
		case word == "phases=": // two phases
			cfg.Phases, cfg.PhasesWeighted = nil, nil
		case strings.HasPrefix(word, "phases="): // later phases' cumulative shares, slash-separated
			cfg.Phases = nil
			for _, f := range strings.Split(word[7:], "/") {
				x, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return cfg, err
				}
				cfg.Phases = append(cfg.Phases, x)
			}
			cfg.PhasesWeighted = cfg.Phases
		case strings.HasPrefix(word, "sparse="):
			if cfg.Sparse, err = strconv.Atoi(word[7:]); err != nil {
				return cfg, err
			}
		case word == "id":
			cfg.Order = plan.OrderID
		case word == "noexact":
			cfg.ExactFloats = false
		case strings.HasPrefix(word, "step="):
			if cfg.DeltaScale, err = strconv.ParseFloat(word[5:], 64); err != nil {
				return cfg, err
			}
			cfg.StepMeshesOnly = false
		case word == "nearfar":
			cfg.NearFarMode = plan.NearFarOn
		case word == "nonearfar":
			cfg.NearFarMode = plan.NearFarOff
		case strings.HasPrefix(word, "nfscale="):
			if cfg.NearFarScale, err = strconv.ParseFloat(word[8:], 64); err != nil {
				return cfg, err
			}
		case strings.HasPrefix(word, "nfown="):
			if cfg.NearFarOwn, err = strconv.Atoi(word[6:]); err != nil {
				return cfg, err
			}
		}
	}
	return cfg, cfg.Check()
}

// suiteCutoff is the cutoff a variant of BenchmarkBatchedSuite names with
// the word cut=D, or +Inf. suiteVariant reads the cutoff's other words:
// nocut (the cutoff applied by the gather alone, not in the kernel) and
// reach=X (CutoffReach).
func suiteCutoff(variant string) (float64, error) {
	cut := math.Inf(1)
	for _, word := range strings.Split(variant, "-") {
		if strings.HasPrefix(word, "cut=") {
			var err error
			if cut, err = strconv.ParseFloat(word[4:], 64); err != nil {
				return cut, fmt.Errorf("variant %q: %w", variant, err)
			}
		}
	}
	return cut, nil
}
