package gpu

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// refStats is the stats layout of the rows internal/ref computes from
// sources (ref.Distances, the oracle that fits g's weights), reduced by
// graph.ComputeStats, with the float tolerances' scales (blockStats).
func refStats(t *testing.T, g *graph.CSR, sources []graph.VertexID) (*graph.Stats, []float64, []float64) {
	t.Helper()
	b := graph.NewBlock(sources, g.NumVertices, g.Type, false)
	switch g.Type {
	case graph.DistInt32:
		fillRefRows[int32](t, g, b)
	case graph.DistInt64:
		fillRefRows[int64](t, g, b)
	case graph.DistFloat32:
		fillRefRows[float32](t, g, b)
	default:
		fillRefRows[float64](t, g, b)
	}
	return blockStats(b)
}

func fillRefRows[D graph.Number](t *testing.T, g *graph.CSR, b *graph.Block) {
	t.Helper()
	for i, s := range b.Sources {
		row, err := ref.Distances[D](g, s)
		if err != nil {
			t.Fatalf("oracle from %d: %v", s, err)
		}
		copy(graph.Row[D](b, i), row)
	}
}

// subStats is the stats of st's sources [lo, hi).
func subStats(st *graph.Stats, lo, hi int) *graph.Stats {
	out := *st
	out.Sources = st.Sources[lo:hi]
	out.Reachable, out.Eccentricity, out.Closeness, out.Harmonic = st.Reachable[lo:hi], st.Eccentricity[lo:hi], st.Closeness[lo:hi], st.Harmonic[lo:hi]
	if st.SumInt != nil {
		out.SumInt = st.SumInt[lo:hi]
	}
	if st.SumFloat != nil {
		out.SumFloat = st.SumFloat[lo:hi]
	}
	return &out
}

// statsSlotGraphs are the graphs of the one-slot stats tests: an
// undirected R-MAT graph (leaves, minimums and phases in large blocks),
// the same with float weights whose sums are exact (the integer path's
// reductions) and with fractional ones (every source in the kernel), and
// random directed graphs of int64 and uniform float32 weights whose
// vertex counts are no multiple of 32.
func statsSlotGraphs(t *testing.T) map[string]*graph.CSR {
	t.Helper()
	rng := newSeed(t)
	out := map[string]*graph.CSR{}
	for name, opt := range map[string]gen.Option{
		"rmat11-int":          gen.WithWeights(1, 100),
		"rmat11-float-uneven": gen.WithFloatWeights(0.1, 10),
	} {
		el, err := gen.RMAT(11, 8, 5, opt)
		out[name] = undirectedGraph(t, el, err)
	}
	out["rmat11-float-exact"] = asFloat32(out["rmat11-int"])
	for _, dk := range []distKind{distKinds[1], distKinds[5]} {
		o := testgraphs.RandomOptions{N: 777, M: 4 * 777, Kind: dk.kind, MinWeight: 0, MaxWeight: 20, Dyadic: !dk.uniform, Duplicates: 70}
		edges, _ := testgraphs.Random(rng, o)
		g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
		if err != nil {
			t.Fatal(err)
		}
		out["random-"+dk.name] = g
	}
	return out
}

