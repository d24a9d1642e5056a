package arrowio

// Reading an edge table from Arrow record batches, whatever the format
// they came from: the accumulator that gathers the id and weight columns
// batch by batch, the integer id keys, and the weight column. Which
// columns are read, and the id type they share, is read_columns.go.

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/graph"
)

// EdgesFromRecords reads an edge table from the record batches of rr (the
// Flight service's uploads, or any Arrow source); name is used in messages.
// It does not Release rr. Columns and errors are as for ReadEdges; rows are
// counted from 0 over all batches.
func EdgesFromRecords(rr array.RecordReader, name string, opt ReadOptions) (t *EdgeTable, err error) {
	if err := opt.checkColumns(name); err != nil {
		return nil, err
	}
	return edgesFromRecords(rr, name, opt, 0)
}

// edgesFromRecords is EdgesFromRecords with the number of rows to expect,
// when the source knows it (0 otherwise), so that columns grow only once.
func edgesFromRecords(rr array.RecordReader, name string, opt ReadOptions, rowsHint int64) (t *EdgeTable, err error) {
	defer recoverCorrupt(name, &err)
	cols, err := findColumns(rr.Schema(), name, opt)
	if err != nil {
		return nil, err
	}
	acc := newEdgeAccumulator(name, cols, int(max(0, min(rowsHint, maxRowsHint))))
	var row int64
	for rr.Next() {
		if err := opt.interrupted(name); err != nil {
			return nil, err
		}
		rec := rr.RecordBatch()
		if err := acc.add(rec, row); err != nil {
			return nil, err
		}
		row += rec.NumRows()
	}
	if err := opt.interrupted(name); err != nil {
		return nil, err
	}
	if err := rr.Err(); err != nil {
		return nil, fmt.Errorf("arrowio: %s: corrupt or truncated input after row %d: %w", name, row, err)
	}
	return acc.finish()
}

// edgeAccumulator gathers the id and weight columns batch by batch.
type edgeAccumulator struct {
	name string
	cols columnSet
	// Integer ids, as order keys (see intKey).
	srcKeys, dstKeys []int64
	// String ids, as provisional ids of an interning table.
	strs     *stringTable
	srcProv  []int32
	dstProv  []int32
	weights  weightColumn
	weighted bool
	// chunked: the rows were not known ahead (a pipe, a Flight upload,
	// CSV), so each batch's columns are made at its size and kept apart
	// (chunks), and finish joins them with one copy, where appending to
	// one column copies it again each time it outgrows its room.
	chunked bool
	chunks  []accChunk
}

// accChunk is one batch's columns in a chunked accumulator.
type accChunk struct {
	srcKeys, dstKeys []int64
	srcProv, dstProv []int32
	weights          weightColumn
}

// maxRowsHint caps the capacity reserved from a file's own row count, which
// a corrupt file may overstate.
const maxRowsHint = 1 << 28

func newEdgeAccumulator(name string, cols columnSet, rows int) *edgeAccumulator {
	a := &edgeAccumulator{name: name, cols: cols, weighted: cols.weight >= 0, chunked: rows <= 0}
	if cols.kind == kindString {
		a.strs = newStringTable()
		a.srcProv, a.dstProv = make([]int32, 0, rows), make([]int32, 0, rows)
	} else {
		a.srcKeys, a.dstKeys = make([]int64, 0, rows), make([]int64, 0, rows)
	}
	if a.weighted {
		a.weights.init(cols.wType, rows)
	}
	return a
}

