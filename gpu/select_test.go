package gpu

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// nearCell is one of the k nearest: its vertex and distance (+Inf for
// none, with vertex -1).
type nearCell struct {
	v graph.VertexID
	d float64
}

// nearestOracle selects the k nearest of each row of full (the CPU
// engine's full rows) by sorting: the columns other than the source (the
// targets, repeats kept, or every vertex), within the cutoff and reached,
// ordered by distance then vertex, the first k, padded with (-1, +Inf).
func nearestOracle(full *graph.Block, req graph.Request, k int) [][]nearCell {
	n := full.NumVertices
	cells := cellsOf(full)
	cut := math.Inf(1)
	if req.HasCutoff {
		cut = cutoffAsFloat(full.Type, req.Cutoff)
	}
	var out [][]nearCell
	for i, s := range full.Sources {
		cols := req.Targets
		if cols == nil {
			cols = make([]graph.VertexID, n)
			for v := range cols {
				cols[v] = graph.VertexID(v)
			}
		}
		var row []nearCell
		for _, v := range cols {
			if d := cells[i*n+int(v)]; v != s && !math.IsInf(d, 1) && d <= cut {
				row = append(row, nearCell{v, d})
			}
		}
		slices.SortFunc(row, func(a, b nearCell) int {
			return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.v, b.v))
		})
		row = row[:min(k, len(row))]
		for len(row) < k {
			row = append(row, nearCell{-1, math.Inf(1)})
		}
		out = append(out, row)
	}
	return out
}

// cpuRows is the CPU engine's full rows (Dijkstra's) of sources in g, the
// oracle the device's narrowed blocks are checked against.
func cpuRows(t *testing.T, g *graph.CSR, sources []graph.VertexID) *graph.Block {
	t.Helper()
	ctx := context.Background()
	cr, err := cpu.New(cpu.WithThreads(2)).Prepare(ctx, g, graph.Request{Algorithm: graph.Dijkstra})
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	full := graph.NewBlock(sources, g.NumVertices, cr.DistType(), false)
	if err := cr.Run(ctx, full); err != nil {
		t.Fatal(err)
	}
	return full
}

// cutoffAsFloat is graph.CutoffOf in the distance type t, as float64.
func cutoffAsFloat(t graph.DistType, c float64) float64 {
	switch t {
	case graph.DistInt32:
		return float64(graph.CutoffOf[int32](c))
	case graph.DistInt64:
		return float64(graph.CutoffOf[int64](c))
	case graph.DistFloat32:
		return float64(graph.CutoffOf[float32](c))
	}
	return graph.CutoffOf[float64](c)
}

// TestNearestOnDevice checks the k nearest selected on the device
// (SelectNearest, kernels/select.cu) against a sort of the CPU engine's
// full rows, for every distance type, on random graphs with weights 0..3
// (many ties, zero distances to vertices other than the source), for k of
// 1, 3, 16 and 64 (more than some sources reach), alone, within a cutoff,
// among targets in random order with a repeat, and both, on auto's kernel
// (and Dijkstra's on one size); in blocks of 1,
// 5 and every source through Run, and in blocks of 7 started ahead
// (Start); and that only sources × k × (distance + vertex) bytes left the
// device.
func TestNearestOnDevice(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	sizes := []int{3, 301, 1999}
	ks := []int{1, 3, 16, MaxDeviceNearest}
	if testing.Short() { // the sanitizer's runs
		ks = []int{3, MaxDeviceNearest}
	} else {
		sizes = append(sizes, 5003)
	}
	for _, n := range sizes {
		for _, dk := range distKinds {
			o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: dk.kind, MinWeight: 0, MaxWeight: 3, Dyadic: !dk.uniform}
			edges, _ := testgraphs.Random(rng, o)
			g, err := graph.Build(edges, graph.BuildOptions{DistType: dk.typ})
			if err != nil {
				t.Fatal(err)
			}
			sources := pickSources(rng, n)
			full := cpuRows(t, g, sources)
			row := cellsOf(full)[:n] // the first source's
			for _, shape := range []struct{ targets, cutoff bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
				q := graph.Request{}
				if shape.targets || shape.cutoff {
					q = narrowQuery(rng, n, row, shape.targets, shape.cutoff)
				}
				// The selection does not depend on the kernel: Dijkstra's
				// rows beside auto's on one size only.
				algs := []graph.Algorithm{graph.Auto}
				if n == 301 {
					algs = append(algs, graph.Dijkstra)
				}
				for _, k := range ks {
					for _, alg := range algs {
						req := q
						req.Algorithm = alg
						name := fmt.Sprintf("n=%d/%s/targets=%v/cutoff=%v/k=%d/%s", n, dk.name, shape.targets, shape.cutoff, k, alg)
						t.Run(name, func(t *testing.T) {
							want := nearestOracle(full, req, k)
							checkKNearest(t, e, g, req, k, sources, want)
						})
					}
				}
			}
		}
	}
}

