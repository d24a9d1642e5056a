package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestBatchedAgainstOracles runs the batched kernel on random graphs of every
// distance type, directed and undirected, with and without predecessors,
// against internal/ref's Dijkstra. Vertex counts are no multiples of 32 (one
// is past 32·1024, so that a warp scans more than one load of summary
// words), and the blocks hold 1, 2 (the temporary frontier), 33 and 70
// sources besides all of them, so that the last group of a block is partial.
func TestBatchedAgainstOracles(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, n := range []int{1, 37, 300, 777, 33000} {
		for _, dk := range distKinds {
			for _, undirected := range []bool{false, true} {
				if n > 1000 && (undirected || dk.uniform) {
					continue // the large graph checks the scan, once per type
				}
				o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: !dk.uniform, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				if n > 1000 {
					sources = sources[:45]
				}
				t.Run(fmt.Sprintf("n=%d/%s/undirected=%v", n, dk.name, undirected), func(t *testing.T) {
					checkBatchedAgainstDijkstra(t, e, g, sources)
				})
			}
		}
	}
}

// checkBatchedAgainstDijkstra is checkBatched from the default
// configuration against ref.Dijkstra of g's distance type.
func checkBatchedAgainstDijkstra(t *testing.T, e *Engine, g *graph.CSR, sources []graph.VertexID) {
	t.Helper()
	checkBatchedFrom(t, e, g, sources, defaultBatchedConfig())
}

// checkBatchedFrom is checkBatched from the configuration base against
// ref.Dijkstra of g's distance type.
func checkBatchedFrom(t *testing.T, e *Engine, g *graph.CSR, sources []graph.VertexID, base batchedConfig) {
	t.Helper()
	switch g.Type {
	case graph.DistInt32:
		checkBatched(t, e, g, sources, base, oracle(t, g, sources, ref.Dijkstra[int32]))
	case graph.DistInt64:
		checkBatched(t, e, g, sources, base, oracle(t, g, sources, ref.Dijkstra[int64]))
	case graph.DistFloat32:
		checkBatched(t, e, g, sources, base, oracle(t, g, sources, ref.Dijkstra[float32]))
	case graph.DistFloat64:
		checkBatched(t, e, g, sources, base, oracle(t, g, sources, ref.Dijkstra[float64]))
	}
}