func (a *edgeAccumulator) add(rec arrow.RecordBatch, row int64) error {
	if int(rec.NumCols()) <= max(a.cols.src, a.cols.dst, a.cols.weight) {
		return fmt.Errorf("arrowio: %s: record batch at row %d has %d columns, the schema more", a.name, row, rec.NumCols())
	}
	for _, idx := range a.cols.fieldIndices() {
		if n := rec.Column(idx).Len(); int64(n) != rec.NumRows() {
			return fmt.Errorf("arrowio: %s: column %q has %d values in a batch of %d rows at row %d", a.name, rec.ColumnName(idx), n, rec.NumRows(), row)
		}
	}
	if a.chunked {
		a.startChunk(int(rec.NumRows()))
	}
	type idCol struct {
		name string
		t    arrow.DataType
		idx  int
	}
	for k, c := range []idCol{{a.cols.srcName, a.cols.srcType, a.cols.src}, {a.cols.dstName, a.cols.dstType, a.cols.dst}} {
		arr := rec.Column(c.idx)
		if !arrow.TypeEqual(arr.DataType(), c.t) {
			return fmt.Errorf("arrowio: %s: column %q changes type from %s to %s at row %d", a.name, c.name, c.t, arr.DataType(), row)
		}
		var err error
		if a.strs != nil {
			p := &a.srcProv
			if k == 1 {
				p = &a.dstProv
			}
			*p, err = a.strs.appendColumn(*p, arr, a.name, c.name, row)
		} else {
			p := &a.srcKeys
			if k == 1 {
				p = &a.dstKeys
			}
			*p, err = appendIntKeys(*p, arr, a.cols.unsignedOrder, a.name, c.name, row)
		}
		if err != nil {
			return err
		}
	}
	if a.weighted {
		arr := rec.Column(a.cols.weight)
		if !arrow.TypeEqual(arr.DataType(), a.cols.wType) {
			return fmt.Errorf("arrowio: %s: column %q changes type from %s to %s at row %d", a.name, a.cols.wName, a.cols.wType, arr.DataType(), row)
		}
		if err := a.weights.append(arr, a.name, a.cols.wName, row); err != nil {
			return err
		}
	}
	return nil
}

// chunkRoomMax bounds the room a chunk is given up front: a batch's row
// count is what its metadata claims, which a corrupt input may overstate
// (the columns' own lengths are read from the same metadata); a larger
// batch's columns grow as they are appended to.
const chunkRoomMax = 1 << 20

// startChunk keeps the columns of the batches so far apart and gives the
// next batch columns of its own, with room for its n rows (at most
// chunkRoomMax).
func (a *edgeAccumulator) startChunk(n int) {
	n = min(n, chunkRoomMax)
	a.keepChunk()
	if a.strs != nil {
		a.srcProv, a.dstProv = make([]int32, 0, n), make([]int32, 0, n)
	} else {
		a.srcKeys, a.dstKeys = make([]int64, 0, n), make([]int64, 0, n)
	}
	if a.weighted {
		a.weights = weightColumn{}
		a.weights.init(a.cols.wType, n)
	}
}

// keepChunk moves the current batch's columns, if any, to the chunks.
func (a *edgeAccumulator) keepChunk() {
	if len(a.srcKeys)+len(a.srcProv) == 0 {
		return
	}
	a.chunks = append(a.chunks, accChunk{a.srcKeys, a.dstKeys, a.srcProv, a.dstProv, a.weights})
}

// joinChunks gives a chunked accumulator its columns whole.
func (a *edgeAccumulator) joinChunks() {
	a.keepChunk()
	a.srcKeys = joinColumn(a.chunks, func(c *accChunk) []int64 { return c.srcKeys })
	a.dstKeys = joinColumn(a.chunks, func(c *accChunk) []int64 { return c.dstKeys })
	a.srcProv = joinColumn(a.chunks, func(c *accChunk) []int32 { return c.srcProv })
	a.dstProv = joinColumn(a.chunks, func(c *accChunk) []int32 { return c.dstProv })
	if a.weighted {
		a.weights = weightColumn{}
		a.weights.init(a.cols.wType, 0)
		switch {
		case a.weights.f32 != nil:
			a.weights.f32 = joinColumn(a.chunks, func(c *accChunk) []float32 { return c.weights.f32 })
		case a.weights.f64 != nil:
			a.weights.f64 = joinColumn(a.chunks, func(c *accChunk) []float64 { return c.weights.f64 })
		default:
			a.weights.ints = joinColumn(a.chunks, func(c *accChunk) []int64 { return c.weights.ints })
		}
	}
	a.chunks = nil
}

// joinColumn is the column of of every chunk, in order, in one slice of
// their total length (never nil).
func joinColumn[T any](chunks []accChunk, of func(*accChunk) []T) []T {
	total := 0
	for i := range chunks {
		total += len(of(&chunks[i]))
	}
	out := make([]T, 0, total)
	for i := range chunks {
		out = append(out, of(&chunks[i])...)
	}
	return out
}