// statsSlotConfigs are the configurations the one-slot tests compare: the
// default (one slot), two slots (oneslot=0), one slot with phases forced
// in every block (the later phases' frontiers behind the working
// distances), and a
// scratch of working distances (plan.Config.ScratchBytes) of a few groups,
// alone and with phases forced.
func statsSlotConfigs(t *testing.T) map[string]batchedConfig {
	t.Helper()
	out := map[string]batchedConfig{}
	for name, spec := range map[string]string{
		"oneslot":        "",
		"twoslots":       "oneslot=0",
		"oneslot-phases": "seeds=0.2,seedsmin=0,phases=0.5",
		"scratch":        "scratchmb=0.5,scratchmin=0",
		"scratch-phases": "scratchmb=0.3,scratchmin=0,seeds=0.2,seedsmin=0,phases=0.5",
	} {
		c := defaultBatchedConfig()
		if err := c.Config.Apply(spec); err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return out
}

// TestOneSlotStatsAgainstOracle runs RunStats of the batched kernel over
// every source of each graph, under one and two result slots
// (plan.Config.OneSlotStats), in one block and in blocks of a third and
// of 97 (partial groups), and checks every source's stats against internal/ref's
// rows reduced by graph.ComputeStats. It also checks that a one-slot
// runner allocated the first slot's rows alone and counts one slot in
// StatsBytesPerSource, and a two-slot runner both.
func TestOneSlotStatsAgainstOracle(t *testing.T) {
	e := openEngine(t)
	for gname, g := range statsSlotGraphs(t) {
		sources := allVertices(g.NumVertices)
		want, absSum, absHarm := refStats(t, g, sources)
		for cname, cfg := range statsSlotConfigs(t) {
			t.Run(gname+"/"+cname, func(t *testing.T) {
				r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if got, full := r.StatsBytesPerSource(), r.BytesPerSource(); (got < full) != cfg.OneSlotStats {
					t.Errorf("StatsBytesPerSource %d, BytesPerSource %d, one slot %v", got, full, cfg.OneSlotStats)
				}
				// These graphs fit one block: a scratch is taken only
				// where ScratchMinShare does not ask its blocks to pay.
				scratch := cfg.ScratchBytes > 0 && cfg.ScratchMinShare == 0 && cfg.OneSlotStats
				if (r.bk.scratchSources() > 0) != scratch {
					t.Errorf("scratch slices of %d sources under %d bytes, minimum share %v; want a scratch %v",
						r.bk.scratchSources(), cfg.ScratchBytes, cfg.ScratchMinShare, scratch)
				}
				for _, size := range []int{len(sources), (len(sources) + 2) / 3, 97} {
					if testing.Short() && size == 97 {
						continue
					}
					for lo := 0; lo < len(sources); lo += size {
						hi := min(lo+size, len(sources))
						got, err := r.RunStats(context.Background(), sources[lo:hi])
						if err != nil {
							t.Fatalf("blocks of %d, sources %d..%d: %v", size, lo, hi, err)
						}
						compareStats(t, got, subStats(want, lo, hi), absSum[lo:hi], absHarm[lo:hi])
					}
					if want := min(r.buf.capacity, r.bk.scratchSources()); r.buf.scratch != want {
						t.Errorf("blocks of %d: scratch slices of %d sources, want %d", size, r.buf.scratch, want)
					}
					second := r.buf.slots[1].dist.ptr != 0
					if r.buf.oneSlot != cfg.OneSlotStats || second == cfg.OneSlotStats {
						t.Errorf("blocks of %d: one slot allocated %v, second slot's rows %v; want one slot %v",
							size, r.buf.oneSlot, second, cfg.OneSlotStats)
					}
				}
			})
		}
	}
}

// TestOneSlotStatsBesideStart mixes, on one runner under one result slot,
// stats blocks with blocks of rows: RunStats (one slot allocated), then
// Start, which needs both slots and reallocates, then RunStats again
// while that block's copy may still be in flight (the first slot settles
// first), then RunStats of a block larger than the buffers, then Run and
// ComputeResident. Every row and every source's stats are checked
// against internal/ref.
func TestOneSlotStatsBesideStart(t *testing.T) {
	e := openEngine(t)
	el, err := gen.RMAT(11, 8, 5, gen.WithWeights(1, 100))
	g := undirectedGraph(t, el, err)
	n := g.NumVertices
	sources := allVertices(n)
	want, absSum, absHarm := refStats(t, g, sources)
	rows := oracle(t, g, sources, ref.Dijkstra[int32])
	cfg := defaultBatchedConfig()
	if !cfg.OneSlotStats {
		t.Fatal("the default configuration should run stats in one slot")
	}
	r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	stats := func(lo, hi int) {
		t.Helper()
		got, err := r.RunStats(ctx, sources[lo:hi])
		if err != nil {
			t.Fatalf("RunStats %d..%d: %v", lo, hi, err)
		}
		compareStats(t, got, subStats(want, lo, hi), absSum[lo:hi], absHarm[lo:hi])
	}
	checkBlock := func(b *graph.Block, lo int) {
		t.Helper()
		checkRows(t, g, b, rows[lo:lo+len(b.Sources)], nil)
	}
	third := n / 3
	stats(0, third)
	if !r.buf.oneSlot {
		t.Fatal("RunStats left both slots allocated")
	}
	b := graph.NewBlock(sources[third:2*third], n, r.DistType(), false)
	poison(b)
	p, err := r.Start(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.buf.oneSlot {
		t.Fatal("Start ran on one slot")
	}
	stats(third+third/2, n) // larger than the buffers: one slot again, once the copy landed
	if !r.buf.oneSlot {
		t.Error("RunStats past the buffers of both slots reallocated both")
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	checkBlock(b, third)
	b2 := graph.NewBlock(sources[:third], n, r.DistType(), false)
	poison(b2)
	p2, err := r.Start(ctx, b2)
	if err != nil {
		t.Fatal(err)
	}
	stats(third, 2*third) // within the buffers of both slots: kept, the first slot settled
	if r.buf.oneSlot {
		t.Error("RunStats within two slots' buffers reallocated them")
	}
	if err := p2.Wait(); err != nil {
		t.Fatal(err)
	}
	checkBlock(b2, 0)
	stats(0, n)
	b3 := graph.NewBlock(sources[:third], n, r.DistType(), false)
	poison(b3)
	if err := r.Run(ctx, b3); err != nil {
		t.Fatal(err)
	}
	checkBlock(b3, 0)
	stats(0, n)
	res, err := r.ComputeResident(ctx, sources[third:])
	if err != nil {
		t.Fatal(err)
	}
	b4 := graph.NewBlock(sources[third:2*third], n, r.DistType(), false)
	poison(b4)
	p4, err := res.Start(ctx, 0, third, b4)
	if err != nil {
		t.Fatal(err)
	}
	if err := p4.Wait(); err != nil {
		t.Fatal(err)
	}
	checkBlock(b4, third)
}

// TestStatsBytesPerSource checks, without a device, the device memory a
// source of a stats block costs: one result slot's rows under
// plan.Config.OneSlotStats (the batched kernel's int32 rows: 8 bytes per
// vertex instead of 12; no narrowed cells), BytesPerSource without it.
func TestStatsBytesPerSource(t *testing.T) {
	const n = 1000
	g := &graph.CSR{NumVertices: n, Offsets: make([]int64, n+1), Targets: []int32{}, Weights: []int32{}, Weighted: true, Type: graph.DistInt32}
	one, two := rowsConfig(), rowsConfig()
	two.OneSlotStats = false
	for _, c := range []struct {
		name            string
		req             graph.Request
		cfg             batchedConfig
		stats, perBlock int64
	}{
		{"batched, one slot", graph.Request{Algorithm: Batched}, one, 8*n + perSourceBytes, 12*n + perSourceBytes},
		{"batched, two slots", graph.Request{Algorithm: Batched}, two, 12*n + perSourceBytes, 12*n + perSourceBytes},
		{"batched, targets, one slot", graph.Request{Algorithm: Batched, Targets: []graph.VertexID{1, 2, 3}}, one,
			8*n + perSourceBytes, 12*n + perSourceBytes + 2*3*4},
	} {
		r := newRunner(nil, g, c.req, c.cfg)
		if got := r.StatsBytesPerSource(); got != c.stats {
			t.Errorf("%s: StatsBytesPerSource %d, want %d", c.name, got, c.stats)
		}
		if got := r.BytesPerSource(); got != c.perBlock {
			t.Errorf("%s: BytesPerSource %d, want %d", c.name, got, c.perBlock)
		}
	}
	// Every other algorithm: one distance row fewer.
	for alg := range plans {
		l := layoutOf(alg, graph.DistInt32, false)
		r := newRunner(nil, g, graph.Request{Algorithm: alg}, one)
		if got, want := r.BytesPerSource()-r.StatsBytesPerSource(), int64(n*l.dist); got != want {
			t.Errorf("%s: one slot saves %d bytes a source, want %d", alg, got, want)
		}
	}
}

// TestStatsBlockGrowth prints, without a device, the stats blocks of the
// benchmark suite's R-MAT 18 and R-MAT 20 (`pathctl bench`, seed 1: the
// vertices that appear in an edge) on an 80 GB device, two result slots
// against one: the pipeline gives a stats block DeviceBudget (80 % of the
// free memory) over StatsBytesPerSource sources (pipeline/blocks.go,
// planRun, one block in flight), and with 1,024 hub rows
// (plan.Config.HubRows). It checks that one slot holds 1.5× the sources,
// give or take the per-source words, and that hub rows are kept.
func TestStatsBlockGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("generates R-MAT 18 and 20")
	}
	const free = 80_000_000_000 // bytes free on the device, all of an "80 GB" H100 (it has 85.5 GB, less the context and graph)
	budget := int64(free / 5 * 4)
	for _, scale := range []int{18, 20} {
		el, err := gen.RMAT(scale, 16, 1)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, el.NumVertices)
		n := 0
		for i := range el.Src {
			for _, v := range []int64{el.Src[i], el.Dst[i]} {
				if !seen[v] {
					seen[v], n = true, n+1
				}
			}
		}
		g := &graph.CSR{NumVertices: n, Offsets: make([]int64, n+1), Targets: []int32{}, Weights: []int32{}, Weighted: true, Type: graph.DistInt32}
		sizes := map[bool]int64{}
		for _, oneSlot := range []bool{false, true} {
			cfg := rowsConfig()
			cfg.OneSlotStats = oneSlot
			r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
			per := r.StatsBytesPerSource()
			size := min(int64(n), budget/per)
			sizes[oneSlot] = size
			t.Logf("R-MAT %d (%d vertices), one slot %v: %d bytes a source, blocks of %d sources (%.1f %% of the vertices), %d blocks",
				scale, n, oneSlot, per, size, 100*float64(size)/float64(n), (int64(n)+size-1)/size)
		}
		if ratio := float64(sizes[true]) / float64(sizes[false]); ratio < 1.49 || ratio > 1.51 {
			t.Errorf("R-MAT %d: one slot's blocks %.3f× two slots'", scale, ratio)
		}
		scratch := defaultBatchedConfig()
		scratch.ScratchBytes = 8 << 30
		r := newRunner(nil, g, graph.Request{Algorithm: Batched}, scratch)
		per, fixed := r.StatsBytesPerSource(), r.StatsFixedBytes()
		size := min(int64(n), (budget-fixed)/per)
		t.Logf("R-MAT %d, one slot, scratchmb=8192: %d bytes a source and %d of scratch (slices of %d sources), blocks of %d sources (%.1f %%)",
			scale, per, fixed, r.bk.scratchSources(), size, 100*float64(size)/float64(n))
		if size <= sizes[true] {
			t.Errorf("R-MAT %d: a scratch leaves blocks of %d (%d without)", scale, size, sizes[true])
		}
		cfg := rowsConfig()
		cfg.HubRows = 1024
		r = newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		per = r.StatsBytesPerSource()
		size = min(int64(n), (budget-r.StatsFixedBytes())/per)
		t.Logf("R-MAT %d, one slot, hubrows=1024: %d bytes a source and %d for the hub rows, blocks of %d sources (%.1f %%) beside %d hub rows",
			scale, per, r.StatsFixedBytes(), size, 100*float64(size)/float64(n), r.hubs.forBlock(int(size)))
		if size >= sizes[true] || r.hubs.forBlock(int(size)) == 0 {
			t.Errorf("R-MAT %d: hub rows leave blocks of %d (%d without) and keep %d rows", scale, size, sizes[true], r.hubs.forBlock(int(size)))
		}
	}
}

