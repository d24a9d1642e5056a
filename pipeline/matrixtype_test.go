package pipeline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// randomIntGraph is a graph of n vertices and 3n arcs of integer weights
// in [0, top]: zero weights and unreachable pairs included (the arcs leave
// from the first two thirds of the vertices only, and the last two are a
// component of their own).
func randomIntGraph(t *testing.T, rng *rand.Rand, n int, top int64, undirected bool) *Graph {
	t.Helper()
	e := graph.Edges{NumVertices: n}
	for range 3 * n {
		e.Src = append(e.Src, int32(rng.IntN(max(1, 2*n/3))))
		e.Dst = append(e.Dst, int32(rng.IntN(n-2)))
		e.IntWeights = append(e.IntWeights, rng.Int64N(top+1))
	}
	// The last two vertices are a component of their own, one arc of
	// weight top (the bound is then (n-1)·top).
	e.Src, e.Dst, e.IntWeights = append(e.Src, int32(n-2)), append(e.Dst, int32(n-1)), append(e.IntWeights, top)
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := range n {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "random"}, LoadOptions{Undirected: undirected})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMatrixTypeFloat runs integer-weighted graphs with the matrix type
// "float" (and float64, int64) and compares every value, and the value
// type the rule gives,
// with the serial Dijkstra: float32 while (n-1)·max w ≤ 2^24, float64
// past it, +Inf where the oracle finds no path. Small blocks make several
// records, each converted on its own; the GPU engine runs the same where
// one is usable.
func TestMatrixTypeFloat(t *testing.T) {
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 39))
	engs := engines(t)
	for _, c := range []struct {
		n      int
		top    int64
		matrix string
		want   arrow.DataType
	}{
		{60, 9, MatrixFloat, arrow.PrimitiveTypes.Float32},
		{61, (1 << 24) / 60, MatrixFloat, arrow.PrimitiveTypes.Float32}, // the bound at 2^24 exactly, or just below
		{61, (1<<24)/60 + 1, MatrixFloat, arrow.PrimitiveTypes.Float64},
		{40, 1 << 40, MatrixFloat, arrow.PrimitiveTypes.Float64}, // int64 distances
		{50, 20, "float64", arrow.PrimitiveTypes.Float64},
		{50, 20, "int64", arrow.PrimitiveTypes.Int64},
	} {
		g := randomIntGraph(t, rng, c.n, c.top, c.n%2 == 0)
		for i, block := range []int{0, 7, 0, 7} {
			engine := engs[min(i/2, len(engs)-1)] // the GPU too where one is usable (its blocks are pinned and reused)
			var got []float64
			var typ arrow.DataType
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			var log strings.Builder
			_, err := runQuery(context.Background(), g, Options{Query: Query{Layout: arrowio.LayoutMatrix, MatrixType: c.matrix}, Resources: Resources{Engine: engine, MaxBlock: block, Allocator: mem}, Log: &log},
				func(r arrow.RecordBatch) error {
					vals := r.Column(1).(*array.FixedSizeList).ListValues()
					typ = vals.DataType()
					if vals.NullN() != 0 && arrow.IsFloating(typ.ID()) {
						t.Errorf("a float matrix with %d nulls", vals.NullN())
					}
					for i := range vals.Len() {
						switch a := vals.(type) {
						case *array.Float32:
							got = append(got, float64(a.Value(i)))
						case *array.Float64:
							got = append(got, a.Value(i))
						case *array.Int64:
							got = append(got, float64(a.Value(i)))
							if a.IsNull(i) {
								got[len(got)-1] = math.Inf(1)
							}
						}
					}
					return nil
				})
			mem.AssertSize(t, 0)
			if err != nil {
				t.Fatalf("seed %d: n %d, %s: %v", seed, c.n, engine, err)
			}
			if !arrow.TypeEqual(typ, c.want) {
				t.Fatalf("seed %d: n %d, weights up to %d: values of %s, want %s", seed, c.n, c.top, typ, c.want)
			}
			// The GPU engine converts to a float of the distances' width on
			// the device; the rest is converted on the host.
			where := "as the records are built"
			if engine == "gpu" && arrow.IsFloating(typ.ID()) && typ.(arrow.FixedWidthDataType).BitWidth() == 8*g.CSR.Type.Size() {
				where = "by the engine"
			}
			if !strings.Contains(log.String(), "distances "+where) {
				t.Fatalf("seed %d: n %d, %s, values of %s: the log does not say the values were converted %s:\n%s", seed, c.n, engine, typ, where, log.String())
			}
			unreachable := 0
			for s := range c.n {
				for v, w := range dijkstraRow(t, g.CSR, graph.VertexID(s)) {
					if math.IsInf(w, 1) {
						unreachable++
					}
					if got[s*c.n+v] != w {
						t.Fatalf("seed %d: n %d, %s: d(%d, %d) = %v, want %v", seed, c.n, engine, s, v, got[s*c.n+v], w)
					}
				}
			}
			if unreachable == 0 {
				t.Fatalf("seed %d: n %d: no unreachable pair to check", seed, c.n)
			}
		}
	}
}

