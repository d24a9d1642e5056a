package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// cellsOf is every cell of b as float64, +Inf where unreachable.
func cellsOf(b *graph.Block) []float64 {
	var out []float64
	switch d := b.Dist.(type) {
	case []int32:
		for _, x := range d {
			out = append(out, float64(x))
			if x == math.MaxInt32 {
				out[len(out)-1] = math.Inf(1)
			}
		}
	case []int64:
		for _, x := range d {
			out = append(out, float64(x))
			if x == math.MaxInt64 {
				out[len(out)-1] = math.Inf(1)
			}
		}
	case []float32:
		for _, x := range d {
			out = append(out, float64(x))
		}
	case []float64:
		out = append(out, d...)
	}
	return out
}

// narrowQuery draws targets in random order with repeats (nil for a
// cutoff alone) and, when withCutoff, a cutoff among the distances of
// row, half the time between two distances.
func narrowQuery(rng *rand.Rand, n int, row []float64, targets, withCutoff bool) graph.Request {
	var req graph.Request
	if targets {
		req.Targets = []graph.VertexID{}
		for range 1 + rng.IntN(min(n, 40)) {
			req.Targets = append(req.Targets, graph.VertexID(rng.IntN(n)))
		}
		req.Targets = append(req.Targets, req.Targets[rng.IntN(len(req.Targets))])
	}
	if withCutoff {
		var finite []float64
		for _, d := range row {
			if !math.IsInf(d, 1) {
				finite = append(finite, d)
			}
		}
		req.Cutoff, req.HasCutoff = finite[rng.IntN(len(finite))], true
		if rng.IntN(2) == 0 {
			req.Cutoff += 0.25
		}
	}
	return req
}

// TestNarrowedAgainstCPU runs narrowed requests (targets in random order
// with a repeat, with and without a cutoff, and a cutoff alone) on the GPU
// engine's gather path for every distance type, auto's batched kernel and
// Dijkstra's, in blocks of several sizes, against the CPU engine's
// narrowed rows; and checks that the only results that left the device
// were sources × targets × the distance's size bytes per block.
func TestNarrowedAgainstCPU(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, n := range []int{3, 301, 1999} {
		for _, dk := range distKinds {
			o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 20, Dyadic: !dk.uniform}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			sources := pickSources(rng, n)
			row := cellsOf(cpuRows(t, g, sources[:1]))
			for _, shape := range []struct{ targets, cutoff bool }{{true, false}, {true, true}, {false, true}} {
				q := narrowQuery(rng, n, row, shape.targets, shape.cutoff)
				for _, alg := range []graph.Algorithm{graph.Auto, graph.Dijkstra} {
					req := q
					req.Algorithm = alg
					name := fmt.Sprintf("n=%d/%s/targets=%v/cutoff=%v/%s", n, dk.name, shape.targets, shape.cutoff, alg)
					t.Run(name, func(t *testing.T) { checkNarrowed(t, e, g, req, sources) })
				}
			}
		}
	}
}

