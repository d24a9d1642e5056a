package graph

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomEdges draws m rows over n vertices of weight kind (0 none, 1
// integers with negatives, 2 float32, 3 float64), a quarter of them on a
// few hubs (skewed rows, many parallel edges) and some self-loops.
func randomEdges(rng *rand.Rand, n, m, kind int) *Edges {
	e := &Edges{NumVertices: n}
	pick := func() int32 {
		if rng.IntN(4) == 0 {
			return int32(rng.IntN(min(n, 3)))
		}
		return int32(rng.IntN(n))
	}
	for range m {
		s, d := pick(), pick()
		if rng.IntN(50) == 0 {
			d = s
		}
		e.Src, e.Dst = append(e.Src, s), append(e.Dst, d)
		switch kind {
		case 1:
			e.IntWeights = append(e.IntWeights, int64(rng.IntN(40)-5))
		case 2:
			e.Float32Weights = append(e.Float32Weights, float32(rng.IntN(8))/4) // ties among parallel edges
		case 3:
			e.Float64Weights = append(e.Float64Weights, rng.Float64()*10)
		}
	}
	return e
}

// TestBuildParallelMatchesSerial checks that the build on several workers
// gives the serial build's CSR exactly (offsets, targets, weights in
// order, bounds) for every weight type, both directions and worker counts
// that do and do not divide the rows.
func TestBuildParallelMatchesSerial(t *testing.T) {
	seed := drawSeed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	for trial := range 60 {
		n := 1 + rng.IntN(300)
		m := rng.IntN(3000)
		kind := rng.IntN(4)
		undirected := rng.IntN(2) == 0
		e := randomEdges(rng, n, m, kind)
		t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) {
			want, err := Build(e, BuildOptions{Undirected: undirected}) // below parallelMinRows: serial
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for _, workers := range []int{2, 3, 7} {
				got := buildOn(want, e, workers)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, n %d, m %d, kind %d, undirected %v, %d workers: the parallel CSR differs from the serial one\n got %+v\nwant %+v",
						seed, n, m, kind, undirected, workers, got, want)
				}
			}
		})
	}
}

// TestBuildLargeIsParallel checks the rule that sends a large edge list to
// the parallel build, and that Build's result on one is the serial one.
func TestBuildLargeIsParallel(t *testing.T) {
	if w := parallelWorkers(1000, parallelMinRows-1, 16); w != 1 {
		t.Errorf("below parallelMinRows rows: %d workers, want 1", w)
	}
	if w := parallelWorkers(1000, 1<<20, 1); w != 1 {
		t.Errorf("one core: %d workers, want 1", w)
	}
	if w := parallelWorkers(1<<20, 1<<20, 16); w != 1 {
		t.Errorf("a row per vertex: %d workers, want 1 (histograms as large as the rows)", w)
	}
	if w := parallelWorkers(1<<14, 1<<20, 64); w != parallelMaxWorkers {
		t.Errorf("64 cores, 64 rows a vertex: %d workers, want %d", w, parallelMaxWorkers)
	}
	seed := drawSeed(t)
	rng := rand.New(rand.NewPCG(seed, 12))
	e := randomEdges(rng, 5000, parallelMinRows+777, 1)
	got, err := Build(e, BuildOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	if buildWorkers(e.NumVertices, len(e.Src)) > 1 {
		if w := buildOn(got, e, 2); !reflect.DeepEqual(w, got) {
			t.Fatalf("seed %d: the parallel build differs from Build's", seed)
		}
	}
	want := buildOn(got, e, 1)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d: Build of %d rows differs from the serial build", seed, len(e.Src))
	}
}

// buildOn builds e again as like was built (its type, direction), with
// workers workers.
func buildOn(like *CSR, e *Edges, workers int) *CSR {
	g := &CSR{NumVertices: like.NumVertices, Type: like.Type, Weighted: like.Weighted, Undirected: like.Undirected}
	switch like.Type {
	case DistInt32:
		buildWith[int32](g, e, like.Undirected, workers)
	case DistInt64:
		buildWith[int64](g, e, like.Undirected, workers)
	case DistFloat32:
		buildWith[float32](g, e, like.Undirected, workers)
	case DistFloat64:
		buildWith[float64](g, e, like.Undirected, workers)
	}
	return g
}

// drawSeed is a fresh seed, said when t fails (package graph cannot use
// internal/testgraphs, which imports it).
func drawSeed(t *testing.T) uint64 {
	seed := rand.Uint64()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random edges drawn with seed %d", seed)
		}
	})
	return seed
}

// TestSortRow checks sortRow (keys for int32 weights, keys of targets
// and runs by weight for the others; comparisons for short rows and a
// radix sort for long ones) against a sort by the (target, weight) order
// itself, for every weight type, on random rows with repeated targets,
// runs of parallel arcs short and long, and weights of both signs (the
// extremes included), reusing one scratch space across rows.
func TestSortRow(t *testing.T) {
	t.Run("int32", func(t *testing.T) {
		testSortRow(t, []int32{math.MinInt32, math.MaxInt32, -1, 0, 1}, func(x int) int32 { return int32(x) })
	})
	t.Run("int64", func(t *testing.T) {
		testSortRow(t, []int64{math.MinInt64, math.MaxInt64, -1, 0, 1}, func(x int) int64 { return int64(x) << 33 })
	})
	t.Run("float32", func(t *testing.T) {
		testSortRow(t, []float32{-math.MaxFloat32, math.MaxFloat32, -1.5, 0, 0.25}, func(x int) float32 { return float32(x) / 4 })
	})
	t.Run("float64", func(t *testing.T) {
		testSortRow(t, []float64{-math.MaxFloat64, math.MaxFloat64, -1e-300, 0, 1e300}, func(x int) float64 { return float64(x) / 3 })
	})
}

func testSortRow[D Number](t *testing.T, extremes []D, weight func(int) D) {
	rng := rand.New(rand.NewPCG(5, 6))
	var sc sortScratch[D]
	for trial := range 300 {
		size := rng.IntN(70)
		if trial%5 == 0 { // past radixMinRow: the radix sort
			size = radixMinRow + rng.IntN(3000)
		}
		targets := 1 + rng.IntN(12)
		if trial%7 == 0 {
			targets = 2 // long runs of parallel arcs
		}
		row := make([]rowArc[D], size)
		for i := range row {
			w := weight(rng.IntN(21) - 10)
			if rng.IntN(8) == 0 {
				w = extremes[rng.IntN(len(extremes))]
			}
			row[i] = rowArc[D]{t: VertexID(rng.IntN(targets) * (1 + rng.IntN(1<<20))), w: w}
		}
		want := slices.Clone(row)
		slices.SortFunc(want, func(a, b rowArc[D]) int {
			if a.t != b.t {
				return cmp.Compare(a.t, b.t)
			}
			return cmp.Compare(a.w, b.w)
		})
		sortRow(row, &sc)
		if !slices.Equal(row, want) {
			t.Fatalf("trial %d: sortRow = %v, want %v", trial, row, want)
		}
	}
}