// TestMatrixTypeRefused checks the types that cannot hold the distances
// exactly, the schema of those that can, and that other layouts keep
// their distance type.
func TestMatrixTypeRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	small := randomIntGraph(t, rng, 30, 100, false)
	large := randomIntGraph(t, rng, 30, 1<<30, false) // int64 distances
	for _, c := range []struct {
		g    *Graph
		opt  Options
		want string // the value type, or a word of the error
	}{
		{small, Options{Query: Query{MatrixType: "float32"}}, "float32"},
		{small, Options{Query: Query{MatrixType: "float64"}}, "float64"},
		{small, Options{Query: Query{MatrixType: "int64"}}, "int64"},
		{small, Options{Query: Query{MatrixType: ""}}, "int32"},
		{small, Options{Query: Query{Cutoff: 5, HasCutoff: true, MatrixType: "float"}}, "float32"},
		{small, Options{Query: Query{Algorithm: graph.BFS, MatrixType: "float"}}, "float32"},
		{large, Options{Query: Query{MatrixType: "float"}}, "float64"},
		{large, Options{Query: Query{MatrixType: "float32"}}, "2^24"},
		{large, Options{Query: Query{MatrixType: "int32"}}, "int64 or float64"},
		{large, Options{Query: Query{Cutoff: 1000, HasCutoff: true, MatrixType: "float32"}}, "float32"}, // the cutoff bounds the distances
		{small, Options{Query: Query{MatrixType: "float16"}}, "want float, int32"},
	} {
		c.opt.Layout = arrowio.LayoutMatrix
		s, err := schemaOf(c.g, c.opt)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v, want an invalid request naming %q", c.opt, err, c.want)
			}
			continue
		}
		got := s.Field(1).Type.(*arrow.FixedSizeListType).Elem().String()
		if got != c.want {
			t.Errorf("%+v: values of %s, want %s", c.opt, got, c.want)
		}
	}
	s, err := schemaOf(small, Options{Query: Query{Layout: arrowio.LayoutPairs, MatrixType: "float"}})
	if err != nil || s.Field(2).Type.String() != "int32" {
		t.Errorf("pairs with a matrix type: %v, %v; want int32 distances", s, err)
	}
}

// dijkstraRow is the serial Dijkstra's row of s on g's integer weights, as
// float64 with +Inf for unreachable.
func dijkstraRow(t *testing.T, g *graph.CSR, s graph.VertexID) []float64 {
	t.Helper()
	var out []float64
	switch g.Type {
	case graph.DistInt32:
		d, err := ref.Dijkstra[int32](g, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range d {
			out = append(out, float64(x))
			if x == graph.Infinity[int32]() {
				out[len(out)-1] = math.Inf(1)
			}
		}
	case graph.DistInt64:
		d, err := ref.Dijkstra[int64](g, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range d {
			out = append(out, float64(x))
			if x == graph.Infinity[int64]() {
				out[len(out)-1] = math.Inf(1)
			}
		}
	default:
		t.Fatalf("the oracle row of %s weights", g.Type)
	}
	return out
}
