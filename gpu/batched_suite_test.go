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
	"time"

	"github.com/pathctl/pathctl/arrowio"
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
// with and without the breadth-first source order, and reports the kernel
// time; the "trace" variant prints the work of every round.
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
		r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: Batched})
		if err != nil {
			b.Fatal(err)
		}
		out := graph.NewBlock(sources, n, r.DistType(), false)
		for _, variant := range strings.Split(os.Getenv("PATHCTL_BATCHED_VARIANTS"), ",") {
			b.Run(fmt.Sprintf("%s/n=%d/m=%d/%s", name, n, g.NumEdges(), variant), func(b *testing.B) {
				// A variant is dash-separated words: trace, cluster or bfs (the
				// source order, else the block's), noleaves (every source in the kernel but for
				// minimums), nomins (no minimum derivations), serial (clusters on one core), phases=X/Y (later phases' cumulative shares), seeds=X (batchedSeeds, also on meshes), sparse=X (batchedSparse), step=X (batchedDeltaScale,
				// also on graphs that do not look like meshes).
				defer func(o string, s float64, m, l, mins bool, seeds float64, meshes bool, chunk, sparse int, phases, weighted []float64) {
					batchedOrder, batchedDeltaScale, batchedMeshOnly, batchedLeaves, batchedMins, batchedSparse = o, s, m, l, mins, sparse
					batchedSeeds, batchedSeedsMeshes, clusterChunk, batchedPhases, batchedPhasesWeighted = seeds, meshes, chunk, phases, weighted
				}(batchedOrder, batchedDeltaScale, batchedMeshOnly, batchedLeaves, batchedMins, batchedSeeds, batchedSeedsMeshes, clusterChunk, batchedSparse, batchedPhases, batchedPhasesWeighted)
				batchedOrder, batchedLeaves, batchedMins = "", true, true
				for _, word := range strings.Split(variant, "-") {
					switch {
					case word == "cluster" || word == "bfs":
						batchedOrder = word
					case word == "noleaves":
						batchedLeaves = false
					case word == "nomins":
						batchedMins = false
					case word == "serial":
						clusterChunk = math.MaxInt32
					case strings.HasPrefix(word, "seeds="):
						if batchedSeeds, err = strconv.ParseFloat(word[6:], 64); err != nil {
							b.Fatal(err)
						}
						batchedSeedsMeshes = true
					case word == "phases=": // two phases
						batchedPhases, batchedPhasesWeighted = nil, nil
					case strings.HasPrefix(word, "phases="): // later phases' cumulative shares, slash-separated
						batchedPhases = nil
						for _, f := range strings.Split(word[7:], "/") {
							x, err := strconv.ParseFloat(f, 64)
							if err != nil {
								b.Fatal(err)
							}
							batchedPhases = append(batchedPhases, x)
						}
						batchedPhasesWeighted = batchedPhases
					case strings.HasPrefix(word, "sparse="):
						if batchedSparse, err = strconv.Atoi(word[7:]); err != nil {
							b.Fatal(err)
						}
					case strings.HasPrefix(word, "step="):
						if batchedDeltaScale, err = strconv.ParseFloat(word[5:], 64); err != nil {
							b.Fatal(err)
						}
						batchedMeshOnly = false
					}
				}
				if strings.HasPrefix(variant, "trace") {
					var tot [6]uint64
					rounds := 0
					batchedTrace = func(round int, c [6]uint64, d time.Duration) {
						rounds = round
						for i := range tot {
							tot[i] += c[i]
						}
						if round <= 12 || round%16 == 0 {
							fmt.Printf("  round %4d: %8.2f ms  chunks %9d  expand %9d  lanes %10d (%.1f/warp)  arcs %11d  tries %12d  wins %12d\n",
								round, d.Seconds()*1e3, c[5], c[3], c[4], float64(c[4])/max(float64(c[3]), 1), c[0], c[1], c[2])
						}
					}
					defer func() { batchedTrace = nil }()
					for b.Loop() {
						if err := r.Run(context.Background(), out); err != nil {
							b.Fatal(err)
						}
					}
					fmt.Printf("%s %s: %d rounds; expansions %d (%.2f per vertex-group), lanes %.2f per expansion, lane expansions per (source,vertex) %.2f, arcs walked %d (%.2f × m × groups), tries %d, wins %d\n",
						name, variant, rounds, tot[3], float64(tot[3])/float64(n)/float64((n+31)/32), float64(tot[4])/max(float64(tot[3]), 1),
						float64(tot[4])/float64(n)/float64(n), tot[0], float64(tot[0])/float64(g.NumEdges())/float64((n+31)/32), tot[1], tot[2])
					return
				}
				var kernel float64
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					kernel += r.KernelTime().Seconds()
				}
				for _, i := range check {
					row := graph.Row[int32](out, i)
					for v := range row {
						if row[v] != wants[i][v] {
							b.Fatalf("source %d: dist[%d] = %d, want %d", i, v, row[v], wants[i][v])
						}
					}
				}
				b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
			})
		}
		r.Close()
	}
}

// BenchmarkBatchedPlan times the host side of a batched block of every
// source (leaves, minimums, the phase split, ordering and seeds) on the
// graphs of PATHCTL_BENCH_GRAPHS; it needs no GPU.
func BenchmarkBatchedPlan(b *testing.B) {
	for name, g := range suiteGraphs(b) {
		src := make([]int32, g.NumVertices)
		for i := range src {
			src[i] = int32(i)
		}
		r := &Runner{g: g}
		r.batchedGraph()
		b.Run(name, func(b *testing.B) {
			var p kernelSources
			for b.Loop() {
				p = batchedPlanFor(r, src)
			}
			b.ReportMetric(float64(len(p.sources)), "kernel-sources")
			first := 0
			if len(p.cuts) > 0 {
				first = p.cuts[0]
			}
			b.ReportMetric(float64(first), "first-phase")
			b.ReportMetric(float64(len(p.mins)), "minimums")
		})
	}
}
