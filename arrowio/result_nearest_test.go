package arrowio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestNearestRecords builds the nearest layout of random results, a third
// of the vertices unreached, over windows of several sizes (one window, a
// few, parts on several goroutines): the rows must be every reached vertex
// once, in vertex order, with its distance and source mapped to external
// ids, in records of at most the window's rows; nothing may stay allocated.
func TestNearestRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 17))
	for _, c := range []struct{ n, window int }{{0, 5}, {1, 5}, {20, 7}, {20, 1 << 20}, {300_000, 200_000}, {300_000, 1 << 20}} {
		t.Run(fmt.Sprintf("n=%d/window=%d", c.n, c.window), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, c.n)}
			for i := range v.Ints {
				v.Ints[i] = int64(3*i + 1)
			}
			dist := make([]float32, c.n)
			res := &graph.Nearest{Type: graph.DistFloat32, Dist: dist, Source: make([]graph.VertexID, c.n)}
			for i := range res.Source {
				res.Source[i] = -1
				if rng.IntN(3) > 0 {
					res.Source[i], dist[i] = graph.VertexID(rng.IntN(c.n)), float32(rng.IntN(1000))/4
				}
			}
			b := NewResultBuilder(LayoutNearest, v, graph.DistFloat32, false, mem)
			b.maxRows = c.window
			next := 0 // the next reached vertex expected
			skip := func() {
				for next < c.n && res.Source[next] < 0 {
					next++
				}
			}
			err := b.Nearest(res, func(r arrow.RecordBatch) error {
				if r.NumRows() == 0 || r.NumRows() > int64(c.window) {
					return fmt.Errorf("a record of %d rows, window %d", r.NumRows(), c.window)
				}
				vs, ds, ss := r.Column(0).(*array.Int64), r.Column(1).(*array.Float32), r.Column(2).(*array.Int64)
				for i := range int(r.NumRows()) {
					skip()
					if next == c.n {
						return fmt.Errorf("row %d past the last reached vertex", i)
					}
					if vs.Value(i) != v.Ints[next] || ds.Value(i) != dist[next] || ss.Value(i) != v.Ints[res.Source[next]] {
						return fmt.Errorf("row for vertex %d: (%d, %v, %d), want (%d, %v, %d)", next, vs.Value(i), ds.Value(i), ss.Value(i),
							v.Ints[next], dist[next], v.Ints[res.Source[next]])
					}
					next++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if skip(); next != c.n {
				t.Fatalf("rows stop before vertex %d of %d", next, c.n)
			}
		})
	}
}

// TestNearestRecordsShapes checks the nearest layout against a serial
// oracle (every reached vertex in order, ids gathered from dense ids one
// by one) for every id kind (integers of several widths, uint64 above
// MaxInt64, strings) and distance type, on several core counts, with
// unreached vertices where the parts and windows meet, parts and windows
// wholly unreached or wholly reached, and sources that tie (one source
// nearest to many vertices); nothing may stay allocated.
func TestNearestRecordsShapes(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 23))
	const n = nearestWindow + 3*nearestPart + 5 // two windows, the second one short
	ids := map[string]func(n int) *Vertices{
		"int64": func(n int) *Vertices {
			v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
			for i := range v.Ints {
				v.Ints[i] = int64(2*i - 9)
			}
			return v
		},
		"int32": func(n int) *Vertices {
			v := &Vertices{Type: arrow.PrimitiveTypes.Int32, Ints: make([]int64, n)}
			for i := range v.Ints {
				v.Ints[i] = int64(i + 40)
			}
			return v
		},
		"uint64": func(n int) *Vertices {
			v := &Vertices{Type: arrow.PrimitiveTypes.Uint64, Ints: make([]int64, n)}
			for i := range v.Ints {
				v.Ints[i] = int64(i) - 5 // the last five above MaxInt64
			}
			return v
		},
		"string": func(n int) *Vertices {
			v := &Vertices{Type: arrow.BinaryTypes.String, Strings: make([]string, n)}
			for i := range v.Strings {
				v.Strings[i] = fmt.Sprintf("v%09d", i)
			}
			return v
		},
	}
	// reached gives each pattern's vertices a source (-1: unreached).
	patterns := map[string]func(v int) bool{
		"every vertex": func(int) bool { return true },
		"part borders": func(v int) bool { // the first and last vertex of every part on 1 to 8 cores
			lo := v / nearestWindow * nearestWindow
			size := min(lo+nearestWindow, n) - lo
			for cores := 1; cores <= 8; cores++ {
				parts := max(1, min(cores, size/nearestPart))
				per := (size + parts - 1) / parts
				if at := (v - lo) % per; at == 0 || at == per-1 || v == lo+size-1 {
					return false
				}
			}
			return true
		},
		"one window unreached": func(v int) bool { return v/nearestWindow != 1 },
		"every other part":     func(v int) bool { return (v/nearestPart)%2 == 0 },
		"random":               func(int) bool { return rng.IntN(4) > 0 },
		"none":                 func(int) bool { return false },
	}
	type shape struct {
		ids     string
		dt      graph.DistType
		pattern string
		cores   int
	}
	coreCounts, distTypes := []int{1, 3, 8}, []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat64}
	if testing.Short() { // the race detector's run: the borders, two id kinds
		coreCounts, distTypes = []int{3}, distTypes[:1]
		for name := range patterns {
			if name != "part borders" && name != "one window unreached" {
				delete(patterns, name)
			}
		}
		for name := range ids {
			if name != "int64" && name != "string" {
				delete(ids, name)
			}
		}
	}
	var shapes []shape
	for pattern := range patterns { // every pattern on several core counts
		for _, cores := range coreCounts {
			shapes = append(shapes, shape{"int64", graph.DistInt32, pattern, cores})
		}
	}
	for idName := range ids { // every id kind and distance type
		for _, dt := range distTypes {
			shapes = append(shapes, shape{idName, dt, "part borders", 3})
		}
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for _, c := range shapes {
		name := fmt.Sprintf("%s/%s/%s/cores=%d", c.ids, c.dt, c.pattern, c.cores)
		runtime.GOMAXPROCS(c.cores)
		v := ids[c.ids](n)
		res := nearestResult(rng, n, c.dt, patterns[c.pattern])
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got := nearestColumns(t, name, v, res, mem)
		want := nearestOracle(v, res, mem)
		for col := range want {
			if !array.Equal(got[col], want[col]) {
				t.Fatalf("seed %d, %s: column %d differs from the serial oracle", seed, name, col)
			}
			got[col].Release()
			want[col].Release()
		}
		mem.AssertSize(t, 0)
	}
}