// checkKNearest runs the k nearest of req from sources on the GPU and
// compares every block with want, the oracle's rows.
func checkKNearest(t *testing.T, e *Engine, g *graph.CSR, req graph.Request, k int, sources []graph.VertexID, want [][]nearCell) {
	ctx := context.Background()
	r, err := e.Prepare(ctx, g, req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.SelectNearest(k) {
		t.Fatalf("SelectNearest(%d) refused on a runner without predecessors", k)
	}
	cellBytes := int64(r.DistType().Size() + 4)
	newBlock := func(lo, hi int) *graph.Block {
		b := graph.NewBlock(sources[lo:hi], k, r.DistType(), false)
		b.NumVertices = g.NumVertices
		b.CellTargets = make([]graph.VertexID, (hi-lo)*k)
		for i := range b.CellTargets {
			b.CellTargets[i] = -7
		}
		poison(b)
		return b
	}
	compare := func(b *graph.Block, lo int, how string) {
		t.Helper()
		cells := cellsOf(b)
		for i := range b.Sources {
			for j := range k {
				got := nearCell{b.CellTargets[i*k+j], cells[i*k+j]}
				if w := want[lo+i][j]; got != w { // a poisoned cell left unwritten differs too
					t.Fatalf("%s: source %d, rank %d: GPU (vertex %d, %v), want (vertex %d, %v); row %v",
						how, b.Sources[i], j+1, got.v, got.d, w.v, w.d, want[lo+i])
				}
			}
		}
	}
	for _, size := range []int{1, 5, len(sources)} {
		upTo := min(len(sources), 4*size+3)
		if size == len(sources) {
			upTo = len(sources)
		}
		for lo := 0; lo < upTo; lo += size {
			hi := min(lo+size, upTo)
			b := newBlock(lo, hi)
			before := r.DownloadedBytes()
			if err := r.Run(ctx, b); err != nil {
				t.Fatalf("block [%d, %d): %v", lo, hi, err)
			}
			if moved, exp := r.DownloadedBytes()-before, int64(hi-lo)*int64(k)*cellBytes; moved != exp {
				t.Fatalf("block [%d, %d): %d bytes copied to the host, want sources × k × %d = %d", lo, hi, moved, cellBytes, exp)
			}
			compare(b, lo, fmt.Sprintf("Run, block of %d from %d", size, lo))
		}
	}
	var prev *Pending
	var prevBlock *graph.Block
	prevLo := 0
	for lo := 0; lo < len(sources); lo += 7 {
		hi := min(lo+7, len(sources))
		b := newBlock(lo, hi)
		p, err := r.Start(ctx, b)
		if err != nil {
			t.Fatalf("Start, block [%d, %d): %v", lo, hi, err)
		}
		if prev != nil {
			if err := prev.Wait(); err != nil {
				t.Fatal(err)
			}
			compare(prevBlock, prevLo, fmt.Sprintf("Start, block from %d", prevLo))
		}
		prev, prevBlock, prevLo = p, b, lo
	}
	if err := prev.Wait(); err != nil {
		t.Fatal(err)
	}
	compare(prevBlock, prevLo, fmt.Sprintf("Start, block from %d", prevLo))
}

// TestSelectNearestRefusals checks, without a device, when SelectNearest
// refuses: k outside [1, MaxDeviceNearest] and a runner with
// predecessors; and that a runner that selects reports k columns of
// distance and vertex per source in its bytes per source.
func TestSelectNearestRefusals(t *testing.T) {
	g := smallCSR(t, []int64{1, 2, 3, 4}, 0)
	for _, tc := range []struct {
		req  graph.Request
		k    int
		want bool
	}{
		{graph.Request{Algorithm: graph.Dijkstra}, 1, true},
		{graph.Request{Algorithm: graph.Dijkstra}, MaxDeviceNearest, true},
		{graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{2, 1}, HasCutoff: true}, 4, true},
		{graph.Request{Algorithm: graph.Dijkstra}, 0, false},
		{graph.Request{Algorithm: graph.Dijkstra}, MaxDeviceNearest + 1, false},
		{graph.Request{Algorithm: graph.Dijkstra, WithPredecessors: true}, 4, false},
	} {
		r := newRunner(nil, g, tc.req, batchedConfig{})
		plain := r.BytesPerSource()
		if got := r.SelectNearest(tc.k); got != tc.want {
			t.Errorf("request %+v, k %d: SelectNearest = %v, want %v", tc.req, tc.k, got, tc.want)
		}
		if !tc.want {
			if r.narrow.nearestK != 0 || r.BytesPerSource() != plain {
				t.Errorf("request %+v, k %d: a refusal changed the runner", tc.req, tc.k)
			}
			continue
		}
		gathered, selected := r.narrow.bytesPerSource()
		if gathered != int64(tc.k*4) || selected != int64(tc.k*4) {
			t.Errorf("k %d of int32 distances: %d + %d bytes per source and slot, want %d + %d", tc.k, gathered, selected, 4*tc.k, 4*tc.k)
		}
		if !r.narrow.blocks() || r.narrow.outWidth() != tc.k {
			t.Errorf("k %d: narrowsBlocks %v, width %d", tc.k, r.narrow.blocks(), r.narrow.outWidth())
		}
	}
}

// TestNarrowLaunchArgs checks, without a device, that the arguments the
// narrowed kernels are launched with (gather, select, stats_narrow) match
// their parameters in the kernel table for every distance type.
func TestNarrowLaunchArgs(t *testing.T) {
	for _, typ := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
		g := smallCSR(t, []int64{1, 2, 3, 4}, typ)
		r := newRunner(nil, g, graph.Request{Algorithm: graph.Dijkstra, Targets: []graph.VertexID{1, 0}, HasCutoff: true}, batchedConfig{})
		r.narrow.nearestK = 3
		s := &r.buf.slots[0]
		for name, args := range map[string][]any{
			"gather_":         r.narrow.gatherArgs(s, 2, s.gathered.ptr),
			"select_nearest_": r.narrow.selectArgs(s, 2, r.buf.sources.ptr),
			"stats_narrow_":   r.narrow.statsArgs(2, r.buf.dist.ptr, r.buf.sources.ptr, r.buf.stats.ptr),
		} {
			i, ok := kernelIndex[name+typeSuffix(typ)]
			if !ok {
				t.Fatalf("no kernel %s%s in the kernel table", name, typeSuffix(typ))
			}
			if err := checkArgs(&kernelTable[i], args); err != nil {
				t.Errorf("%s: %v", typ, err)
			}
		}
	}
}
