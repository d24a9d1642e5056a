package arrowio

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestMatrixTypeConversions builds matrix records of every conversion
// SetMatrixType offers from a block of two sources over three vertices
// with unreachable cells, and checks the values (Infinity: +Inf for float
// values, null for integer ones), the schema, that nothing stays
// allocated and that a pooled block goes back exactly once, after the
// record is released.
func TestMatrixTypeConversions(t *testing.T) {
	values := []float64{0, 5, math.Inf(1), math.Inf(1), 0, 16777216}
	block := func(from graph.DistType) *graph.Block {
		blk := graph.NewBlock([]graph.VertexID{0, 2}, 3, from, false)
		for i, x := range values {
			switch d := blk.Dist.(type) {
			case []int32:
				d[i] = graph.Infinity[int32]()
				if !math.IsInf(x, 1) {
					d[i] = int32(x)
				}
			case []int64:
				d[i] = graph.Infinity[int64]()
				if !math.IsInf(x, 1) {
					d[i] = int64(x)
				}
			case []float32:
				d[i] = float32(x)
			}
		}
		return blk
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{10, 20, 30}}
	for _, c := range []struct{ from, to graph.DistType }{
		{graph.DistInt32, graph.DistFloat32}, {graph.DistInt32, graph.DistFloat64}, {graph.DistInt32, graph.DistInt64},
		{graph.DistInt64, graph.DistFloat64}, {graph.DistInt64, graph.DistFloat32}, {graph.DistInt64, graph.DistInt32},
		{graph.DistFloat32, graph.DistFloat64},
	} {
		for _, pooled := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			b := NewResultBuilder(LayoutMatrix, v, c.from, false, mem)
			b.SetMatrixType(c.to)
			if got := b.Schema().Field(1).Type.(*arrow.FixedSizeListType).Elem(); !arrow.TypeEqual(got, DistArrowType(c.to)) {
				t.Fatalf("%s to %s: schema of %s values", c.from, c.to, got)
			}
			blk := block(c.from)
			recycled := 0
			if pooled {
				blk.Recycle = func() { recycled++ }
			}
			var kept arrow.RecordBatch
			err := b.Block(blk, func(r arrow.RecordBatch) error {
				r.Retain()
				kept = r
				return nil
			})
			if err != nil {
				t.Fatalf("%s to %s: %v", c.from, c.to, err)
			}
			vals := kept.Column(1).(*array.FixedSizeList).ListValues()
			for i, want := range values {
				var got float64
				switch a := vals.(type) {
				case *array.Float32:
					got = float64(a.Value(i))
				case *array.Float64:
					got = a.Value(i)
				case *array.Int32:
					got = float64(a.Value(i))
				case *array.Int64:
					got = float64(a.Value(i))
				}
				if vals.IsNull(i) {
					got = math.Inf(1)
				}
				if got != want || (vals.IsNull(i) && c.to.IsFloat()) {
					t.Errorf("%s to %s: value %d is %v (null %v), want %v", c.from, c.to, i, got, vals.IsNull(i), want)
				}
			}
			inPlace := c.from.Size() == c.to.Size() && c.from != graph.DistFloat32
			if pooled && inPlace && recycled != 0 {
				t.Errorf("%s to %s: the block went back while its record, in its memory, lives", c.from, c.to)
			}
			kept.Release()
			if pooled && recycled != 1 {
				t.Errorf("%s to %s: the block went back %d times", c.from, c.to, recycled)
			}
			mem.AssertSize(t, 0)
		}
	}
	b := NewResultBuilder(LayoutMatrix, v, graph.DistFloat64, false, nil)
	b.SetMatrixType(graph.DistInt32)
	if err := b.Block(block(graph.DistFloat64), func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Error("float64 distances made int32 values")
	}
}

// TestMatrixTypeConvertedByEngine gives a builder of int32 distances and
// float32 matrix values blocks whose values the engine converted already
// (graph.ValueConverter): they are taken as they are, in their own
// memory, and a block of a third type is refused.
func TestMatrixTypeConvertedByEngine(t *testing.T) {
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{10, 20, 30}}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := NewResultBuilder(LayoutMatrix, v, graph.DistInt32, false, mem)
	b.SetMatrixType(graph.DistFloat32)
	blk := graph.NewBlock([]graph.VertexID{1}, 3, graph.DistFloat32, false)
	want := []float32{4, 0, float32(math.Inf(1))}
	copy(blk.Dist.([]float32), want)
	err := b.Block(blk, func(r arrow.RecordBatch) error {
		vals := r.Column(1).(*array.FixedSizeList).ListValues().(*array.Float32)
		if vals.NullN() != 0 {
			t.Errorf("%d nulls in float values", vals.NullN())
		}
		for i, w := range want {
			if vals.Value(i) != w {
				t.Errorf("value %d is %v, want %v", i, vals.Value(i), w)
			}
		}
		if &vals.Float32Values()[0] != &blk.Dist.([]float32)[0] {
			t.Error("the values were copied out of the block")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	other := graph.NewBlock([]graph.VertexID{1}, 3, graph.DistFloat64, false)
	if err := b.Block(other, func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Error("a block of float64 distances for int32 distances as float32 values: no error")
	}
	mem.AssertSize(t, 0)
}
