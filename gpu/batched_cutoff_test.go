package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// cutoffConfigs are the batched configurations the cutoff tests run: the
// default (leaves, minimums, and phases where a block holds half the
// vertices, but neither minimums nor phases under a cutoff of small
// balls), the default's reductions under every cutoff (CutoffReach 0),
// forced phases (three, on every graph shape, under every cutoff), every
// source in the kernel, the in-kernel cutoff switched off (the gather
// alone clips), which must give the same rows, and the default's
// reductions under every cutoff through near-far rounds
// (plan.Config.NearFarMode on).
func cutoffConfigs() map[string]batchedConfig {
	def := defaultBatchedConfig()
	reductions := defaultBatchedConfig()
	reductions.CutoffReach = 0
	phases := defaultBatchedConfig()
	phases.Seeds, phases.SeedsOnMeshes, phases.Phases, phases.PhasesWeighted = 0.2, true, []float64{0.5}, []float64{0.5}
	phases.CutoffReach = 0
	plain := defaultBatchedConfig()
	plain.Leaves, plain.Mins, plain.Seeds, plain.Sparse = false, false, 0, 0
	off := defaultBatchedConfig()
	off.KernelCutoff = false
	nearFar := reductions
	nearFar.NearFarMode = plan.NearFarOn
	return map[string]batchedConfig{"default": def, "reductions": reductions, "phases": phases, "plain": plain, "off": off,
		"nearfar": nearFar}
}

// cutoffsOf are the cutoffs a test draws for rows of finite distances
// (the source's own 0 excluded): 0, a distance of the rows and the same
// plus a half (between two distances for integers, and for the dyadic
// float weights mostly), the median distance, and one past every
// distance of the type.
func cutoffsOf(rng *rand.Rand, rows [][]float64) []float64 {
	var finite []float64
	for _, row := range rows {
		for _, d := range row {
			if d > 0 && !math.IsInf(d, 1) {
				finite = append(finite, d)
			}
		}
	}
	cuts := []float64{0, 1e300}
	if len(finite) > 0 {
		slices.Sort(finite)
		d := finite[rng.IntN(len(finite))]
		cuts = append(cuts, d, d+0.5, finite[len(finite)/2])
	}
	return cuts
}

// clipRows is want with every distance above cut unreachable: what a full
// run clipped at the cutoff gives.
func clipRows[D graph.Number](want [][]D, cut float64) [][]D {
	c, inf := graph.CutoffOf[D](cut), graph.Infinity[D]()
	out := make([][]D, len(want))
	for i, row := range want {
		out[i] = slices.Clone(row)
		for v, d := range out[i] {
			if d > c {
				out[i][v] = inf
			}
		}
	}
	return out
}

// rowsAsFloats is rows as float64, +Inf where unreachable.
func rowsAsFloats[D graph.Number](rows [][]D) [][]float64 {
	inf := graph.Infinity[D]()
	out := make([][]float64, len(rows))
	for i, row := range rows {
		out[i] = make([]float64, len(row))
		for v, d := range row {
			out[i][v] = float64(d)
			if d == inf {
				out[i][v] = math.Inf(1)
			}
		}
	}
	return out
}