// TestHubRowsStatsAgainstOracle runs RunStats of the batched kernel with
// hub rows kept on the device (plan.Config.HubRows) over every source of
// each graph in blocks of an eighth of the vertices (the hub rows derive
// and seed there) and of 97, one phase and phases forced, and checks every
// source's stats against internal/ref. Where the rows may be kept (not
// for fractional float weights) the first block must have computed them,
// and a Start in between, which reallocates both slots, must leave the
// next stats blocks to compute them again.
func TestHubRowsStatsAgainstOracle(t *testing.T) {
	e := openEngine(t)
	configs := map[string]string{
		"hubs":         "hubrows=64",
		"hubs-phases":  "hubrows=64,seeds=0.2,seedsmin=0,phases=0.5",
		"hubs-scratch": "hubrows=64,scratchmb=0.5,scratchmin=0",
		// As many hub rows as a block holds: the hubs among a block's
		// sources are copied from them, in the runner's order
		// (BlockOrder) in one piece.
		"hubs-block":         "hubrows=100000,hubshare=0",
		"hubs-block-scratch": "hubrows=100000,hubshare=0,scratchmb=0.5,scratchmin=0",
		"hubs-block-core":    "hubrows=100000,hubshare=0,hubcore=1",
	}
	for gname, g := range statsSlotGraphs(t) {
		n := g.NumVertices
		for cname, spec := range configs {
			sources := allVertices(n)
			if strings.HasPrefix(cname, "hubs-block") {
				cfg := defaultBatchedConfig()
				if err := cfg.Config.Apply(spec); err != nil {
					t.Fatal(err)
				}
				r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
				if order := r.BlockOrder(sources, (n+7)/8); order != nil {
					ordered := make([]graph.VertexID, n)
					for i, p := range order {
						ordered[i] = sources[p]
					}
					sources = ordered
				}
			}
			want, absSum, absHarm := refStats(t, g, sources)
			cfg := defaultBatchedConfig()
			if err := cfg.Config.Apply(spec); err != nil {
				t.Fatal(err)
			}
			t.Run(gname+"/"+cname, func(t *testing.T) {
				r, err := e.prepare(context.Background(), g, graph.Request{Algorithm: Batched}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				kept := r.hubs.possible()
				if (gname == "rmat11-int" || gname == "rmat11-float-exact") && !kept {
					t.Fatal("hub rows not kept on a graph of exact sums")
				}
				for _, size := range []int{(n + 7) / 8, 97} {
					if testing.Short() && size == 97 {
						continue
					}
					for lo := 0; lo < n; lo += size {
						hi := min(lo+size, n)
						got, err := r.RunStats(context.Background(), sources[lo:hi])
						if err != nil {
							t.Fatalf("blocks of %d, sources %d..%d: %v", size, lo, hi, err)
						}
						compareStats(t, got, subStats(want, lo, hi), absSum[lo:hi], absHarm[lo:hi])
						if wantRows := r.hubs.forBlock(r.buf.capacity); r.hubs.rows.ready != (wantRows > 0) || len(r.hubs.rows.vertices) != wantRows {
							t.Fatalf("blocks of %d: %d hub rows, ready %v; want %d", size, len(r.hubs.rows.vertices), r.hubs.rows.ready, wantRows)
						}
					}
					if size == 97 || !kept {
						continue
					}
					// A Start drops the hub rows; the next stats block
					// computes them again.
					b := graph.NewBlock(sources[:40], n, r.DistType(), false)
					if err := r.Run(context.Background(), b); err != nil {
						t.Fatal(err)
					}
					if len(r.hubs.rows.vertices) != 0 {
						t.Fatal("hub rows kept through a block of rows")
					}
					got, err := r.RunStats(context.Background(), sources[n-size:])
					if err != nil {
						t.Fatal(err)
					}
					compareStats(t, got, subStats(want, n-size, n), absSum[n-size:], absHarm[n-size:])
					if !r.hubs.rows.ready {
						t.Fatal("hub rows not computed again after a block of rows")
					}
				}
			})
		}
	}
}

// TestHubRowsFor checks, without a device, when a stats block keeps hub
// rows (plan.Config.HubRows) and how many, where no run sized them
// (SizeStatsRun): blocks of fewer sources than vertices, at most one per
// plan.Config.HubShare sources (none with 0) and at most the block's,
// none under plan.HubRowsAuto, only for the batched
// kernel with exact sums and no cutoff in the kernel or predecessors; and that StatsFixedBytes reserves their rows.
func TestHubRowsFor(t *testing.T) {
	const n = 4096
	csr := func(w any, typ graph.DistType) *graph.CSR {
		return &graph.CSR{NumVertices: n, Offsets: make([]int64, n+1), Targets: []int32{0}, Weights: w, Weighted: true, Type: typ}
	}
	ints := csr([]int32{3}, graph.DistInt32)
	fractional := csr([]float32{0.1}, graph.DistFloat32)
	hubs := rowsConfig()
	hubs.HubRows, hubs.HubShare = 64, 8
	off := rowsConfig()
	off.HubRows = 0
	unbounded := hubs
	unbounded.HubShare = 0
	twoSlots := hubs
	twoSlots.OneSlotStats = false
	for _, c := range []struct {
		name string
		g    *graph.CSR
		req  graph.Request
		cfg  batchedConfig
		k    int
		want int
	}{
		{"an eighth", ints, graph.Request{Algorithm: Batched}, hubs, n / 8, 64},
		{"small block", ints, graph.Request{Algorithm: Batched}, hubs, 100, 100 / hubs.HubShare},
		{"small block, no share", ints, graph.Request{Algorithm: Batched}, unbounded, 40, 40},
		{"half", ints, graph.Request{Algorithm: Batched}, hubs, n / 2, 64},
		{"every vertex", ints, graph.Request{Algorithm: Batched}, hubs, n, 0},
		{"off", ints, graph.Request{Algorithm: Batched}, off, n / 8, 0},
		{"auto, not sized for a run", ints, graph.Request{Algorithm: Batched}, rowsConfig(), n / 8, 0},
		{"two slots", ints, graph.Request{Algorithm: Batched}, twoSlots, n / 8, 0},
		{"predecessors", ints, graph.Request{Algorithm: Batched, WithPredecessors: true}, hubs, n / 8, 0},
		{"cutoff", ints, graph.Request{Algorithm: Batched, HasCutoff: true, Cutoff: 5}, hubs, n / 8, 0},
		{"dijkstra", ints, graph.Request{Algorithm: graph.Dijkstra}, hubs, n / 8, 0},
		{"fractional floats", fractional, graph.Request{Algorithm: Batched}, hubs, n / 8, 0},
	} {
		r := newRunner(nil, c.g, c.req, c.cfg)
		if got := r.hubs.forBlock(c.k); got != c.want {
			t.Errorf("%s: %d hub rows for a block of %d, want %d", c.name, got, c.k, c.want)
		}
		base := c.cfg
		base.HubRows = 0
		if extra := r.StatsBytesPerSource() - newRunner(nil, c.g, c.req, base).StatsBytesPerSource(); extra != 0 {
			t.Errorf("%s: hub rows add %d bytes a source", c.name, extra)
		}
		want := int64(0)
		if r.hubs.possible() && c.cfg.HubRows > 0 {
			want = 64 * n * 4
		}
		if got := r.StatsFixedBytes(); got != want {
			t.Errorf("%s: hub rows reserve %d bytes, want %d", c.name, got, want)
		}
	}
}

// TestScratchBytes checks, without a device, the memory of a stats block
// with a scratch of working distances (plan.Config.ScratchBytes): a source
// costs its result row alone, the scratch is fixed (slices of whole
// groups, their frontier beside them), and only the batched kernel's
// stats blocks without predecessors run with one.
func TestScratchBytes(t *testing.T) {
	const n = 1000
	g := &graph.CSR{NumVertices: n, Offsets: make([]int64, n+1), Targets: []int32{}, Weights: []int32{}, Weighted: true, Type: graph.DistInt32}
	cfg := defaultBatchedConfig()
	cfg.ScratchBytes = 100 * n * 4 // 100 rows: slices of 96 sources
	r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
	if got := r.bk.scratchSources(); got != 96 {
		t.Errorf("slices of %d sources, want 96", got)
	}
	if got, want := r.StatsBytesPerSource(), int64(4*n+perSourceBytes); got != want {
		t.Errorf("StatsBytesPerSource %d, want %d", got, want)
	}
	if got, want := r.StatsFixedBytes(), scratchDistBytes(n, 96, 4)+batchedFrontierBytes(n, 96, false); got != want || want < 96*n*4 {
		t.Errorf("StatsFixedBytes %d, want %d", got, want)
	}
	if got := r.BytesPerSource(); got != 12*n+perSourceBytes {
		t.Errorf("BytesPerSource %d: a Start keeps its working rows", got)
	}
	small := cfg
	small.ScratchBytes = 1
	if got := newRunner(nil, g, graph.Request{Algorithm: Batched}, small).bk.scratchSources(); got != BatchWidth {
		t.Errorf("a scratch below one group's rows: slices of %d sources, want %d", got, BatchWidth)
	}
	twoSlots := cfg
	twoSlots.OneSlotStats = false
	for name, r := range map[string]*Runner{
		"two slots":    newRunner(nil, g, graph.Request{Algorithm: Batched}, twoSlots),
		"predecessors": newRunner(nil, g, graph.Request{Algorithm: Batched, WithPredecessors: true}, cfg),
		"dijkstra":     newRunner(nil, g, graph.Request{Algorithm: graph.Dijkstra}, cfg),
	} {
		if r.bk.scratchSources() != 0 || r.StatsFixedBytes() != 0 {
			t.Errorf("%s: slices of %d sources, %d fixed bytes; want no scratch", name, r.bk.scratchSources(), r.StatsFixedBytes())
		}
	}
}

// rowsConfig is the default configuration with a working row per source
// (no scratch), whose sizes the tests above compare.
func rowsConfig() batchedConfig {
	c := defaultBatchedConfig()
	c.ScratchBytes = 0
	return c
}

// TestScratchPays checks the rule that declines the scratch
// (plan.Config.ScratchMinShare) on an 80 GB device's free memory: taken
// for R-MAT 18's vertex count (blocks of 45 % of the vertices), declined
// for R-MAT 20's (3.3 %) and for a graph whose every source fits one
// block without it, and always taken under a share of 0.
func TestScratchPays(t *testing.T) {
	const free = 80 << 30
	for _, c := range []struct {
		name  string
		n     int
		share float64
		want  bool
	}{
		{"R-MAT 18", 174403, 0.25, true},
		{"R-MAT 20", 646621, 0.25, false},
		{"one block without it", 46841, 0.25, false},
		{"share 0", 646621, 0, true},
		{"share 0.5", 174403, 0.5, false},
	} {
		g := &graph.CSR{NumVertices: c.n, Offsets: make([]int64, c.n+1), Targets: []int32{}, Weights: []int32{}, Weighted: true, Type: graph.DistInt32}
		cfg := defaultBatchedConfig()
		cfg.ScratchMinShare = c.share
		r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		if got := r.bk.scratchPays(free, func() int64 { return r.bytesPerSource(true) }); got != c.want {
			t.Errorf("%s: scratch pays %v, want %v", c.name, got, c.want)
		}
		if r.bk.scratchDeclined || r.bk.scratchSources() == 0 {
			t.Errorf("%s: scratchPays changed the runner (declined %v, slices of %d)", c.name, r.bk.scratchDeclined, r.bk.scratchSources())
		}
		r.bk.scratchDeclined = true
		if r.bk.scratchSources() != 0 || r.StatsFixedBytes() != 0 || r.StatsBytesPerSource() != int64(c.n)*8+perSourceBytes {
			t.Errorf("%s: a declined scratch still sizes slices of %d, %d fixed bytes, %d a source", c.name, r.bk.scratchSources(), r.StatsFixedBytes(), r.StatsBytesPerSource())
		}
	}
}

// asFloat32 is g, of int32 weights, with those weights as float32: every
// sum exact (plan.ExactSumsOf).
func asFloat32(g *graph.CSR) *graph.CSR {
	exact := *g
	w := make([]float32, len(exact.Targets))
	for i, x := range exact.Weights.([]int32) {
		w[i] = float32(x)
	}
	exact.Weights, exact.Type = w, graph.DistFloat32
	return &exact
}

// TestSizeStatsRun checks, without a device, the hub rows a stats run is
// given (SizeStatsRun, plan.HubRowsAuto): none where one block of the
// budget holds every source, else at most the core's vertices, half the
// rows the budget holds and what leaves the blocks half the budget;
// StatsFixedBytes reserves them and a block keeps at most its own size.
func TestSizeStatsRun(t *testing.T) {
	for gname, g := range statsSlotGraphs(t) {
		n := g.NumVertices
		cfg := rowsConfig()
		r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		if !r.hubs.possible() {
			continue
		}
		per, row := r.StatsBytesPerSource(), r.hubs.rowBytes()
		core, err := r.bk.graph.Core(n, cfg.Config)
		if err != nil {
			t.Fatal(err)
		}
		r.SizeStatsRun(n, per*int64(n))
		if got := r.StatsFixedBytes(); got != 0 || r.hubs.forBlock(n/2) != 0 {
			t.Errorf("%s: a run one block holds keeps %d hub rows (%d bytes)", gname, r.hubs.forBlock(n/2), got)
		}
		budget := per * int64(n/4)
		r.SizeStatsRun(n, budget)
		want := min(len(core), n/8, int(budget/2/row))
		if want == 0 {
			t.Fatalf("%s: the test's budget leaves no hub rows", gname)
		}
		if got := r.hubs.forBlock(n / 4); got != want {
			t.Errorf("%s: %d hub rows beside blocks of %d, want %d (core %d)", gname, got, n/4, want, len(core))
		}
		if got := r.hubs.forBlock(want / 2); got != want/2 {
			t.Errorf("%s: a block of %d keeps %d hub rows, want its size", gname, want/2, got)
		}
		if got := r.StatsFixedBytes(); got != int64(want)*row {
			t.Errorf("%s: %d bytes reserved for %d hub rows, want %d", gname, got, want, int64(want)*row)
		}
		cfg.HubRows = 0
		off := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		off.SizeStatsRun(n, budget)
		if off.hubs.forBlock(n/4) != 0 || off.StatsFixedBytes() != 0 {
			t.Errorf("%s: hub rows kept with HubRows 0", gname)
		}
	}
}

// TestHubPlanAhead checks, without a device, that sizing a run with hub
// rows begins the plan of its hub list (hubPlanAhead), that hubStore.plan hands
// it over once, equal to the plan made then, and plans a part of the
// list or a second request anew; and that runners of one group share one
// plan made ahead.
func TestHubPlanAhead(t *testing.T) {
	checked := 0
	for gname, g := range statsSlotGraphs(t) {
		n := g.NumVertices
		cfg := rowsConfig()
		r := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		if !r.hubs.possible() {
			continue
		}
		r.SizeStatsRun(n, r.StatsBytesPerSource()*int64(n/4))
		h := r.hubs.forBlock(n / 4)
		a := r.hubs.run.ahead
		if h == 0 || a == nil {
			t.Fatalf("%s: %d hub rows, plan ahead %v", gname, h, a != nil)
		}
		v, err := r.hubs.vertices(h)
		if err != nil {
			t.Fatal(err)
		}
		r.hubs.rows = hubState{vertices: v, firstRow: n / 4}
		want, err := r.bk.graph.Plan(v, cfg.HubPlan())
		if err != nil {
			t.Fatal(err)
		}
		// complete is a plan of hubStore.plan's once its finish ran.
		complete := func(bp *plan.Block, finish func(), err error) *plan.Block {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			if finish != nil {
				finish()
			}
			return bp
		}
		got := complete(r.hubs.plan(0, h))
		if got != a.block || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the hub rows' plan is not the one made ahead, or differs from the plan made now", gname)
		}
		again := complete(r.hubs.plan(0, h))
		if again == got || !reflect.DeepEqual(again, want) {
			t.Errorf("%s: a second plan of the hub list is the one made ahead again (%v), or another plan", gname, again == got)
		}
		if part := complete(r.hubs.plan(0, h/2)); len(part.Sources)+len(part.Mins)+len(part.Derive) == 0 {
			t.Errorf("%s: a part of the hub list planned nothing", gname)
		}

		// Two runners of one group: the second takes the first's plan ahead.
		r0 := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		r1 := newRunner(nil, g, graph.Request{Algorithm: Batched}, cfg)
		ShareHubRows([]*Runner{r0, r1})
		r0.SizeStatsRun(n, r0.StatsBytesPerSource()*int64(n/4))
		r1.SizeStatsRun(n, r1.StatsBytesPerSource()*int64(n/4))
		if r0.hubs.run.ahead == nil || r0.hubs.run.ahead != r1.hubs.run.ahead {
			t.Errorf("%s: the runners of a group made %v and %v plans ahead, want one shared", gname, r0.hubs.run.ahead, r1.hubs.run.ahead)
		}
		<-r0.hubs.run.ahead.done
		if a.first != nil {
			t.Errorf("%s: a runner without a group cut the first phase among parts", gname)
		}
		checkFirstCut(t, gname, r0.hubs.run.ahead)
		checked++
	}
	if checked == 0 {
		t.Fatal("no test graph keeps hub rows")
	}
}

