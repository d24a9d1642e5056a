package arrowio

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// ResultBuilder turns engine output (distance blocks, stats blocks) into
// record batches of ResultSchema. It is not safe for concurrent use: run one
// builder per goroutine.
type ResultBuilder struct {
	layout   Layout
	vertices *Vertices
	distType graph.DistType
	withPred bool
	mem      memory.Allocator
	schema   *arrow.Schema
	// matrixType, when set, is the type of a matrix's values, converted
	// from distType (SetMatrixType).
	matrixType graph.DistType
	ids        idColumn
	maxRows    int
	// maxPathVerts ends a pairs record with paths early (maxPathVertices;
	// lower in tests)
	maxPathVerts int
	shape        Shape

	// scratch of the pairs layout's serial records, reused across blocks
	// (result_pairs.go)
	scratch pairsScratch
}

// NewResultBuilder returns a builder of layout records over the vertices v
// with distances of type t; withPred adds the predecessor column of the
// pairs layout. A nil mem means memory.DefaultAllocator.
func NewResultBuilder(layout Layout, v *Vertices, t graph.DistType, withPred bool, mem memory.Allocator) *ResultBuilder {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if layout != LayoutMatrix && layout != LayoutStats && layout != LayoutNearest {
		layout = LayoutPairs
	}
	if layout != LayoutPairs {
		withPred = false
	}
	b := &ResultBuilder{
		layout: layout, vertices: v, distType: t, withPred: withPred, mem: mem,
		schema:       ResultSchema(layout, v, t, withPred),
		ids:          newIDColumn(v),
		maxRows:      maxPairsRows,
		maxPathVerts: maxPathVertices,
	}
	// Keep one string column of a batch well below 2 GiB of characters.
	if l := b.ids.maxLen(); l > 0 {
		b.maxRows = max(1, min(maxPairsRows, (1<<30)/l))
		b.maxPathVerts = max(1, min(maxPathVertices, (1<<30)/l))
	}
	return b
}

// SetShape narrows the builder's results to shape (ShapedSchema): blocks
// then carry shape.Targets columns (graph.Block.Targets) or per-row
// targets (graph.Block.CellTargets, ranked). Call it before SetMetadata
// and before the first record.
func (b *ResultBuilder) SetShape(shape Shape) {
	b.shape = shape
	b.schema = ShapedSchema(b.layout, b.vertices, b.valueType(), b.withPred, shape)
}

// Schema is the schema of the records the builder emits.
func (b *ResultBuilder) Schema() *arrow.Schema { return b.schema }

// SetMetadata adds (or replaces) a key of the schema metadata, such as
// MetaAlgorithm or MetaVertices. Records built afterwards carry it; call it
// before the first record and before creating the writer with Schema.
func (b *ResultBuilder) SetMetadata(key, value string) {
	md := b.schema.Metadata()
	keys, values := md.Keys(), md.Values()
	if i := md.FindKey(key); i >= 0 {
		values = append([]string(nil), values...)
		values[i] = value
	} else {
		keys = append(append([]string(nil), keys...), key)
		values = append(append([]string(nil), values...), value)
	}
	meta := arrow.NewMetadata(keys, values)
	b.schema = arrow.NewSchema(b.schema.Fields(), &meta)
}

// Block appends the records of one distance block to emit: for the pairs
// layout one record per 2^20 rows (fewer for long string ids), in source
// then vertex order; for the matrix layout one record of len(blk.Sources)
// rows. A record passed to emit is released after emit returns; emit
// retains it to keep it. The first error of emit is returned.
//
// Matrix records do not copy the distances: the distance values wrap
// blk.Dist (integer types add a validity bitmap). The caller must not refill
// or free blk until every record emitted from it has been released; Go's
// garbage collector keeps the slice alive as long as such a record is.
//
// Block fails on the stats layout and on a block whose shape does not match
// the builder (vertex count, distance type, predecessors).
func (b *ResultBuilder) Block(blk *graph.Block, emit func(arrow.RecordBatch) error) error {
	if err := b.checkBlock(blk); err != nil {
		return err
	}
	switch b.layout {
	case LayoutPairs:
		switch blk.Type {
		case graph.DistInt32:
			return buildPairs[int32](b, blk, emit)
		case graph.DistInt64:
			return buildPairs[int64](b, blk, emit)
		case graph.DistFloat32:
			return buildPairs[float32](b, blk, emit)
		default:
			return buildPairs[float64](b, blk, emit)
		}
	case LayoutMatrix:
		rec, err := b.matrixRecord(blk)
		if err != nil {
			return err
		}
		defer rec.Release()
		return emit(rec)
	}
	return fmt.Errorf("arrowio: the %s layout is built from stats blocks, not distance blocks", b.layout)
}