// checkBatched runs the batched kernel in a table of configurations, each
// base with some fields changed, against want.
func checkBatched[D graph.Number](t *testing.T, e *Engine, g *graph.CSR, sources []graph.VertexID, base batchedConfig, want [][]D) {
	t.Helper()
	for _, c := range []struct {
		withPred bool
		step     float64    // Request.Delta: the threshold's step per round
		scale    float64    // DeltaScale when step is 0
		order    plan.Order // Order
		leaves   bool       // Leaves
		mins     bool       // Mins
		seeds    float64    // Seeds, also on graphs that look like meshes
		phases   []float64  // Phases and PhasesWeighted
		sparse   int        // Sparse: expansions of at most this many lanes spread over arcs
		nearFar  bool       // NearFarMode on (the request's step is then the bucket width)
	}{
		{false, 0, 0.5, "cluster", true, true, 0, nil, 8, false}, {true, 0, 0.5, "cluster", true, true, 0, nil, 8, false}, // the default but for seeds: a threshold on mesh-like graphs only
		{false, 0.25, 0.5, "cluster", true, true, 0, nil, 32, false},              // a step below most weights: many rounds only wait; every expansion sparse
		{false, 0, 0, "cluster", true, false, 0, nil, 0, false},                   // no threshold: plain label correcting, no minimums, one lane per source
		{false, 0, 0, "", false, false, 0, nil, 8, false},                         // the block's order, every source in the kernel
		{true, 0, 0, "bfs", true, true, 0.15, nil, 32, false},                     // breadth-first rank order, two phases, every expansion sparse
		{false, 0, 0, "", false, true, 0, nil, 3, false},                          // minimums alone
		{false, 0, 0.5, "cluster", true, true, 0.15, nil, 8, false},               // two phases with a threshold
		{false, 0, 0, "", false, false, 0.3, nil, 0, false},                       // two phases alone, one lane per source
		{false, 0, 0, "cluster", true, true, 0.2, []float64{0.5, 0.8}, 16, false}, // four phases
		{true, 0, 0.5, "cluster", true, true, 0, nil, 8, true},                    // near-far rounds, buckets of twice the mean weight
		{false, 0.25, 0, "", false, false, 0.15, nil, 16, true},                   // near-far buckets of 0.25: many splits; two phases
	} {
		cfg := base
		cfg.DeltaScale, cfg.Order, cfg.Leaves, cfg.Mins, cfg.Sparse = c.scale, c.order, c.leaves, c.mins, c.sparse
		cfg.Seeds, cfg.SeedsOnMeshes, cfg.Phases, cfg.PhasesWeighted = c.seeds, c.seeds > 0, c.phases, c.phases
		if c.nearFar {
			cfg.NearFarMode = plan.NearFarOn
		}
		r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched, WithPredecessors: c.withPred, Delta: c.step}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.DistType() != g.Type {
			t.Fatalf("DistType = %s, want %s", r.DistType(), g.Type)
		}
		for _, size := range []int{1, 2, 33, 70, len(sources)} {
			if size > len(sources) || (size < 33 && len(sources) > 100) {
				continue
			}
			// -test.short (gpu/sanitize.sh, where every launch is slow):
			// one block of every source, and blocks of 33 on small sets.
			if testing.Short() && size != len(sources) && (size != 33 || len(sources) > 100) {
				continue
			}
			b := runBlocks(t, r, g.NumVertices, sources, size, c.withPred)
			var pg *graph.CSR
			if c.withPred {
				pg = g
			}
			checkRows(t, g, b, want, pg)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBatchedLeaves runs undirected R-MAT graphs, a fifth of whose
// vertices are leaves derived from their parents' rows (integer weights;
// float weights run every source in the kernel), against Dijkstra, at
// block sizes that put most parents outside the block.
func TestBatchedLeaves(t *testing.T) {
	e := openEngine(t)
	for _, float := range []bool{false, true} {
		opts := []gen.Option{gen.WithWeights(1, 30)}
		if float {
			opts = []gen.Option{gen.WithFloatWeights(0.5, 30)}
		}
		el, err := gen.RMAT(10, 6, 9, opts...)
		g := undirectedGraph(t, el, err)
		t.Run(g.Type.String(), func(t *testing.T) {
			checkBatchedAgainstDijkstra(t, e, g, allVertices(g.NumVertices))
		})
	}
}

// undirectedGraph builds the undirected CSR of a generated edge list.
func undirectedGraph(t *testing.T, el *gen.EdgeList, err error) *graph.CSR {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	edges, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(edges, graph.BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestBatchedRefusesNegativeWeights checks that the batched kernel, which
// needs non-negative weights, refuses a graph with one negative arc and
// names it.
func TestBatchedRefusesNegativeWeights(t *testing.T) {
	g, err := graph.Build(&graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1}, Dst: []graph.VertexID{1, 2},
		IntWeights: []int64{4, -2}}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = checkRequest(g, graph.Request{Algorithm: Batched})
	var nw *graph.NegativeWeightError
	if !errors.As(err, &nw) || nw.From != 1 || nw.To != 2 || nw.Weight != -2 {
		t.Errorf("batched on a negative weight: err = %v", err)
	}
	if _, err := graph.ParseAlgorithm(string(Batched)); err == nil {
		t.Errorf("%q is accepted as a user-facing algorithm name", Batched)
	}
}

// TestBatchedFrontierBytes checks the mask storage against the layout: it
// fits the result buffer from 3 sources and 31 vertices on (so Run needs no
// temporary buffer there), for vertex counts around the summary words'
// 1024-vertex steps.
func TestBatchedFrontierBytes(t *testing.T) {
	for _, n := range []int{31, 1023, 1025, 65536, 1 << 20} {
		for _, k := range []int{3, 31, 32, 33, 64, 1000, 4096} {
			for _, size := range []int{4, 8} {
				if got, have := batchedFrontierBytes(n, k, false), int64(k)*int64(n)*int64(size); got > have {
					t.Errorf("n=%d k=%d: frontier %d bytes > result buffer %d", n, k, got, have)
				}
			}
		}
	}
	if got, want := batchedFrontierBytes(100, 33, false), int64(batchedHeader+4*2*(2*100+2*1)); got != want {
		t.Errorf("batchedFrontierBytes(100, 33) = %d, want %d", got, want)
	}
	// Near-far rounds: four mask arrays and four summaries, which fit in
	// the result rows of every group but a lone partial one.
	if got, want := batchedFrontierBytes(100, 33, true), int64(nearFarHeader+4*2*(4*100+4*1)); got != want {
		t.Errorf("batchedFrontierBytes(100, 33, near-far) = %d, want %d", got, want)
	}
	for _, n := range []int{1023, 1 << 20} {
		for _, k := range []int{32, 33, 4096} {
			if got, have := batchedFrontierBytes(n, k, true), int64(k)*int64(n)*4; got > have {
				t.Errorf("near-far n=%d k=%d: frontier %d bytes > result buffer %d", n, k, got, have)
			}
		}
	}
}

// BenchmarkBatched times one block of sources per operation on the
// benchmark graphs for the batched kernel and the seed kernels auto chose
// before it, and reports the kernels' device time apart from the whole Run
// (which adds the device-to-host copy of the block through pinned memory).
func BenchmarkBatched(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range benchGraphs[:2] {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		// Consecutive vertices, as the pipeline's all-pairs blocks are.
		k := min(8192, n)
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(i)
		}
		want, err := ref.Dijkstra[int32](g, sources[k-1])
		if err != nil {
			b.Fatal(err)
		}
		for _, alg := range batchedBenchAlgorithms {
			b.Run(fmt.Sprintf("%s/n=%d/m=%d/k=%d/%s", bg.name, n, g.NumEdges(), k, alg), func(b *testing.B) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				out := graph.NewBlock(sources, n, r.DistType(), false)
				if err := r.Run(context.Background(), out); err != nil { // warm-up
					b.Fatal(err)
				}
				row := graph.Row[int32](out, k-1)
				for v := range row {
					if row[v] != want[v] {
						b.Fatalf("dist[%d] = %d, want %d", v, row[v], want[v])
					}
				}
				var kernel, run float64
				for b.Loop() {
					start := time.Now()
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					run += time.Since(start).Seconds()
					kernel += r.KernelTime().Seconds()
				}
				ops := float64(b.N)
				b.ReportMetric(kernel/ops*1e3, "kernel-ms/op")
				b.ReportMetric((run-kernel)/ops*1e3, "copy-ms/op")
				b.ReportMetric(float64(k)*float64(g.NumEdges())*ops/kernel, "kernel-arcs·sources/s")
			})
		}
	}
}

// batchedBenchAlgorithms are the kernels BenchmarkBatched compares.
var batchedBenchAlgorithms = []graph.Algorithm{Batched, graph.Delta, graph.BellmanFord}

// BenchmarkBatchedStep times the batched kernel for threshold steps at
// multiples of the mean weight (0: no threshold), on every graph whether
// it looks like a mesh or not, one block of 8192
// consecutive sources per operation.
func BenchmarkBatchedStep(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range benchGraphs[:2] {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		k := min(8192, n)
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(i)
		}
		for _, scale := range []float64{0, 0.25, 0.5, 1, 2} {
			b.Run(fmt.Sprintf("%s/scale=%g", bg.name, scale), func(b *testing.B) {
				cfg := defaultBatchedConfig()
				cfg.DeltaScale, cfg.StepMeshesOnly = scale, false
				r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				out := graph.NewBlock(sources, n, r.DistType(), false)
				var kernel float64
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					kernel += r.KernelTime().Seconds()
				}
				b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
			})
		}
	}
}