// checkFirstCut checks the first phase that a group's plan ahead (a, made)
// cut among its two parts: each share's rows lie in its part and its span
// covers them, together they are the phase, and it is what the phased
// round cuts; a round of the same parts takes it, one of three parts cuts
// its own.
func checkFirstCut(t *testing.T, gname string, a *hubPlanAhead) {
	t.Helper()
	bounds := handBounds(len(a.vertices), 2)
	parts := []hubPart{{lo: bounds[0][0], hi: bounds[0][1]}, {lo: bounds[1][0], hi: bounds[1][1]}}
	c := a.first
	if c == nil || !slices.Equal(c.his, partEnds(parts)) {
		t.Fatalf("%s: first phase cut %v ahead, want one for the parts %v", gname, c, bounds)
	}
	bp := a.block
	seen := 0
	for j, share := range c.share {
		for _, at := range share {
			row := int32(at)
			if bp.Rows != nil {
				row = bp.Rows[at]
			}
			if int(row) < parts[j].lo || int(row) >= parts[j].hi || row < c.span[j][0] || row >= c.span[j][1] {
				t.Fatalf("%s: runner %d's share holds row %d, outside its part %v or its span %v", gname, j, row, parts[j], c.span[j])
			}
			if at < bp.PhaseStart(0) || at >= bp.PhaseStart(1) {
				t.Fatalf("%s: runner %d's share holds position %d, outside the first phase", gname, j, at)
			}
		}
		if len(share) > 0 && (c.part[j] == nil || len(c.part[j].Sources) != len(share)) {
			t.Fatalf("%s: runner %d's share of %d sources planned %v", gname, j, len(share), c.part[j])
		}
		seen += len(share)
	}
	if want := bp.PhaseStart(1) - bp.PhaseStart(0); seen != want || c.part[0] == nil || c.part[1] == nil {
		t.Fatalf("%s: the shares hold %d of the first phase's %d sources (parts planned %v, %v)", gname, seen, want, c.part[0] != nil, c.part[1] != nil)
	}
	if now := cutPhase(bp, 0, c.his); !reflect.DeepEqual(now, *c) {
		t.Errorf("%s: the first phase cut ahead differs from its cut now", gname)
	}
	wait := func(ph *phasedRound) {
		for i := range ph.prep {
			<-ph.prep[i].ready
		}
	}
	ph := newPhasedRound(bp, nil, parts, 2, c)
	wait(ph)
	if !reflect.DeepEqual(ph.prep[0].phaseCut, *c) || &ph.prep[0].share[0][0] != &c.share[0][0] {
		t.Errorf("%s: the phased round did not take the first phase cut ahead", gname)
	}
	three := []hubPart{{lo: 0, hi: 1}, {lo: 1, hi: bounds[1][0]}, parts[1]}
	ph = newPhasedRound(bp, nil, three, 3, c)
	wait(ph)
	if got := ph.prep[0]; len(got.share) != 3 || !reflect.DeepEqual(got.phaseCut, cutPhase(bp, 0, partEnds(three))) {
		t.Errorf("%s: a round of three parts took the first phase cut for two", gname)
	}
}