func (b *ResultBuilder) checkBlock(blk *graph.Block) error {
	n := b.vertices.Len()
	if blk.NumVertices != n {
		return fmt.Errorf("arrowio: block over %d vertices for a result over %d", blk.NumVertices, n)
	}
	// A matrix's block may carry its values already converted to the
	// matrix type (by the engine: graph.ValueConverter).
	if blk.Type != b.distType && blk.Type != b.valueType() {
		return fmt.Errorf("arrowio: block of %s distances for a result of %s", blk.Type, b.distType)
	}
	if b.shape.Targets > 0 && b.layout == LayoutMatrix && blk.Width() != b.shape.Targets {
		return fmt.Errorf("arrowio: block of %d columns for a result of %d targets", blk.Width(), b.shape.Targets)
	}
	size := len(blk.Sources) * blk.Width()
	got, typ := -1, graph.DistType(0)
	switch d := blk.Dist.(type) {
	case []int32:
		got, typ = len(d), graph.DistInt32
	case []int64:
		got, typ = len(d), graph.DistInt64
	case []float32:
		got, typ = len(d), graph.DistFloat32
	case []float64:
		got, typ = len(d), graph.DistFloat64
	}
	if got != size || typ != blk.Type {
		return fmt.Errorf("arrowio: block of %d sources × %d %s distances holds %T of length %d", len(blk.Sources), blk.Width(), blk.Type, blk.Dist, got)
	}
	for _, s := range blk.Sources {
		if s < 0 || int(s) >= n {
			return fmt.Errorf("arrowio: block source %d outside [0, %d)", s, n)
		}
	}
	if b.withPred && b.layout == LayoutPairs && len(blk.Pred) != size {
		return fmt.Errorf("arrowio: result with predecessors needs a block with %d predecessors, got %d", size, len(blk.Pred))
	}
	return nil
}

func (b *ResultBuilder) matrixRecord(blk *graph.Block) (arrow.RecordBatch, error) {
	if b.matrixType != 0 && b.matrixType != blk.Type {
		return b.convertedMatrixRecord(blk) // result_convert.go
	}
	var values []byte
	var v validity
	switch d := blk.Dist.(type) {
	case []int32:
		values = arrow.GetBytes(d)
		v = blockValidity(blk, d, b.mem)
	case []int64:
		values = arrow.GetBytes(d)
		v = blockValidity(blk, d, b.mem)
	case []float32:
		values = arrow.GetBytes(d)
	case []float64:
		values = arrow.GetBytes(d)
	}
	// Buffers that wrap the block's own memory hand it back through its
	// Recycle once the last of them is released.
	wrap := func(bytes []byte) *memory.Buffer { return memory.NewBufferBytes(bytes) }
	if blk.Recycle != nil {
		left := newCount(1)
		if v.room != nil {
			left.Store(2)
		}
		r := recycler{left: left, recycle: blk.Recycle}
		wrap = func(bytes []byte) *memory.Buffer { return memory.NewBufferWithAllocator(bytes, r) }
	}
	valBuf := wrap(values)
	if v.room != nil {
		v.buf = wrap(v.room)
	}
	return b.matrixOf(blk, valBuf, v), nil
}

