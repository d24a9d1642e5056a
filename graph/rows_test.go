package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestForRowChunksCoversEveryRowOnce checks that the chunks cover every row
// once, that a small block or one thread is one call in the caller's
// goroutine, and that a large block is split.
func TestForRowChunksCoversEveryRowOnce(t *testing.T) {
	for _, tc := range []struct{ rows, width, threads int }{
		{0, 100, 4}, {1, 1 << 20, 4}, {7, 10, 4}, {100, graph.SerialRowCells / 100, 4},
		{3, graph.SerialRowCells, 4}, {1000, 1000, 4}, {1000, 1000, 1}, {1001, 100, 3}, {64, 4096, 0},
	} {
		t.Run(fmt.Sprintf("%dx%d/threads=%d", tc.rows, tc.width, tc.threads), func(t *testing.T) {
			seen := make([]int, tc.rows) // each row written by the one call that covers it
			var mu sync.Mutex
			var calls [][2]int
			graph.ForRowChunks(tc.rows, tc.width, tc.threads, func(first, end int) {
				if first < 0 || first >= end || end > tc.rows {
					t.Errorf("chunk [%d, %d) of %d rows", first, end, tc.rows)
					return
				}
				for i := first; i < end; i++ {
					seen[i]++
				}
				mu.Lock()
				calls = append(calls, [2]int{first, end})
				mu.Unlock()
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("row %d covered %d times (chunks %v)", i, c, calls)
				}
			}
			threads := tc.threads
			if threads <= 0 {
				threads = runtime.GOMAXPROCS(0)
			}
			serial := tc.rows*tc.width < graph.SerialRowCells || threads == 1 || tc.rows <= 1
			switch {
			case tc.rows == 0 && len(calls) != 0:
				t.Fatalf("%d calls for no rows", len(calls))
			case tc.rows > 0 && serial && len(calls) != 1:
				t.Fatalf("a serial block ran as %d chunks %v, want one", len(calls), calls)
			case tc.rows > 0 && !serial && len(calls) < 2:
				t.Fatalf("a block of %d cells on %d threads ran as %d chunk", tc.rows*tc.width, threads, len(calls))
			}
		})
	}
}

// randomStatsBlock draws a block of type typ whose distances tie often,
// with zeros, unreachable cells, rows that reach nothing, and by chance
// some targets' columns (repeats and sources among them). Large draws hold
// more than graph.SerialRowCells cells, small ones fewer.
func randomStatsBlock(rng *rand.Rand, typ graph.DistType, large bool) *graph.Block {
	n := 2 + rng.IntN(60)
	rows := 1 + rng.IntN(12)
	if large {
		n, rows = 1000+rng.IntN(3000), 20+rng.IntN(50)
	}
	sources := make([]graph.VertexID, rows)
	for i := range sources {
		sources[i] = graph.VertexID(rng.IntN(n))
	}
	var targets []graph.VertexID
	if rng.IntN(3) == 0 {
		targets = make([]graph.VertexID, 1+rng.IntN(3*n))
		for j := range targets {
			targets[j] = graph.VertexID(rng.IntN(n))
		}
		if large {
			// Enough columns to stay above SerialRowCells.
			targets = append(targets, make([]graph.VertexID, graph.SerialRowCells/rows)...)
		}
	}
	b := graph.NewTargetBlock(sources, targets, n, typ, false)
	w := b.Width()
	for i := range rows {
		nothing := rng.IntN(6) == 0
		for j := range w {
			unreached := nothing || rng.IntN(4) == 0
			setCell(b, i*w+j, unreached, float64(rng.IntN(25))/4)
		}
	}
	return b
}

// setCell writes d (Infinity when unreached) at cell at, rounded down for
// integer types.
func setCell(b *graph.Block, at int, unreached bool, d float64) {
	switch dist := b.Dist.(type) {
	case []int32:
		dist[at] = int32(d)
		if unreached {
			dist[at] = graph.Infinity[int32]()
		}
	case []int64:
		dist[at] = int64(d)
		if unreached {
			dist[at] = graph.Infinity[int64]()
		}
	case []float32:
		dist[at] = float32(d)
		if unreached {
			dist[at] = graph.Infinity[float32]()
		}
	case []float64:
		dist[at] = d
		if unreached {
			dist[at] = graph.Infinity[float64]()
		}
	}
}

