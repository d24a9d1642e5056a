package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// nearFarConfigs are the batched configurations that run near-far rounds
// (plan.Config.NearFarMode on): the default's plan; every source in the
// kernel with every word expanded by the warp, one lane per source on
// every arc (relaxArcs: the warp's marks); every word by the warp, every
// expansion sparse (relaxSparse: each lane's marks) under buckets an
// eighth of the mean weight wide (many splits, lanes waiting in the pile);
// every word expanded by its own lane (expandOwn), buckets of half the
// mean weight; three phases, the later ones seeded from the first; buckets
// of +Inf width (scale 0: no pile, plain label correcting over the four
// arrays); and the groups run in slices of 1 KiB of working distances
// (each slice from its own control words).
func nearFarConfigs() map[string]batchedConfig {
	on := func() batchedConfig {
		c := defaultBatchedConfig()
		c.NearFarMode = plan.NearFarOn
		return c
	}
	def := on()
	arcs := on()
	arcs.Leaves, arcs.Mins, arcs.Seeds, arcs.Sparse, arcs.NearFarOwn = false, false, 0, 0, 0
	sparse := on()
	sparse.Sparse, sparse.NearFarScale, sparse.NearFarOwn = 32, 0.125, 0
	own := on()
	own.NearFarOwn, own.NearFarScale = 1<<20, 0.5
	phases := on()
	phases.Seeds, phases.SeedsOnMeshes, phases.SeedsMinShare = 0.2, true, 0
	phases.Phases, phases.PhasesWeighted = []float64{0.5}, []float64{0.5}
	plain := on()
	plain.NearFarScale = 0
	return map[string]batchedConfig{"nearfar": def, "arcs": arcs, "sparse": sparse, "own": own, "phases": phases,
		"plain": plain}
}