func (a *edgeAccumulator) finish() (*EdgeTable, error) {
	if a.chunked {
		a.joinChunks()
	}
	t := &EdgeTable{Name: a.name, WeightGuessed: a.cols.guess.column, WeightNote: a.cols.guess.note(defaultWeightCol)}
	if a.weighted {
		t.WeightType = a.cols.wType
		a.weights.setOn(&t.Edges)
	}
	var err error
	if a.strs != nil {
		t.Edges.Src, t.Edges.Dst, t.Vertices = a.strs.finish(a.srcProv, a.dstProv)
	} else {
		var ints []int64
		ints, t.Edges.Src, t.Edges.Dst, err = denseIntIDs(a.srcKeys, a.dstKeys, a.name, a.cols.srcName, a.cols.dstName)
		if err != nil {
			return nil, err
		}
		if a.cols.unsignedOrder {
			for i := range ints {
				ints[i] = intFromKey(ints[i], true)
			}
		}
		t.Vertices = &Vertices{Ints: ints}
	}
	t.Vertices.Type = a.cols.idType
	t.Edges.NumVertices = t.Vertices.Len()
	return t, nil
}

const signBit = uint64(1) << 63

// intKey maps an id to an int64 whose signed order is the id order: uint64
// ids (unsignedOrder) have their top bit flipped; all others are themselves.
func intKey(v uint64, unsignedOrder bool) int64 {
	if unsignedOrder {
		return int64(v ^ signBit)
	}
	return int64(v)
}

// intFromKey inverts intKey; uint64 ids come back by their bits.
func intFromKey(k int64, unsignedOrder bool) int64 {
	if unsignedOrder {
		return int64(uint64(k) ^ signBit)
	}
	return k
}

func appendSigned[T int8 | int16 | int32 | int64](dst []int64, vals []T) []int64 {
	for _, v := range vals {
		dst = append(dst, int64(v))
	}
	return dst
}

func appendUnsigned[T uint8 | uint16 | uint32](dst []int64, vals []T, unsignedOrder bool) []int64 {
	for _, v := range vals {
		dst = append(dst, intKey(uint64(v), unsignedOrder))
	}
	return dst
}

// appendUint64 appends keys of uint64 values; with a signed common type a
// value above MaxInt64 cannot be represented: its index is returned.
func appendUint64(dst []int64, vals []uint64, unsignedOrder bool) ([]int64, int) {
	if unsignedOrder {
		for _, v := range vals {
			dst = append(dst, int64(v^signBit))
		}
		return dst, -1
	}
	for i, v := range vals {
		if v > math.MaxInt64 {
			return dst, i
		}
		dst = append(dst, int64(v))
	}
	return dst, -1
}

// appendIntegers appends the values of an integer array (nulls included, as
// whatever the buffer holds) as keys. bad is the index of a uint64 value that
// does not fit a signed key, or -1.
func appendIntegers(dst []int64, arr arrow.Array, unsignedOrder bool) (out []int64, bad int, ok bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return appendSigned(dst, a.Int8Values()), -1, true
	case *array.Int16:
		return appendSigned(dst, a.Int16Values()), -1, true
	case *array.Int32:
		return appendSigned(dst, a.Int32Values()), -1, true
	case *array.Int64:
		return append(dst, a.Int64Values()...), -1, true
	case *array.Uint8:
		return appendUnsigned(dst, a.Uint8Values(), unsignedOrder), -1, true
	case *array.Uint16:
		return appendUnsigned(dst, a.Uint16Values(), unsignedOrder), -1, true
	case *array.Uint32:
		return appendUnsigned(dst, a.Uint32Values(), unsignedOrder), -1, true
	case *array.Uint64:
		out, bad := appendUint64(dst, a.Uint64Values(), unsignedOrder)
		return out, bad, true
	}
	return dst, -1, false
}

func firstNull(arr arrow.Array) int {
	if arr.NullN() == 0 {
		return -1
	}
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			return i
		}
	}
	return -1
}

func appendIntKeys(dst []int64, arr arrow.Array, unsignedOrder bool, name, col string, row int64) ([]int64, error) {
	if i := firstNull(arr); i >= 0 {
		return dst, fmt.Errorf("arrowio: %s: column %q row %d: null id", name, col, row+int64(i))
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return appendDictIntKeys(dst, d, unsignedOrder, name, col, row)
	}
	n := len(dst)
	out, bad, ok := appendIntegers(dst, arr, unsignedOrder)
	if !ok {
		return dst, fmt.Errorf("arrowio: %s: column %q has type %s; ids must be integers or strings", name, col, arr.DataType())
	}
	if bad >= 0 {
		return dst[:n], fmt.Errorf("arrowio: %s: column %q row %d: id %d does not fit int64 (the other id column is signed)", name, col, row+int64(bad), arr.(*array.Uint64).Value(bad))
	}
	return out, nil
}

