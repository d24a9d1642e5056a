package arrowio

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// edgeBatchRows is the row count of one record of an edge table written by
// WriteEdges (a variable so that tests can make it small).
var edgeBatchRows int64 = 1 << 20

// WriteEdges writes an edge table (columns src, dst and, unless weight is
// nil, weight) to path, atomically as CreateResult does: formats arrow,
// arrows, parquet, csv, tsv and gr (DIMACS: integer ids 1..n, written as
// "p sp n m" and one "a u v w" line per edge, w = 1 when unweighted, n the
// largest id). Ids are any integer type or utf8/large_utf8 (dictionaries
// too, except in text formats); weights any integer or float type. Nulls
// and non-finite weights are refused, naming the column and row. Records
// hold at most 2^20 rows.
func WriteEdges(path string, src, dst arrow.Array, weight arrow.Array, opt WriteOptions) error {
	format, err := opt.outputFormat(path, true)
	if err != nil {
		return err
	}
	if path == "-" && opt.Format == "" {
		format = outArrows
	}
	comp, err := opt.compression(path, format)
	if err != nil {
		return err
	}
	rec, err := edgeRecord(path, src, dst, weight)
	if err != nil {
		return err
	}
	defer rec.Release()

	var w *ResultWriter
	switch format {
	case outDIMACS:
		dw, err := newDIMACSWriter(path, src, dst, weight)
		if err != nil {
			return err
		}
		if w, err = openSink(path, opt); err != nil {
			return err
		}
		dw.w = w.sink
		w.rw = dw
	default:
		if format == outCSV || format == outTSV {
			if err := checkCSVSchema(path, rec.Schema(), nil); err != nil {
				return err
			}
		}
		if w, err = openSink(path, opt); err != nil {
			return err
		}
		if w.rw, err = newRecordWriter(w.sink, format, comp, rec.Schema(), opt); err != nil {
			w.discard()
			return fmt.Errorf("arrowio: %s: %w", path, err)
		}
	}
	w.format = format
	for lo := int64(0); lo < rec.NumRows() || lo == 0; lo += edgeBatchRows {
		part := rec.NewSlice(lo, min(lo+edgeBatchRows, rec.NumRows()))
		err := w.Write(part)
		part.Release()
		if err != nil {
			w.Abort()
			return err
		}
		if rec.NumRows() == 0 {
			break
		}
	}
	return w.Close()
}

// edgeRecord checks the columns and puts them in one record.
func edgeRecord(path string, src, dst, weight arrow.Array) (arrow.RecordBatch, error) {
	if src == nil || dst == nil {
		return nil, fmt.Errorf("arrowio: %s: an edge table needs src and dst columns", path)
	}
	cols := []arrow.Array{src, dst}
	names := []string{"src", "dst"}
	if weight != nil {
		cols = append(cols, weight)
		names = append(names, "weight")
	}
	fields := make([]arrow.Field, len(cols))
	for c, col := range cols {
		if col.Len() != src.Len() {
			return nil, fmt.Errorf("arrowio: %s: column %s has %d rows, src has %d", path, names[c], col.Len(), src.Len())
		}
		if col.NullN() > 0 {
			for i := 0; i < col.Len(); i++ {
				if col.IsNull(i) {
					return nil, fmt.Errorf("arrowio: %s: column %s, row %d: null", path, names[c], i)
				}
			}
		}
		t := col.DataType()
		ok := false
		if c < 2 {
			ok = isIDType(t)
			if d, isDict := t.(*arrow.DictionaryType); isDict {
				ok = isIDType(d.ValueType) && !isIntType(d.ValueType)
			}
		} else {
			ok = isIntType(t) || t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64
		}
		if !ok {
			return nil, fmt.Errorf("arrowio: %s: column %s of type %s (want integer or string ids and integer or float weights)", path, names[c], t)
		}
		fields[c] = arrow.Field{Name: names[c], Type: t}
	}
	if !arrow.TypeEqual(src.DataType(), dst.DataType()) {
		return nil, fmt.Errorf("arrowio: %s: src is %s but dst is %s", path, src.DataType(), dst.DataType())
	}
	switch w := weight.(type) {
	case *array.Float32:
		for i, x := range w.Float32Values() {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("arrowio: %s: column weight, row %d: weight %v is not finite", path, i, x)
			}
		}
	case *array.Float64:
		for i, x := range w.Float64Values() {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("arrowio: %s: column weight, row %d: weight %v is not finite", path, i, x)
			}
		}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(src.Len())), nil
}