// checkNarrowed runs req from sources on the GPU in blocks of 1, 5 and
// every source (a last block of 5 shorter where the sources run out), and
// on the CPU engine, and compares the cells and the bytes copied to the
// host; then the same in blocks of 7 started ahead (Start, two in flight),
// and the stats of the narrowed rows reduced on the device (RunStats)
// against graph.ComputeStats of the CPU's narrowed block.
func checkNarrowed(t *testing.T, e *Engine, g *graph.CSR, req graph.Request, sources []graph.VertexID) {
	ctx := context.Background()
	cr, err := cpu.New(cpu.WithThreads(2)).Prepare(ctx, g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	want := graph.NewTargetBlock(sources, req.Targets, g.NumVertices, cr.DistType(), false)
	if err := cr.Run(ctx, want); err != nil {
		t.Fatal(err)
	}
	wantCells := cellsOf(want)
	r, err := e.Prepare(ctx, g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Narrowed() {
		t.Fatal("a runner prepared with targets or a cutoff and no predecessors is not narrowed")
	}
	if r.DistType() != cr.DistType() {
		t.Fatalf("GPU distances are %s, CPU's %s", r.DistType(), cr.DistType())
	}
	w := want.Width()
	for _, size := range []int{1, 5, len(sources)} {
		// Blocks of 1 and 5 cover the first sources only (fewer launches);
		// the whole block covers them all.
		upTo := min(len(sources), 4*size+3)
		if size == len(sources) {
			upTo = len(sources)
		}
		for lo := 0; lo < upTo; lo += size {
			hi := min(lo+size, upTo)
			got := graph.NewTargetBlock(sources[lo:hi], req.Targets, g.NumVertices, r.DistType(), false)
			poison(got)
			before := r.DownloadedBytes()
			if err := r.Run(ctx, got); err != nil {
				t.Fatalf("block [%d, %d): %v", lo, hi, err)
			}
			if moved, exp := r.DownloadedBytes()-before, int64((hi-lo)*w*r.DistType().Size()); moved != exp {
				t.Fatalf("block [%d, %d) of %d columns: %d bytes copied to the host, want sources × targets × %d = %d",
					lo, hi, w, moved, r.DistType().Size(), exp)
			}
			compareNarrowed(t, got, wantCells, lo, w, size)
		}
	}
	checkNarrowedAhead(t, r, g, req, sources, wantCells, w)
	checkNarrowedStats(t, r, want)
}

// compareNarrowed compares the cells of got, the block of sources from lo
// on, with the CPU's cells.
func compareNarrowed(t *testing.T, got *graph.Block, wantCells []float64, lo, w, size int) {
	t.Helper()
	for c, d := range cellsOf(got) {
		if x := wantCells[lo*w+c]; d != x { // a poisoned NaN left unwritten differs too
			i, j := c/w, c%w
			t.Fatalf("block of %d from %d: source %d, column %d (vertex %d): GPU %v, CPU %v",
				size, lo, got.Sources[i], j, got.Target(i, j), d, x)
		}
	}
}

// checkNarrowedAhead runs every source in blocks of 7 through Start, the
// next block started before the previous one is waited for (two result
// slots in flight), and compares every block with the CPU's cells and the
// bytes copied with sources × targets × the distance's size.
func checkNarrowedAhead(t *testing.T, r *Runner, g *graph.CSR, req graph.Request, sources []graph.VertexID, wantCells []float64, w int) {
	t.Helper()
	ctx := context.Background()
	type started struct {
		lo  int
		blk *graph.Block
		p   *Pending
	}
	var prev *started
	finish := func(s *started) {
		if err := s.p.Wait(); err != nil {
			t.Fatalf("ahead, block from %d: %v", s.lo, err)
		}
		compareNarrowed(t, s.blk, wantCells, s.lo, w, 7)
	}
	before := r.DownloadedBytes()
	for lo := 0; lo < len(sources); lo += 7 {
		hi := min(lo+7, len(sources))
		blk := graph.NewTargetBlock(sources[lo:hi], req.Targets, g.NumVertices, r.DistType(), false)
		poison(blk)
		p, err := r.Start(ctx, blk)
		if err != nil {
			t.Fatalf("ahead, block [%d, %d): %v", lo, hi, err)
		}
		if prev != nil {
			finish(prev)
		}
		prev = &started{lo, blk, p}
	}
	if prev != nil {
		finish(prev)
	}
	if moved, exp := r.DownloadedBytes()-before, int64(len(sources)*w*r.DistType().Size()); moved != exp {
		t.Fatalf("blocks started ahead: %d bytes copied to the host, want sources × targets × %d = %d", moved, r.DistType().Size(), exp)
	}
}

// checkNarrowedStats compares RunStats of a narrowed runner with
// graph.ComputeStats of the CPU's narrowed block want (compareStats: float
// sums within statsTolerance of the sums of the terms' magnitudes), and
// checks that only the stats words left the device.
func checkNarrowedStats(t *testing.T, r *Runner, want *graph.Block) {
	t.Helper()
	before := r.DownloadedBytes()
	got, err := r.RunStats(context.Background(), want.Sources)
	if err != nil {
		t.Fatalf("RunStats of a narrowed runner: %v", err)
	}
	if moved, exp := r.DownloadedBytes()-before, int64(8*statsWords*len(want.Sources)); moved != exp {
		t.Fatalf("narrowed RunStats copied %d bytes, want %d", moved, exp)
	}
	w := want.Width()
	cells := cellsOf(want)
	absSum := make([]float64, len(want.Sources))
	absHarm := make([]float64, len(want.Sources))
	for i, s := range want.Sources {
		for j := range w {
			d := cells[i*w+j]
			if math.IsInf(d, 1) || want.Target(i, j) == s {
				continue
			}
			absSum[i] += math.Abs(d)
			if d != 0 {
				absHarm[i] += math.Abs(1 / d)
			}
		}
	}
	compareStats(t, got, graph.ComputeStats(want), absSum, absHarm)
}

// TestNarrowedRefusesFullRows checks that a narrowed runner refuses the
// path of full rows (ComputeResident) and blocks of other columns, through
// Run and Start alike, that a request with predecessors is not narrowed,
// and that a reachable negative cycle still gives a
// *graph.NegativeCycleError, through Run and RunStats.
func TestNarrowedRefusesFullRows(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	g := smallCSR(t, []int64{1, 2, 3, 4}, 0)
	n := g.NumVertices
	req := graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{1, 0}, Cutoff: 3, HasCutoff: true}
	r, err := e.Prepare(ctx, g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sources := []graph.VertexID{0}
	if _, err := r.Start(ctx, graph.NewBlock(sources, n, r.DistType(), false)); err == nil || !strings.Contains(err.Error(), "target columns") {
		t.Errorf("Start of a block of every column on a narrowed runner: err = %v", err)
	}
	if _, err := r.ComputeResident(ctx, sources); err == nil || !strings.Contains(err.Error(), "targets, a cutoff") {
		t.Errorf("ComputeResident on a narrowed runner: err = %v", err)
	}
	for _, b := range []*graph.Block{
		graph.NewBlock(sources, n, r.DistType(), false),
		graph.NewTargetBlock(sources, []graph.VertexID{0, 1}, n, r.DistType(), false),
	} {
		if err := r.Run(ctx, b); err == nil {
			t.Errorf("Run of a block of columns %v for targets %v: no error", b.Targets, req.Targets)
		}
	}
	if r.DownloadedBytes() != 0 {
		t.Errorf("refused runs copied %d bytes", r.DownloadedBytes())
	}
	withPred := req
	withPred.WithPredecessors = true
	rp, err := e.Prepare(ctx, g, withPred)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	if rp.Narrowed() {
		t.Error("a runner with predecessors claims to narrow on the device")
	}

	o := testgraphs.RandomOptions{N: 50, M: 100, Kind: testgraphs.Int, MinWeight: 6, MaxWeight: 30, Cycle: 4}
	edges, cycle := testgraphs.Random(newSeed(t), o)
	gc, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	creq := graph.Request{Algorithm: graph.BellmanFord, Targets: []graph.VertexID{cycle[0], 7}}
	rc, err := e.Prepare(ctx, gc, creq)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	err = rc.Run(ctx, graph.NewTargetBlock([]graph.VertexID{cycle[1]}, creq.Targets, gc.NumVertices, rc.DistType(), false))
	var nc *graph.NegativeCycleError
	if !errors.As(err, &nc) {
		t.Fatalf("narrowed run from a vertex on a negative cycle: err = %v", err)
	}
	if _, err := rc.RunStats(ctx, []graph.VertexID{cycle[1]}); !errors.As(err, &nc) {
		t.Fatalf("narrowed stats from a vertex on a negative cycle: err = %v", err)
	}
}

// TestNarrowedRequests checks, without a device, which runners narrow on
// the device and the cutoff gather.cu receives for every distance type:
// the largest distance of the type at most the cutoff, infinity without.
func TestNarrowedRequests(t *testing.T) {
	for _, tc := range []struct {
		req  graph.Request
		want bool
	}{
		{graph.Request{Algorithm: graph.Dijkstra}, false},
		{graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{2}}, true},
		{graph.Request{Algorithm: graph.Dijkstra, HasCutoff: true}, true},
		{graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{2}, WithPredecessors: true}, false},
	} {
		r := newRunner(nil, smallCSR(t, []int64{1, 2, 3, 4}, 0), tc.req, batchedConfig{})
		if r.Narrowed() != tc.want {
			t.Errorf("request %+v: Narrowed = %v, want %v", tc.req, r.Narrowed(), tc.want)
		}
	}
	third := float32(1) / 3
	for _, tc := range []struct {
		typ    graph.DistType
		cutoff float64
		has    bool
		want   uint64
	}{
		{graph.DistInt32, 2.5, true, 2},
		{graph.DistInt32, 0, false, math.MaxInt32},
		{graph.DistInt32, 1e12, true, math.MaxInt32},
		{graph.DistInt64, 7, true, 7},
		{graph.DistInt64, 0, false, math.MaxInt64},
		{graph.DistFloat32, 1.0 / 3, true, uint64(math.Float32bits(math.Nextafter32(third, 0)))},
		{graph.DistFloat32, 0.5, true, uint64(math.Float32bits(0.5))},
		{graph.DistFloat32, 0, false, uint64(math.Float32bits(float32(math.Inf(1))))},
		{graph.DistFloat64, 0.1, true, math.Float64bits(0.1)},
		{graph.DistFloat64, 0, false, math.Float64bits(math.Inf(1))},
	} {
		if float64(third) <= 1.0/3 {
			t.Fatal("the float32 nearest 1/3 is expected above it")
		}
		g := smallCSR(t, []int64{1, 2, 3, 4}, tc.typ)
		r := newRunner(nil, g, graph.Request{Algorithm: graph.Dijkstra, Cutoff: tc.cutoff, HasCutoff: tc.has}, batchedConfig{})
		if got := r.narrow.cutBits(); got != tc.want {
			t.Errorf("%s cutoff %v (set %v): bits %#x, want %#x", tc.typ, tc.cutoff, tc.has, got, tc.want)
		}
	}
}

