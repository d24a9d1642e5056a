package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// randomFullBlock draws full rows of type typ over n vertices, with
// predecessors: distances that tie often, zeros, unreachable cells (their
// predecessor -1), and rows that reach nothing but their source.
func randomFullBlock(rng *rand.Rand, typ graph.DistType, rows, n int) *graph.Block {
	sources := make([]graph.VertexID, rows)
	for i := range sources {
		sources[i] = graph.VertexID(rng.IntN(n))
	}
	b := graph.NewBlock(sources, n, typ, true)
	for i, s := range sources {
		nothing := rng.IntN(6) == 0
		for v := range n {
			at := i*n + v
			unreached := nothing || rng.IntN(4) == 0
			d := float64(rng.IntN(25)) / 4
			if graph.VertexID(v) == s {
				unreached, d = false, 0
			}
			b.Pred[at] = graph.VertexID(rng.IntN(n))
			if unreached || graph.VertexID(v) == s {
				b.Pred[at] = -1
			}
			switch dist := b.Dist.(type) {
			case []int32:
				dist[at] = pick(unreached, int32(d))
			case []int64:
				dist[at] = pick(unreached, int64(d))
			case []float32:
				dist[at] = pick(unreached, float32(d))
			case []float64:
				dist[at] = pick(unreached, d)
			}
		}
	}
	return b
}

func pick[D graph.Number](unreached bool, d D) D {
	if unreached {
		return graph.Infinity[D]()
	}
	return d
}