// dictIndices returns the indices of a dictionary array as int64, checking
// that each is within the dictionary.
func dictIndices(d *array.Dictionary, name, col string, row int64) ([]int64, error) {
	idx, _, ok := appendIntegers(make([]int64, 0, d.Len()), d.Indices(), false)
	if !ok {
		return nil, fmt.Errorf("arrowio: %s: column %q: dictionary indices of type %s", name, col, d.Indices().DataType())
	}
	size := int64(d.Dictionary().Len())
	for i, k := range idx {
		if k < 0 || k >= size {
			return nil, fmt.Errorf("arrowio: %s: column %q row %d: dictionary index %d outside the dictionary of %d values", name, col, row+int64(i), k, size)
		}
	}
	return idx, nil
}

func appendDictIntKeys(dst []int64, d *array.Dictionary, unsignedOrder bool, name, col string, row int64) ([]int64, error) {
	idx, err := dictIndices(d, name, col, row)
	if err != nil {
		return dst, err
	}
	dict := d.Dictionary()
	values, bad, ok := appendIntegers(nil, dict, unsignedOrder)
	if !ok {
		return dst, fmt.Errorf("arrowio: %s: column %q has type %s; ids must be integers or strings", name, col, d.DataType())
	}
	for i, k := range idx {
		if dict.IsNull(int(k)) {
			return dst, fmt.Errorf("arrowio: %s: column %q row %d: null id", name, col, row+int64(i))
		}
		if bad >= 0 && int(k) >= bad {
			// appendIntegers stopped at bad; any later value is unchecked.
			v := dict.(*array.Uint64).Value(int(k))
			if v > math.MaxInt64 {
				return dst, fmt.Errorf("arrowio: %s: column %q row %d: id %d does not fit int64 (the other id column is signed)", name, col, row+int64(i), v)
			}
			dst = append(dst, int64(v))
			continue
		}
		dst = append(dst, values[k])
	}
	return dst, nil
}

// weightColumn gathers weights in the slice their type asks for.
type weightColumn struct {
	ints []int64
	f32  []float32
	f64  []float64
}

func (w *weightColumn) init(t arrow.DataType, rows int) {
	switch t.ID() {
	case arrow.FLOAT16, arrow.FLOAT32:
		w.f32 = make([]float32, 0, rows)
	case arrow.FLOAT64:
		w.f64 = make([]float64, 0, rows)
	default:
		w.ints = make([]int64, 0, rows)
	}
}

func (w *weightColumn) setOn(e *graph.Edges) {
	e.IntWeights, e.Float32Weights, e.Float64Weights = w.ints, w.f32, w.f64
}

func notFinite(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

func (w *weightColumn) append(arr arrow.Array, name, col string, row int64) error {
	if i := firstNull(arr); i >= 0 {
		return fmt.Errorf("arrowio: %s: column %q row %d: null weight", name, col, row+int64(i))
	}
	badFloat := func(i int, v float64) error {
		return fmt.Errorf("arrowio: %s: column %q row %d: weight %v is not finite", name, col, row+int64(i), v)
	}
	switch a := arr.(type) {
	case *array.Float16:
		for i, v := range a.Values() {
			f := v.Float32()
			if notFinite(float64(f)) {
				return badFloat(i, float64(f))
			}
			w.f32 = append(w.f32, f)
		}
	case *array.Float32:
		for i, f := range a.Float32Values() {
			if notFinite(float64(f)) {
				return badFloat(i, float64(f))
			}
		}
		w.f32 = append(w.f32, a.Float32Values()...)
	case *array.Float64:
		for i, f := range a.Float64Values() {
			if notFinite(f) {
				return badFloat(i, f)
			}
		}
		w.f64 = append(w.f64, a.Float64Values()...)
	default:
		n := len(w.ints)
		out, bad, ok := appendIntegers(w.ints, arr, false)
		if !ok {
			return fmt.Errorf("arrowio: %s: column %q has type %s; weights must be integers or floats", name, col, arr.DataType())
		}
		if bad >= 0 {
			w.ints = w.ints[:n]
			return fmt.Errorf("arrowio: %s: column %q row %d: weight %d is above the int64 maximum", name, col, row+int64(bad), arr.(*array.Uint64).Value(bad))
		}
		w.ints = out
	}
	return nil
}
