package arrowio

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// betweennessWindow is the most vertices one record of the betweenness
// layout holds.
const betweennessWindow = 1 << 20

// betweennessSchema is the betweenness layout's schema: vertex (IDType(v))
// and betweenness float64, whatever the graph's distance type (the
// metadata says float64).
func betweennessSchema(v *Vertices) *arrow.Schema {
	meta := arrow.NewMetadata(
		[]string{MetaLayout, MetaDistType, MetaNumVertices},
		[]string{string(LayoutBetweenness), graph.DistFloat64.String(), strconv.Itoa(v.Len())},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: ColVertex, Type: IDType(v)},
		{Name: ColBetweenness, Type: arrow.PrimitiveTypes.Float64},
	}, &meta)
}

// BetweennessRecords emits the betweenness layout of values (one per
// vertex, in vertex order): records of up to 2^20 rows, in vertex order,
// each released when emit returns. mem nil means memory.DefaultAllocator.
func BetweennessRecords(v *Vertices, values []float64, mem memory.Allocator, emit func(arrow.RecordBatch) error) error {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	schema := betweennessSchema(v)
	ids := newIDColumn(v)
	for lo := 0; lo < len(values); lo += betweennessWindow {
		hi := min(lo+betweennessWindow, len(values))
		dense := make([]int32, hi-lo)
		for i := range dense {
			dense[i] = int32(lo + i)
		}
		if err := emitBetweenness(schema, ids.gather(dense, mem), values[lo:hi], mem, emit); err != nil {
			return err
		}
	}
	return nil
}

// emitBetweenness wraps one window's ids and values into a record for emit.
func emitBetweenness(schema *arrow.Schema, ids arrow.Array, values []float64, mem memory.Allocator, emit func(arrow.RecordBatch) error) error {
	defer ids.Release()
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{ids, col}, int64(len(values)))
	defer rec.Release()
	return emit(rec)
}