// nearestResult is a random nearest result of n vertices whose reached
// ones are those reached says, with a few sources nearest to many
// vertices (ties of the smaller id are the engine's; here sources repeat).
func nearestResult(rng *rand.Rand, n int, dt graph.DistType, reached func(v int) bool) *graph.Nearest {
	res := &graph.Nearest{Type: dt, Source: make([]graph.VertexID, n)}
	dist := make([]float64, n)
	for v := range res.Source {
		res.Source[v], dist[v] = -1, math.Inf(1)
		if reached(v) {
			res.Source[v], dist[v] = graph.VertexID(rng.IntN(7)*(n/7)), float64(rng.IntN(1000))
		}
	}
	switch dt {
	case graph.DistInt32:
		d := make([]int32, n)
		for v, x := range dist {
			d[v] = int32(min(x, math.MaxInt32))
		}
		res.Dist = d
	case graph.DistInt64:
		d := make([]int64, n)
		for v, x := range dist {
			d[v] = int64(min(x, math.MaxInt64/2))
		}
		res.Dist = d
	default:
		res.Dist = dist
	}
	return res
}

// nearestColumns builds the nearest layout of res and concatenates its
// records' columns, checking that records are not empty and keep to the
// window.
func nearestColumns(t *testing.T, name string, v *Vertices, res *graph.Nearest, mem memory.Allocator) []arrow.Array {
	t.Helper()
	b := NewResultBuilder(LayoutNearest, v, res.Type, false, mem)
	var cols [3][]arrow.Array
	err := b.Nearest(res, func(r arrow.RecordBatch) error {
		if r.NumRows() == 0 || r.NumRows() > nearestWindow {
			return fmt.Errorf("a record of %d rows, window %d", r.NumRows(), nearestWindow)
		}
		for c := range cols {
			r.Column(c).Retain()
			cols[c] = append(cols[c], r.Column(c))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]arrow.Array, 3)
	for c := range cols {
		if len(cols[c]) == 0 {
			out[c] = array.MakeArrayOfNull(mem, b.Schema().Field(c).Type, 0)
			continue
		}
		var err error
		if out[c], err = array.Concatenate(cols[c], mem); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, a := range cols[c] {
			a.Release()
		}
	}
	return out
}

// nearestOracle is the nearest layout of res built serially: the reached
// vertices in order, their ids gathered one dense id at a time.
func nearestOracle(v *Vertices, res *graph.Nearest, mem memory.Allocator) []arrow.Array {
	ids := newIDColumn(v)
	var vertex, source []int32
	var keep []int
	for u, s := range res.Source {
		if s >= 0 {
			vertex, source, keep = append(vertex, int32(u)), append(source, s), append(keep, u)
		}
	}
	var dist arrow.Array
	switch d := res.Dist.(type) {
	case []int32:
		dist = newFixed(DistArrowType(res.Type), pick(d, keep), mem)
	case []int64:
		dist = newFixed(DistArrowType(res.Type), pick(d, keep), mem)
	case []float64:
		dist = newFixed(DistArrowType(res.Type), pick(d, keep), mem)
	}
	return []arrow.Array{ids.gather(vertex, mem), dist, ids.gather(source, mem)}
}

func pick[D any](xs []D, at []int) []D {
	out := make([]D, len(at))
	for i, k := range at {
		out[i] = xs[k]
	}
	return out
}

// TestNearestEmitError checks that emit's first error is returned, that no
// record is emitted after it, and that the records built ahead are
// released.
func TestNearestEmitError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 4*nearestWindow + 1
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
	for i := range v.Ints {
		v.Ints[i] = int64(i)
	}
	res := nearestResult(rand.New(rand.NewPCG(1, 2)), n, graph.DistInt32, func(int) bool { return true })
	b := NewResultBuilder(LayoutNearest, v, graph.DistInt32, false, mem)
	stop := errors.New("the reader went away")
	calls := 0
	err := b.Nearest(res, func(arrow.RecordBatch) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("Nearest returned %v after %d records; want %v after 2", err, calls, stop)
	}
}