// sameStats fails unless a and b are bit for bit the same.
func sameStats(t *testing.T, what string, a, b *graph.Stats) {
	t.Helper()
	bits := func(f []float64) []uint64 {
		out := make([]uint64, len(f))
		for i, x := range f {
			out[i] = math.Float64bits(x)
		}
		return out
	}
	switch {
	case !slices.Equal(a.Sources, b.Sources) || a.Type != b.Type:
		t.Fatalf("%s: sources or type differ", what)
	case !slices.Equal(a.Reachable, b.Reachable):
		t.Fatalf("%s: reachable %v, want %v", what, a.Reachable, b.Reachable)
	case !slices.Equal(bits(a.Eccentricity), bits(b.Eccentricity)):
		t.Fatalf("%s: eccentricity %v, want %v", what, a.Eccentricity, b.Eccentricity)
	case !slices.Equal(a.SumInt, b.SumInt) || !slices.Equal(bits(a.SumFloat), bits(b.SumFloat)):
		t.Fatalf("%s: sums %v %v, want %v %v", what, a.SumInt, a.SumFloat, b.SumInt, b.SumFloat)
	case !slices.Equal(bits(a.Closeness), bits(b.Closeness)):
		t.Fatalf("%s: closeness %v, want %v", what, a.Closeness, b.Closeness)
	case !slices.Equal(bits(a.Harmonic), bits(b.Harmonic)):
		t.Fatalf("%s: harmonic %v, want %v", what, a.Harmonic, b.Harmonic)
	}
}

// TestComputeStatsThreadsEqualSerial checks that the stats of random
// blocks of every distance type are bit for bit those of one thread,
// whatever the threads and GOMAXPROCS, and that reachable counts and sums
// are those of a plain loop.
func TestComputeStatsThreadsEqualSerial(t *testing.T) {
	rng := testgraphs.Rand(t, 40)
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, typ := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
			for trial := range 12 {
				b := randomStatsBlock(rng, typ, trial%3 != 0)
				what := fmt.Sprintf("GOMAXPROCS %d, %s trial %d (%d rows × %d)", procs, typ, trial, len(b.Sources), b.Width())
				serial := graph.ComputeStatsThreads(b, 1)
				checkPlainStats(t, what, b, serial)
				sameStats(t, what+", ComputeStats", graph.ComputeStats(b), serial)
				sameStats(t, what+", 4 threads", graph.ComputeStatsThreads(b, 4), serial)
				sameStats(t, what+", 3 threads", graph.ComputeStatsThreads(b, 3), serial)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// checkPlainStats checks reachable and sum of s against a plain loop over
// the cells of b (as float64, exact for these small distances).
func checkPlainStats(t *testing.T, what string, b *graph.Block, s *graph.Stats) {
	t.Helper()
	w := b.Width()
	for i, src := range b.Sources {
		var reach int64
		var sum float64
		for j := range w {
			d, ok := cellAt(b, i*w+j)
			if ok && b.Target(i, j) != src {
				reach++
				sum += d
			}
		}
		got := float64(0)
		if s.SumFloat != nil {
			got = s.SumFloat[i]
		} else {
			got = float64(s.SumInt[i])
		}
		if s.Reachable[i] != reach || got != sum {
			t.Fatalf("%s: row %d: reachable %d, sum %v; a plain loop gives %d, %v", what, i, s.Reachable[i], got, reach, sum)
		}
	}
}

// cellAt is cell at of b as float64, false where unreached.
func cellAt(b *graph.Block, at int) (float64, bool) {
	switch dist := b.Dist.(type) {
	case []int32:
		return float64(dist[at]), dist[at] != graph.Infinity[int32]()
	case []int64:
		return float64(dist[at]), dist[at] != graph.Infinity[int64]()
	case []float32:
		return float64(dist[at]), dist[at] != graph.Infinity[float32]()
	case []float64:
		return dist[at], dist[at] != graph.Infinity[float64]()
	}
	return 0, false
}

// BenchmarkComputeStats reduces a block of 32 full rows of 2^17 int32
// distances (a tenth unreachable), on one thread and on every core.
func BenchmarkComputeStats(b *testing.B) {
	const rows, n = 32, 1 << 17
	rng := rand.New(rand.NewPCG(1, 2))
	sources := make([]graph.VertexID, rows)
	for i := range sources {
		sources[i] = graph.VertexID(rng.IntN(n))
	}
	blk := graph.NewBlock(sources, n, graph.DistInt32, false)
	for at := range rows * n {
		setCell(blk, at, rng.IntN(10) == 0, float64(rng.IntN(1000)))
	}
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("int32/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				graph.ComputeStatsThreads(blk, threads)
			}
			b.ReportMetric(float64(rows*n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkForRowChunksOverhead is the cost of one split of a block just
// above SerialRowCells whose rows do nothing: the goroutines' start and
// join, which SerialRowCells weighs against the work saved.
func BenchmarkForRowChunksOverhead(b *testing.B) {
	for b.Loop() {
		graph.ForRowChunks(64, graph.SerialRowCells/64, 0, func(first, end int) {})
	}
}