func isIntType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isIDType(t arrow.DataType) bool {
	return isIntType(t) || t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

// dimacsWriter writes an edge record as DIMACS shortest-path text.
type dimacsWriter struct {
	w        io.Writer
	n, m     uint64
	src, dst []uint64
	header   bool
	row      int
	line     []byte
}

func newDIMACSWriter(path string, src, dst, weight arrow.Array) (*dimacsWriter, error) {
	s, err := dimacsIDs(path, "src", src)
	if err != nil {
		return nil, err
	}
	d, err := dimacsIDs(path, "dst", dst)
	if err != nil {
		return nil, err
	}
	var n uint64
	for i := range s {
		n = max(n, s[i], d[i])
	}
	return &dimacsWriter{n: n, m: uint64(len(s)), src: s, dst: d}, nil
}

// dimacsIDs returns integer ids as uint64, refusing strings and ids below 1.
func dimacsIDs(path, name string, col arrow.Array) ([]uint64, error) {
	var ids []uint64
	var bad int = -1
	switch a := col.(type) {
	case *array.Int8:
		ids, bad = widen(a.Int8Values())
	case *array.Int16:
		ids, bad = widen(a.Int16Values())
	case *array.Int32:
		ids, bad = widen(a.Int32Values())
	case *array.Int64:
		ids, bad = widen(a.Int64Values())
	case *array.Uint8:
		ids, bad = widen(a.Uint8Values())
	case *array.Uint16:
		ids, bad = widen(a.Uint16Values())
	case *array.Uint32:
		ids, bad = widen(a.Uint32Values())
	case *array.Uint64:
		ids, bad = widen(a.Uint64Values())
	default:
		return nil, fmt.Errorf("arrowio: %s: DIMACS needs integer ids 1..n; column %s is %s", path, name, col.DataType())
	}
	if bad >= 0 {
		return nil, fmt.Errorf("arrowio: %s: DIMACS needs integer ids 1..n; column %s, row %d holds %s", path, name, bad, col.ValueStr(bad))
	}
	return ids, nil
}

// widen converts ids to uint64 and returns the first row below 1 (or -1).
func widen[T intID](xs []T) ([]uint64, int) {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		if x < 1 {
			return nil, i
		}
		out[i] = uint64(x)
	}
	return out, -1
}

func (d *dimacsWriter) Write(rec arrow.RecordBatch) error {
	if !d.header {
		d.header = true
		hdr := fmt.Sprintf("c written by pathctl\np sp %d %d\n", d.n, d.m)
		if _, err := io.WriteString(d.w, hdr); err != nil {
			return err
		}
	}
	// Records are consecutive slices of the table: their ids are read from
	// d.src and d.dst from the first row not yet written.
	off := d.row
	d.row += int(rec.NumRows())
	var weight fieldAppender
	if rec.NumCols() > 2 {
		var err error
		if weight, err = csvAppender(rec.Column(2), ' '); err != nil {
			return err
		}
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		line := append(d.line[:0], 'a', ' ')
		line = strconv.AppendUint(line, d.src[off+i], 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, d.dst[off+i], 10)
		line = append(line, ' ')
		if weight == nil {
			line = append(line, '1')
		} else {
			line = weight(line, i)
		}
		line = append(line, '\n')
		if _, err := d.w.Write(line); err != nil {
			return err
		}
		d.line = line
	}
	return nil
}

func (d *dimacsWriter) Close() error {
	if !d.header {
		return d.Write(array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 0))
	}
	return nil
}