// TestRowsClippedByKernel checks, without a device, when a narrowed block
// skips the gather's clip: only for a cutoff alone that the batched
// kernels stop at (KernelCutoff on, a cutoff below the type's infinity);
// targets, the k nearest, other algorithms and the in-kernel cutoff
// switched off keep the gather, and a runner with predecessors narrows
// nothing.
func TestRowsClippedByKernel(t *testing.T) {
	on := defaultBatchedConfig()
	off := defaultBatchedConfig()
	off.KernelCutoff = false
	batched := func(cut float64) graph.Request {
		return graph.Request{Algorithm: Batched, Cutoff: cut, HasCutoff: true}
	}
	for _, tc := range []struct {
		what    string
		typ     graph.DistType
		req     graph.Request
		cfg     batchedConfig
		nearest int
		want    bool
	}{
		{"batched, cutoff alone", graph.DistInt32, batched(5), on, 0, true},
		{"batched, cutoff 0", graph.DistFloat64, batched(0), on, 0, true},
		{"in-kernel cutoff off", graph.DistInt32, batched(5), off, 0, false},
		{"cutoff past the type's distances", graph.DistInt32, batched(1e12), on, 0, false},
		{"targets", graph.DistInt32, graph.Request{Algorithm: Batched, Cutoff: 5, HasCutoff: true, Targets: []graph.VertexID{1}}, on, 0, false},
		{"k nearest", graph.DistInt32, batched(5), on, 3, false},
		{"no cutoff", graph.DistInt32, graph.Request{Algorithm: Batched}, on, 0, false},
		{"dijkstra", graph.DistInt32, graph.Request{Algorithm: graph.Dijkstra, Cutoff: 5, HasCutoff: true}, on, 0, false},
		{"negative cutoff", graph.DistInt64, batched(-1), on, 0, false},
		{"predecessors (not narrowed)", graph.DistInt32, graph.Request{Algorithm: Batched, Cutoff: 5, HasCutoff: true, WithPredecessors: true}, on, 0, false},
	} {
		r := newRunner(nil, smallCSR(t, []int64{1, 2, 3, 4}, tc.typ), tc.req, tc.cfg)
		r.narrow.nearestK = tc.nearest
		if got := r.narrow.rowsClippedByKernel(r.bk.cuts()); got != tc.want {
			t.Errorf("%s: rowsClippedByKernel = %v, want %v", tc.what, got, tc.want)
		}
	}
}