// matrixOf is the matrix record of blk's sources over the values in
// valBuf and the validity in v.buf (nil without nulls), whose references
// it takes over.
func (b *ResultBuilder) matrixOf(blk *graph.Block, valBuf *memory.Buffer, v validity) arrow.RecordBatch {
	n := blk.Width()
	k := len(blk.Sources)
	validBuf := v.buf
	child := array.NewData(DistArrowType(b.valueType()), k*n, []*memory.Buffer{validBuf, valBuf}, nil, v.nulls, 0)
	if validBuf != nil {
		validBuf.Release() // the child holds it
	}
	valBuf.Release()
	listType := matrixListType(n, b.valueType())
	list := array.NewData(listType, k, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	child.Release()
	distCol := array.MakeFromData(list)
	list.Release()
	srcCol := b.ids.gather(blk.Sources, b.mem)
	rec := array.NewRecordBatch(b.schema, []arrow.Array{srcCol, distCol}, int64(k))
	srcCol.Release()
	distCol.Release()
	return rec
}

// Stats emits the record of one stats block (stats layout), one row per
// source. A record passed to emit is released after emit returns.
func (b *ResultBuilder) Stats(s *graph.Stats, emit func(arrow.RecordBatch) error) error {
	if b.layout != LayoutStats {
		return fmt.Errorf("arrowio: stats blocks make the stats layout, not %s", b.layout)
	}
	k := len(s.Sources)
	if s.Type != b.distType {
		return fmt.Errorf("arrowio: stats of %s distances for a result of %s", s.Type, b.distType)
	}
	sums := len(s.SumInt)
	if b.distType.IsFloat() {
		sums = len(s.SumFloat)
	}
	if len(s.Reachable) != k || len(s.Eccentricity) != k || sums != k || len(s.Closeness) != k || len(s.Harmonic) != k {
		return fmt.Errorf("arrowio: stats block of %d sources with columns of other lengths", k)
	}
	for _, src := range s.Sources {
		if src < 0 || int(src) >= b.vertices.Len() {
			return fmt.Errorf("arrowio: stats source %d outside [0, %d)", src, b.vertices.Len())
		}
	}
	cols := make([]arrow.Array, 0, 6)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	cols = append(cols, b.ids.gather(s.Sources, b.mem))
	cols = append(cols, newFixed(arrow.PrimitiveTypes.Int64, s.Reachable, b.mem))

	ecc := array.NewBuilder(b.mem, DistArrowType(b.distType))
	ecc.Reserve(k)
	for i, e := range s.Eccentricity {
		if s.Reachable[i] == 0 {
			ecc.AppendNull()
			continue
		}
		switch eb := ecc.(type) {
		case *array.Int32Builder:
			eb.Append(int32(e))
		case *array.Int64Builder:
			eb.Append(int64(e))
		case *array.Float32Builder:
			eb.Append(float32(e))
		case *array.Float64Builder:
			eb.Append(e)
		}
	}
	cols = append(cols, ecc.NewArray())
	ecc.Release()

	if b.distType.IsFloat() {
		cols = append(cols, newFixed(arrow.PrimitiveTypes.Float64, s.SumFloat, b.mem))
	} else {
		cols = append(cols, newFixed(arrow.PrimitiveTypes.Int64, s.SumInt, b.mem))
	}
	cols = append(cols, newFixed(arrow.PrimitiveTypes.Float64, s.Closeness, b.mem))
	cols = append(cols, newFixed(arrow.PrimitiveTypes.Float64, s.Harmonic, b.mem))
	rec := array.NewRecordBatch(b.schema, cols, int64(k))
	defer rec.Release()
	return emit(rec)
}

// newFixed copies xs into a new non-null array of type dt allocated from mem.
func newFixed[T graph.Number](dt arrow.DataType, xs []T, mem memory.Allocator) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(xs) * int(unsafe.Sizeof(xs[0])))
	copy(arrow.GetData[T](buf.Bytes()), xs)
	data := array.NewData(dt, len(xs), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}

// Nearest emits the records of the nearest layout: one row per vertex a
// source reaches, in vertex order, in records of at most 2^18 rows (one
// per window of 2^18 vertices, built one ahead of emit on every core;
// emit is called on the caller's goroutine). It fails on a builder of
// another layout.
func (b *ResultBuilder) Nearest(res *graph.Nearest, emit func(arrow.RecordBatch) error) error {
	if b.layout != LayoutNearest || res.Type != b.distType || len(res.Source) != b.vertices.Len() {
		return fmt.Errorf("arrowio: a nearest result of %d %s distances for a %s result of %d %s distances",
			len(res.Source), res.Type, b.layout, b.vertices.Len(), b.distType)
	}
	switch res.Type {
	case graph.DistInt32:
		return buildNearest[int32](b, res, emit)
	case graph.DistInt64:
		return buildNearest[int64](b, res, emit)
	case graph.DistFloat32:
		return buildNearest[float32](b, res, emit)
	}
	return buildNearest[float64](b, res, emit)
}

// VerticesRecord returns one column "vertex" (IDType(v)) holding every
// external id in vertex order: the file written beside a matrix result, so
// that column j of the matrix belongs to row j of it.
func VerticesRecord(v *Vertices, mem memory.Allocator) arrow.RecordBatch {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	n := v.Len()
	dense := make([]int32, n)
	for i := range dense {
		dense[i] = int32(i)
	}
	col := newIDColumn(v).gather(dense, mem)
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: ColVertex, Type: IDType(v)}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
}