// sameBlock fails unless a and b hold the same cells bit for bit.
func sameBlock(t *testing.T, what string, a, b *graph.Block) {
	t.Helper()
	if !slices.Equal(a.Sources, b.Sources) || a.Type != b.Type || a.Width() != b.Width() {
		t.Fatalf("%s: shapes differ", what)
	}
	same := false
	switch da := a.Dist.(type) {
	case []int32:
		same = slices.Equal(da, b.Dist.([]int32))
	case []int64:
		same = slices.Equal(da, b.Dist.([]int64))
	case []float32:
		same = slices.EqualFunc(da, b.Dist.([]float32), func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	case []float64:
		same = slices.EqualFunc(da, b.Dist.([]float64), func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	switch {
	case !same:
		t.Fatalf("%s: distances differ", what)
	case !slices.Equal(a.Pred, b.Pred):
		t.Fatalf("%s: predecessors differ", what)
	case !slices.Equal(a.CellTargets, b.CellTargets):
		t.Fatalf("%s: cell targets %v, want %v", what, a.CellTargets, b.CellTargets)
	}
}

// cellFloat is cell at of b as float64, +Inf where unreached.
func cellFloat(b *graph.Block, at int) float64 {
	switch d := b.Dist.(type) {
	case []int32:
		return unreachedInf(d[at])
	case []int64:
		return unreachedInf(d[at])
	case []float32:
		return unreachedInf(d[at])
	}
	return unreachedInf(b.Dist.([]float64)[at])
}

func unreachedInf[D graph.Number](d D) float64 {
	if d == graph.Infinity[D]() {
		return math.Inf(1)
	}
	return float64(d)
}

// nearestOracle is every reached cell of row i of blk other than the
// source as (distance, vertex, column), sorted nearest first: the k nearest are
// its first k.
func nearestOracle(blk *graph.Block, i int) []nearCell[float64] {
	var all []nearCell[float64]
	w := blk.Width()
	for j := range w {
		d, v := cellFloat(blk, i*w+j), blk.Target(i, j)
		if !math.IsInf(d, 1) && v != blk.Sources[i] {
			all = append(all, nearCell[float64]{d: d, v: v, col: int32(j)})
		}
	}
	slices.SortFunc(all, func(a, b nearCell[float64]) int {
		switch {
		case a.after(b):
			return 1
		case b.after(a):
			return -1
		}
		return 0
	})
	return all
}

// TestHostReductionsEqualSerial checks the host narrowing and the k
// nearest of random blocks of every distance type, with and without
// targets (repeats and sources among them), cutoff and predecessors: on
// several threads and under GOMAXPROCS 1 and 4 they are bit for bit the
// serial result, which agrees with a plain gather and a sorting oracle.
func TestHostReductionsEqualSerial(t *testing.T) {
	rng := testgraphs.Rand(t, 41)
	trials := 8
	if testing.Short() {
		trials = 4 // the race detector's run (make test-race)
	}
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, typ := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
			for trial := range trials {
				// Odd trials are large: more than graph.SerialRowCells cells.
				rows, n := 1+rng.IntN(8), 2+rng.IntN(50)
				if trial%2 == 1 {
					rows, n = 20+rng.IntN(40), 2000+rng.IntN(3000)
				}
				full := randomFullBlock(rng, typ, rows, n)
				req := graph.Request{WithPredecessors: true}
				if rng.IntN(2) == 0 {
					req.HasCutoff, req.Cutoff = true, rng.Float64()*7
				}
				if rng.IntN(3) > 0 {
					req.Targets = make([]graph.VertexID, 1+rng.IntN(2*n))
					for j := range req.Targets {
						req.Targets[j] = graph.VertexID(rng.IntN(n))
					}
					req.Targets = append(req.Targets, full.Sources[0], full.Sources[0])
				}
				what := fmt.Sprintf("GOMAXPROCS %d, %s trial %d (%d rows × %d, %d targets, cutoff %v %v)",
					procs, typ, trial, rows, n, len(req.Targets), req.HasCutoff, req.Cutoff)
				narrowed := checkNarrowThreads(t, what, full, req)
				checkNearestThreads(t, what+", the full block", full, []int{1, 16, n + 2})
				checkNearestThreads(t, what+", the narrowed block", narrowed, []int{3, 16})
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// checkNarrowThreads narrows full by req serially and on several threads,
// compares them and a plain gather, and returns the serial result.
func checkNarrowThreads(t *testing.T, what string, full *graph.Block, req graph.Request) *graph.Block {
	t.Helper()
	narrow := func(threads int) *graph.Block {
		req := req
		req.Threads = threads
		out := graph.NewTargetBlock(full.Sources, req.Targets, full.NumVertices, full.Type, true)
		h := &hostNarrowed{inner: fixedRunner{full}, req: req, n: full.NumVertices}
		if err := h.Run(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	serial := narrow(1)
	for _, threads := range []int{0, 3, 4} {
		sameBlock(t, fmt.Sprintf("%s, narrowed on %d threads", what, threads), narrow(threads), serial)
	}
	n, w := full.NumVertices, serial.Width()
	for i := range full.Sources {
		for j := range w {
			v := serial.Target(i, j)
			want, pred := cellFloat(full, i*n+int(v)), full.Pred[i*n+int(v)]
			if req.HasCutoff && want > req.Cutoff {
				want, pred = math.Inf(1), -1
			}
			if got := cellFloat(serial, i*w+j); got != want || serial.Pred[i*w+j] != pred {
				t.Fatalf("%s: row %d column %d (vertex %d): %v pred %d, want %v pred %d", what, i, j, v, got, serial.Pred[i*w+j], want, pred)
			}
		}
	}
	return serial
}

// checkNearestThreads selects the k nearest of blk for each of ks
// serially, on several threads and through nearestOf, and checks them
// against the oracle.
func checkNearestThreads(t *testing.T, what string, blk *graph.Block, ks []int) {
	t.Helper()
	oracle := make([][]nearCell[float64], len(blk.Sources))
	for i := range oracle {
		oracle[i] = nearestOracle(blk, i)
	}
	for _, k := range ks {
		what := fmt.Sprintf("%s, k %d", what, k)
		serial := nearestOfThreads(blk, k, 1)
		sameBlock(t, what+", nearestOf", nearestOf(blk, k), serial)
		for _, threads := range []int{3, 4} {
			sameBlock(t, fmt.Sprintf("%s, %d threads", what, threads), nearestOfThreads(blk, k, threads), serial)
		}
		for i := range blk.Sources {
			want := oracle[i][:min(k, len(oracle[i]))]
			for c := range k {
				at := i*k + c
				got := nearCell[float64]{d: cellFloat(serial, at), v: serial.CellTargets[at]}
				if c >= len(want) {
					if !math.IsInf(got.d, 1) || got.v != -1 || serial.Pred[at] != -1 {
						t.Fatalf("%s: row %d rank %d: %+v, want none (only %d reached)", what, i, c+1, got, len(want))
					}
					continue
				}
				if got.d != want[c].d || got.v != want[c].v {
					t.Fatalf("%s: row %d rank %d: %+v, want %+v", what, i, c+1, got, want[c])
				}
				if pred := blk.Pred[i*blk.Width()+int(want[c].col)]; serial.Pred[at] != pred {
					t.Fatalf("%s: row %d rank %d: predecessor %d, want %d", what, i, c+1, serial.Pred[at], pred)
				}
			}
		}
	}
}

// fixedRunner is a runner whose every block is a copy of full's rows.
type fixedRunner struct{ full *graph.Block }

func (f fixedRunner) DistType() graph.DistType { return f.full.Type }
func (f fixedRunner) BytesPerSource() int64    { return 0 }
func (f fixedRunner) Close() error             { return nil }

func (f fixedRunner) Run(_ context.Context, out *graph.Block) error {
	switch d := out.Dist.(type) {
	case []int32:
		copy(d, f.full.Dist.([]int32))
	case []int64:
		copy(d, f.full.Dist.([]int64))
	case []float32:
		copy(d, f.full.Dist.([]float32))
	case []float64:
		copy(d, f.full.Dist.([]float64))
	}
	copy(out.Pred, f.full.Pred)
	return nil
}

// BenchmarkNearestOf selects the 16 nearest of a block of 32 full rows of
// 2^17 int32 distances, on one thread and on every core: distances of
// few values that tie often (randomFullBlock's, as hop counts do), and
// distances spread over 0..99999, a quarter unreachable.
func BenchmarkNearestOf(b *testing.B) {
	const rows, n = 32, 1 << 17
	rng := rand.New(rand.NewPCG(1, 2))
	ties := randomFullBlock(rng, graph.DistInt32, rows, n)
	ties.Pred = nil
	spread := graph.NewBlock(ties.Sources, n, graph.DistInt32, false)
	for at, d := range graph.DistOf[int32](ties) {
		if d != graph.Infinity[int32]() {
			d = int32(rng.IntN(100000))
		}
		graph.DistOf[int32](spread)[at] = d
	}
	for _, blk := range []struct {
		name string
		blk  *graph.Block
	}{{"ties", ties}, {"spread", spread}} {
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("int32/%s/k=16/threads=%d", blk.name, threads), func(b *testing.B) {
				for b.Loop() {
					nearestOfThreads(blk.blk, 16, threads)
				}
				b.ReportMetric(float64(rows*n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
	}
}