// droppedGrid is a rows×cols grid (gen.Grid, integer weights lo..hi, or
// float weights where float is set) with about drop of its edges left
// out (both arcs of each), built with distance type dt (0: the weights'
// own): issue 17's road-like grid in small.
func droppedGrid(t *testing.T, rng *rand.Rand, rows, cols int, lo, hi int64, float bool, drop float64, dt graph.DistType) *graph.CSR {
	t.Helper()
	opt := gen.WithWeights(lo, hi)
	if float {
		opt = gen.WithFloatWeights(float64(lo), float64(hi))
	}
	el, err := gen.Grid(rows, cols, rng.Uint64(), opt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	kept := &graph.Edges{NumVertices: all.NumVertices}
	for k := 0; k+1 < all.Len(); k += 2 { // arcs 2k and 2k+1 are one edge
		if rng.Float64() < drop {
			continue
		}
		for _, a := range []int{k, k + 1} {
			kept.Src = append(kept.Src, all.Src[a])
			kept.Dst = append(kept.Dst, all.Dst[a])
			switch {
			case all.IntWeights != nil:
				kept.IntWeights = append(kept.IntWeights, all.IntWeights[a])
			case all.Float32Weights != nil:
				kept.Float32Weights = append(kept.Float32Weights, all.Float32Weights[a])
			default:
				kept.Float64Weights = append(kept.Float64Weights, all.Float64Weights[a])
			}
		}
	}
	g, err := graph.Build(kept, graph.BuildOptions{DistType: dt})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// nearFarGraph is a graph of TestBatchedNearFar and its sources.
type nearFarGraph struct {
	name    string
	g       *graph.CSR
	sources []graph.VertexID
}

// nearFarGraphs are TestBatchedNearFar's graphs: grids of 1..1000 and
// 1..10 integer weights and of float weights with a tenth of the edges
// dropped (int32, int64, float64), random graphs of every distance type
// with zero weights, directed and undirected, and undirected R-MAT graphs
// (int32, float32), each with sources drawn at random (a partial last
// group); -test.short (gpu/sanitize.sh) keeps the smallest of each kind.
func nearFarGraphs(t *testing.T, rng *rand.Rand) []nearFarGraph {
	t.Helper()
	var out []nearFarGraph
	add := func(name string, g *graph.CSR, k int) {
		s := pickSources(rng, g.NumVertices)
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		out = append(out, nearFarGraph{name, g, s[:min(k, len(s))]})
	}
	add("grid 9×11 int32 1..1000", droppedGrid(t, rng, 9, 11, 1, 1000, false, 0.1, 0), 70)
	if !testing.Short() {
		add("grid 40×50 int32 1..1000", droppedGrid(t, rng, 40, 50, 1, 1000, false, 0.1, 0), 70)
		add("grid 33×61 int32 1..10", droppedGrid(t, rng, 33, 61, 1, 10, false, 0.1, 0), 45)
		add("grid 30×30 int64 1..1000", droppedGrid(t, rng, 30, 30, 1, 1000, false, 0.1, graph.DistInt64), 40)
		add("grid 30×31 float64 1..1000", droppedGrid(t, rng, 30, 31, 1, 1000, true, 0.1, 0), 40)
	}
	for _, dk := range distKinds {
		for _, undirected := range []bool{false, true} {
			n := 301
			if testing.Short() {
				if dk.name != "int32" && dk.name != "float64" {
					continue
				}
				n = 37
			}
			o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20,
				Dyadic: !dk.uniform, Duplicates: n / 10}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{Undirected: undirected, DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			add(fmt.Sprintf("random n=%d %s undirected=%v", n, dk.name, undirected), g, 45)
		}
	}
	if !testing.Short() {
		el, err := gen.RMAT(9, 6, 11, gen.WithWeights(1, 30))
		add("rmat 9 int32", undirectedGraph(t, el, err), 70)
		el, err = gen.RMAT(9, 6, 12, gen.WithFloatWeights(0.5, 30))
		add("rmat 9 float32", undirectedGraph(t, el, err), 40)
	}
	return out
}

// TestBatchedNearFar runs the batched kernel's near-far rounds
// (nearFarConfigs) against internal/ref's Dijkstra on nearFarGraphs, each
// configuration two ways: full rows with predecessors (checked as a
// shortest-path tree), in blocks of 33 and of every source; and narrowed
// to targets (random, with a repeat) under a cutoff among the distances
// (its columns gathered on the device, the kernel stopping at the cutoff),
// in one block, whose cells must equal the oracle's at the targets,
// unreachable above the cutoff. The auto choice (plan.Config.NearFar)
// must not matter to the results, so the default configuration runs the
// narrowed request too.
func TestBatchedNearFar(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, ng := range nearFarGraphs(t, rng) {
		t.Run(ng.name, func(t *testing.T) {
			switch ng.g.Type {
			case graph.DistInt32:
				checkNearFar(t, e, rng, ng, oracle(t, ng.g, ng.sources, ref.Dijkstra[int32]))
			case graph.DistInt64:
				checkNearFar(t, e, rng, ng, oracle(t, ng.g, ng.sources, ref.Dijkstra[int64]))
			case graph.DistFloat32:
				checkNearFar(t, e, rng, ng, oracle(t, ng.g, ng.sources, ref.Dijkstra[float32]))
			case graph.DistFloat64:
				checkNearFar(t, e, rng, ng, oracle(t, ng.g, ng.sources, ref.Dijkstra[float64]))
			}
		})
	}
}

func checkNearFar[D graph.Number](t *testing.T, e *Engine, rng *rand.Rand, ng nearFarGraph, want [][]D) {
	t.Helper()
	g, sources, n := ng.g, ng.sources, ng.g.NumVertices
	configs := nearFarConfigs()
	configs["default"] = defaultBatchedConfig()
	for name, cfg := range configs {
		if testing.Short() && name != "nearfar" && name != "sparse" && name != "own" {
			continue // -test.short (gpu/sanitize.sh): every kind of expansion, one block
		}
		if name != "default" {
			r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched, WithPredecessors: true}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{33, len(sources)} {
				if testing.Short() && size != len(sources) {
					continue
				}
				b := runBlocks(t, r, n, sources, size, true)
				t.Run(fmt.Sprintf("%s/rows/blocks of %d", name, size), func(t *testing.T) { checkRows(t, g, b, want, g) })
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
		req := narrowQuery(rng, n, rowsAsFloats(want)[0], true, true)
		req.Algorithm = Batched
		clipped := clipRows(want, req.Cutoff)
		r, err := e.prepare(context.Background(), g, req, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Narrowed() {
			t.Fatal("a runner with targets and a cutoff and no predecessors is not narrowed")
		}
		got := graph.NewTargetBlock(sources, req.Targets, n, r.DistType(), false)
		poison(got)
		if err := r.Run(context.Background(), got); err != nil {
			t.Fatal(err)
		}
		cells := cellsOf(got)
		w := len(req.Targets)
		t.Run(fmt.Sprintf("%s/targets %d, cutoff %v", name, w, req.Cutoff), func(t *testing.T) {
			rows := rowsAsFloats(clipped)
			for i, s := range sources {
				for c, v := range req.Targets {
					if d, x := cells[i*w+c], rows[i][v]; d != x && !(math.IsNaN(d) && math.IsNaN(x)) {
						t.Fatalf("source %d, target %d: %v, want %v", s, v, d, x)
					}
				}
			}
		})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSuiteVariantNearFar checks BenchmarkBatchedSuite's near-far words:
// nearfar and nonearfar force the rounds on and off, nfscale and nfown set
// the bucket scale and the lane's own expansions; without them auto stays.
func TestSuiteVariantNearFar(t *testing.T) {
	cfg, err := suiteVariant("cluster-nearfar-nfscale=0.5-nfown=4")
	if err != nil || cfg.NearFarMode != plan.NearFarOn || cfg.NearFarScale != 0.5 || cfg.NearFarOwn != 4 {
		t.Errorf("nearfar words: %v, mode %q, scale %v, own %d", err, cfg.NearFarMode, cfg.NearFarScale, cfg.NearFarOwn)
	}
	if cfg, err := suiteVariant("nonearfar"); err != nil || cfg.NearFarMode != plan.NearFarOff {
		t.Errorf("nonearfar: %v, mode %q", err, cfg.NearFarMode)
	}
	if cfg, err := suiteVariant("cluster"); err != nil || cfg.NearFarMode != plan.NearFarAuto {
		t.Errorf("cluster: %v, mode %q", err, cfg.NearFarMode)
	}
	for _, v := range []string{"nfscale=x", "nfown=-1"} {
		if _, err := suiteVariant(v); err == nil {
			t.Errorf("%s: no error", v)
		}
	}
}