// checkBatchedCutoff runs the batched kernel on g from sources under every
// configuration of cutoffConfigs and every cutoff of cutoffsOf, in blocks
// of sizes (0: every source at once), two ways: with predecessors (the
// runner is not narrowed: the kernel's own rows come back whole, with no
// clip after them, and their predecessors are checked), and narrowed
// (matrix rows of every vertex, through the gather or as the kernels
// clipped them). Both must equal the full rows want, from internal/ref's
// Dijkstra, clipped at the cutoff; with the in-kernel cutoff switched
// off, rows with predecessors are the full rows (the pipeline clips them
// on the host). Narrowed runners whose kernels stop at the cutoff skip
// the gather (rowsClippedByKernel): some must, so that their rows are
// checked too.
func checkBatchedCutoff[D graph.Number](t *testing.T, e *Engine, rng *rand.Rand, g *graph.CSR, sources []graph.VertexID, want [][]D, sizes []int) {
	t.Helper()
	n := g.NumVertices
	cuts := cutoffsOf(rng, rowsAsFloats(want))
	unclipped := 0 // narrowed runners whose rows no gather clipped
	defer func() {
		if unclipped == 0 {
			t.Errorf("no narrowed runner left its rows as the kernels clipped them (rowsClippedByKernel)")
		}
	}()
	for name, cfg := range cutoffConfigs() {
		if testing.Short() && (name == "plain" || name == "off" || name == "nearfar") {
			continue // -test.short (gpu/sanitize.sh): the configurations of the cutoff kernels' reductions only
		}
		for _, cut := range cuts {
			for _, withPred := range []bool{true, false} {
				clipped := clipRows(want, cut)
				if withPred && !cfg.KernelCutoff {
					clipped = want
				}
				req := graph.Request{Algorithm: Batched, WithPredecessors: withPred, Cutoff: cut, HasCutoff: true}
				r, err := e.prepare(context.Background(), g, req, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if r.Narrowed() == withPred {
					t.Fatalf("predecessors %v: Narrowed() = %v", withPred, r.Narrowed())
				}
				if r.narrow.rowsClippedByKernel(r.bk.cuts()) {
					unclipped++
				}
				for _, size := range sizes {
					if testing.Short() && size != 0 {
						continue // -test.short: one block of every source
					}
					if size == 0 || size > len(sources) {
						size = len(sources)
					}
					what := fmt.Sprintf("%s, cutoff %v, predecessors %v, blocks of %d", name, cut, withPred, size)
					b := runBlocks(t, r, n, sources, size, withPred)
					var pg *graph.CSR
					if withPred {
						pg = g
					}
					t.Run(what, func(t *testing.T) { checkRows(t, g, b, clipped, pg) })
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// checkBatchedCutoffOf is checkBatchedCutoff against ref.Dijkstra of g's
// distance type.
func checkBatchedCutoffOf(t *testing.T, e *Engine, rng *rand.Rand, g *graph.CSR, sources []graph.VertexID, sizes []int) {
	t.Helper()
	switch g.Type {
	case graph.DistInt32:
		checkBatchedCutoff(t, e, rng, g, sources, oracle(t, g, sources, ref.Dijkstra[int32]), sizes)
	case graph.DistInt64:
		checkBatchedCutoff(t, e, rng, g, sources, oracle(t, g, sources, ref.Dijkstra[int64]), sizes)
	case graph.DistFloat32:
		checkBatchedCutoff(t, e, rng, g, sources, oracle(t, g, sources, ref.Dijkstra[float32]), sizes)
	case graph.DistFloat64:
		checkBatchedCutoff(t, e, rng, g, sources, oracle(t, g, sources, ref.Dijkstra[float64]), sizes)
	}
}

// TestBatchedCutoff checks the batched kernel's in-kernel cutoff on
// random graphs of every distance type (weights 0..20, so that zero-weight
// arcs put vertices at distance 0 from the source), directed and
// undirected: every row equals the full run's clipped at the cutoff, for
// cutoffs of 0, at and between distances, and past every distance.
// Blocks of 33 sources leave a partial group; -test.short
// (gpu/sanitize.sh) runs the smallest graphs only, in one block, under the
// configurations that reduce (checkBatchedCutoff).
func TestBatchedCutoff(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, n := range []int{37, 300, 1999} {
		if testing.Short() && n > 37 {
			continue
		}
		for _, dk := range distKinds {
			if dk.uniform {
				continue
			}
			for _, undirected := range []bool{false, true} {
				o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
					Dyadic: true, Duplicates: n / 10}
				edges, _ := testgraphs.Random(rng, o)
				g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
				if err != nil {
					t.Fatal(err)
				}
				sources := pickSources(rng, n)
				t.Run(fmt.Sprintf("n=%d/%s/undirected=%v", n, dk.name, undirected), func(t *testing.T) {
					checkBatchedCutoffOf(t, e, rng, g, sources, []int{33, 0})
				})
			}
		}
	}
}

// TestBatchedCutoffPlan checks the cutoff through the host plan's
// reductions on undirected R-MAT graphs, every vertex a source in one
// block: leaves derived from their parents' rows, minimums, and phases
// seeded from the hubs' rows, each clipping at the cutoff (integer
// weights; float weights run every source in the kernel). The blocks of
// 70 leave most parents and heads outside the block.
func TestBatchedCutoffPlan(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, kind := range []string{"int32", "int64", "float32"} {
		opts := []gen.Option{gen.WithWeights(1, 30)}
		if kind == "float32" {
			opts = []gen.Option{gen.WithFloatWeights(0.5, 30)}
		}
		el, err := gen.RMAT(9, 6, 9, opts...)
		g := undirectedGraph(t, el, err)
		if kind == "int64" {
			edges, err := el.GraphEdges()
			if err != nil {
				t.Fatal(err)
			}
			if g, err = graph.Build(edges, graph.BuildOptions{Undirected: true, DistType: graph.DistInt64}); err != nil {
				t.Fatal(err)
			}
		}
		sizes := []int{0, 70}
		t.Run(kind, func(t *testing.T) {
			checkBatchedCutoffOf(t, e, rng, g, allVertices(g.NumVertices), sizes)
		})
	}
}

// TestSuiteVariantCutoff checks the cutoff words of BenchmarkBatchedSuite's
// variants: cut=D gives the cutoff D (suiteCutoff), nocut switches the
// in-kernel cutoff off, reach=X sets CutoffReach; without them the cutoff
// is +Inf and the defaults stay.
func TestSuiteVariantCutoff(t *testing.T) {
	const v = "cluster-cut=6.5-nocut-reach=0.2"
	cfg, err := suiteVariant(v)
	cut, cerr := suiteCutoff(v)
	if err != nil || cerr != nil || cut != 6.5 || cfg.KernelCutoff || cfg.CutoffReach != 0.2 || cfg.Order != "cluster" {
		t.Errorf("%s: cut %v, KernelCutoff %v, CutoffReach %v, order %q, errors %v, %v", v, cut, cfg.KernelCutoff, cfg.CutoffReach, cfg.Order, err, cerr)
	}
	cfg, err = suiteVariant("cluster")
	cut, cerr = suiteCutoff("cluster")
	if err != nil || cerr != nil || !math.IsInf(cut, 1) || !cfg.KernelCutoff || cfg.CutoffReach != defaultBatchedConfig().CutoffReach {
		t.Errorf("cluster: cut %v, KernelCutoff %v, CutoffReach %v, errors %v, %v", cut, cfg.KernelCutoff, cfg.CutoffReach, err, cerr)
	}
	if _, err := suiteCutoff("cut=x"); err == nil {
		t.Errorf("cut=x: no error")
	}
	if _, err := suiteVariant("reach=3"); err == nil {
		t.Errorf("reach=3: no error")
	}
}
