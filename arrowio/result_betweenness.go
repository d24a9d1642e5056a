package arrowio

import (
	"fmt"
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
		col := ids.gather(dense, mem)
		err := emitBetweenness(schema, []arrow.Array{col}, values[lo:hi], mem, emit)
		col.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// emitBetweenness wraps one window's id columns and values into a record
// for emit.
func emitBetweenness(schema *arrow.Schema, ids []arrow.Array, values []float64, mem memory.Allocator, emit func(arrow.RecordBatch) error) error {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, append(ids[:len(ids):len(ids)], col), int64(len(values)))
	defer rec.Release()
	return emit(rec)
}

// edgeBetweennessSchema is the edge-betweenness layout's schema: src and
// dst (IDType(v)) and betweenness float64.
func edgeBetweennessSchema(v *Vertices) *arrow.Schema {
	meta := arrow.NewMetadata(
		[]string{MetaLayout, MetaDistType, MetaNumVertices},
		[]string{string(LayoutEdgeBetweenness), graph.DistFloat64.String(), strconv.Itoa(v.Len())},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: ColSrc, Type: IDType(v)},
		{Name: ColDst, Type: IDType(v)},
		{Name: ColBetweenness, Type: arrow.PrimitiveTypes.Float64},
	}, &meta)
}

// EdgeBetweennessRecords emits the edge-betweenness layout: one row per
// edge src[i] → dst[i] (dense ids) with values[i], in the given order, in
// records of up to 2^20 rows, each released when emit returns. mem nil
// means memory.DefaultAllocator.
func EdgeBetweennessRecords(v *Vertices, src, dst []int32, values []float64, mem memory.Allocator, emit func(arrow.RecordBatch) error) error {
	if len(src) != len(values) || len(dst) != len(values) {
		return fmt.Errorf("arrowio: edge betweenness of %d values for %d sources and %d targets", len(values), len(src), len(dst))
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	schema := edgeBetweennessSchema(v)
	ids := newIDColumn(v)
	for lo := 0; lo < len(values); lo += betweennessWindow {
		hi := min(lo+betweennessWindow, len(values))
		from := ids.gather(src[lo:hi], mem)
		to := ids.gather(dst[lo:hi], mem)
		err := emitBetweenness(schema, []arrow.Array{from, to}, values[lo:hi], mem, emit)
		from.Release()
		to.Release()
		if err != nil {
			return err
		}
	}
	return nil
}
