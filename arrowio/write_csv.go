package arrowio

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// isMatrixSchema reports whether schema is the matrix layout: a source
// column and a fixed_size_list distance column.
func isMatrixSchema(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrow.FIXED_SIZE_LIST {
			return true
		}
	}
	return false
}

// csvScalar reports whether arrow's CSV writer writes t as one plain field.
func csvScalar(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING:
		return true
	}
	return false
}

// csvList reports whether t is a list of csvScalar values, which CSV holds
// as one field of the values joined by ';' (csvListAppender): the path
// column of pairs.
func csvList(t arrow.DataType) bool {
	switch l := t.(type) {
	case *arrow.ListType:
		return csvScalar(l.Elem())
	case *arrow.LargeListType:
		return csvScalar(l.Elem())
	}
	return false
}

// checkCSVSchema refuses what CSV cannot hold, before any file is created.
func checkCSVSchema(path string, schema *arrow.Schema, v *Vertices) error {
	if !isMatrixSchema(schema) {
		for _, f := range schema.Fields() {
			if !csvScalar(f.Type) && !csvList(f.Type) {
				return fmt.Errorf("arrowio: %s: column %q of type %s cannot be written as csv", path, f.Name, f.Type)
			}
		}
		return nil
	}
	fields := schema.Fields()
	if len(fields) != 2 || !csvScalar(fields[0].Type) || fields[1].Type.ID() != arrow.FIXED_SIZE_LIST {
		return fmt.Errorf("arrowio: %s: a matrix written as csv needs columns source and distance (fixed_size_list), got %s", path, schema)
	}
	list := fields[1].Type.(*arrow.FixedSizeListType)
	switch list.Elem().ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64:
	default:
		return fmt.Errorf("arrowio: %s: matrix distances of type %s cannot be written as csv", path, list.Elem())
	}
	if v == nil {
		return fmt.Errorf("arrowio: %s: a matrix written as csv needs the vertices for its header (WriteOptions.Vertices)", path)
	}
	if max(v.Len(), 1) != int(list.Len()) { // a graph of no vertices has a list size of 1 and no rows
		return fmt.Errorf("arrowio: %s: matrix of %d columns but %d vertices", path, list.Len(), v.Len())
	}
	return nil
}

// tableCSVWriter writes records of csvScalar columns as CSV (or TSV): a
// header of the column names, then one line per row. A list column (the
// path of pairs) is one field of its values joined by ';'. Nulls are empty fields;
// an empty string is written as "" so that it stays apart from a null.
// Floats are written in the shortest form that parses back to the same
// value. It formats straight into reused byte buffers, which is several
// times faster than going through a []string per column, and formats the
// rows of a record on every core (writeRows).
type tableCSVWriter struct {
	w      io.Writer
	schema *arrow.Schema
	comma  byte
	header bool
	line   []byte
	bufs   [][]byte // writeRows' chunk buffers
}

func (t *tableCSVWriter) writeHeader() error {
	line := t.line[:0]
	for i, f := range t.schema.Fields() {
		if i > 0 {
			line = append(line, t.comma)
		}
		line = appendCSVField(line, f.Name, t.comma, false)
	}
	line = append(line, '\n')
	t.line = line
	_, err := t.w.Write(line)
	return err
}

func (t *tableCSVWriter) Write(rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(t.schema) {
		return fmt.Errorf("record schema %s differs from the writer's %s", rec.Schema(), t.schema)
	}
	if !t.header {
		t.header = true
		if err := t.writeHeader(); err != nil {
			return err
		}
	}
	cols := make([]fieldAppender, rec.NumCols())
	for c, col := range rec.Columns() {
		var err error
		if cols[c], err = csvAppender(col, t.comma); err != nil {
			return err
		}
	}
	return writeRows(t.w, &t.bufs, int(rec.NumRows()), csvChunkBytes/16, func(line []byte, lo, hi int) []byte {
		for i := lo; i < hi; i++ {
			for c, appendField := range cols {
				if c > 0 {
					line = append(line, t.comma)
				}
				line = appendField(line, i)
			}
			line = append(line, '\n')
		}
		return line
	})
}

// csvChunkBytes is about the text one core formats at a time.
const csvChunkBytes = 1 << 20

// writeRows formats rows [0, rows) as text, chunkRows rows at a time on
// every core (format appends rows lo..hi-1 to dst), and writes the text to
// w in row order. It goes one window of a chunk per core at a time, so the
// text held stays near cores × chunkRows rows. bufs keeps the chunk
// buffers between calls.
func writeRows(w io.Writer, bufs *[][]byte, rows, chunkRows int, format func(dst []byte, lo, hi int) []byte) error {
	chunkRows = max(chunkRows, 1)
	workers := max(1, min(runtime.GOMAXPROCS(0), (rows+chunkRows-1)/chunkRows))
	for len(*bufs) < workers {
		*bufs = append(*bufs, nil)
	}
	b := *bufs
	for lo := 0; lo < rows; lo += workers * chunkRows {
		chunks := min(workers, (rows-lo+chunkRows-1)/chunkRows)
		if chunks == 1 {
			b[0] = format(b[0][:0], lo, min(lo+chunkRows, rows))
		} else {
			var wg sync.WaitGroup
			for c := range chunks {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					a := lo + c*chunkRows
					b[c] = format(b[c][:0], a, min(a+chunkRows, rows))
				}(c)
			}
			wg.Wait()
		}
		for c := range chunks {
			if _, err := w.Write(b[c]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *tableCSVWriter) Close() error {
	if !t.header {
		t.header = true
		return t.writeHeader()
	}
	return nil
}

// matrixCSVWriter writes the matrix layout as a wide table: a header
// "source,<id of vertex 0>,<id of vertex 1>,...", then one line per source
// with its distances in vertex order, unreachable ones empty.
type matrixCSVWriter struct {
	w        io.Writer
	comma    byte
	vertices *Vertices
	header   bool
	line     []byte
	bufs     [][]byte // writeRows' chunk buffers
}

func newMatrixCSVWriter(w io.Writer, _ *arrow.Schema, v *Vertices, comma rune) *matrixCSVWriter {
	return &matrixCSVWriter{w: w, comma: byte(comma), vertices: v}
}

func (m *matrixCSVWriter) writeHeader() error {
	line := append(m.line[:0], ColSource...)
	for i := 0; i < m.vertices.Len(); i++ {
		line = append(line, m.comma)
		line = appendCSVField(line, m.vertices.Format(int32(i)), m.comma, m.vertices.IsString())
		if len(line) > 1<<16 {
			if _, err := m.w.Write(line); err != nil {
				return err
			}
			line = line[:0]
		}
	}
	line = append(line, '\n')
	_, err := m.w.Write(line)
	m.line = line[:0]
	return err
}

func (m *matrixCSVWriter) Write(rec arrow.RecordBatch) error {
	if rec.NumCols() != 2 {
		return fmt.Errorf("matrix record of %d columns", rec.NumCols())
	}
	list, ok := rec.Column(1).(*array.FixedSizeList)
	if !ok || int(list.DataType().(*arrow.FixedSizeListType).Len()) != max(m.vertices.Len(), 1) {
		return fmt.Errorf("matrix record with distance column %s", rec.Column(1).DataType())
	}
	if !m.header {
		if err := m.writeHeader(); err != nil {
			return err
		}
		m.header = true
	}
	n := m.vertices.Len()
	src, err := csvAppender(rec.Column(0), m.comma)
	if err != nil {
		return err
	}
	values := list.ListValues()
	base := list.Offset() * n
	var appendRow func(line []byte, lo int) []byte
	switch vals := values.(type) {
	case *array.Int32:
		appendRow = func(line []byte, lo int) []byte {
			for j := lo; j < lo+n; j++ {
				line = append(line, m.comma)
				if vals.IsValid(j) {
					line = strconv.AppendInt(line, int64(vals.Value(j)), 10)
				}
			}
			return line
		}
	case *array.Int64:
		appendRow = func(line []byte, lo int) []byte {
			for j := lo; j < lo+n; j++ {
				line = append(line, m.comma)
				if vals.IsValid(j) {
					line = strconv.AppendInt(line, vals.Value(j), 10)
				}
			}
			return line
		}
	case *array.Float32:
		appendRow = func(line []byte, lo int) []byte {
			for j := lo; j < lo+n; j++ {
				line = append(line, m.comma)
				if x := vals.Value(j); vals.IsValid(j) && !math.IsInf(float64(x), 0) {
					line = strconv.AppendFloat(line, float64(x), 'g', -1, 32)
				}
			}
			return line
		}
	case *array.Float64:
		appendRow = func(line []byte, lo int) []byte {
			for j := lo; j < lo+n; j++ {
				line = append(line, m.comma)
				if x := vals.Value(j); vals.IsValid(j) && !math.IsInf(x, 0) {
					line = strconv.AppendFloat(line, x, 'g', -1, 64)
				}
			}
			return line
		}
	default:
		return fmt.Errorf("matrix distances of type %s", values.DataType())
	}
	// About 8 bytes a distance: a chunk of csvChunkBytes holds that many rows.
	return writeRows(m.w, &m.bufs, int(rec.NumRows()), csvChunkBytes/(8*max(n, 1)), func(line []byte, lo, hi int) []byte {
		for i := lo; i < hi; i++ {
			line = src(line, i)
			line = appendRow(line, base+i*n)
			line = append(line, '\n')
		}
		return line
	})
}

func (m *matrixCSVWriter) Close() error {
	if !m.header {
		m.header = true
		return m.writeHeader()
	}
	return nil
}

// fieldAppender appends value i of one column as a CSV field.
type fieldAppender func(dst []byte, i int) []byte

// csvAppender returns the fieldAppender of a csvScalar column: empty when
// null or +Inf (unreachable), integers in decimal (uint64 unsigned), floats
// in the shortest form that parses back to the same value, strings quoted
// where CSV needs it. The type is resolved once per column, not per value.
func csvAppender(col arrow.Array, comma byte) (fieldAppender, error) {
	var f fieldAppender
	switch a := col.(type) {
	case *array.Int8:
		f = intAppender(a.Int8Values())
	case *array.Int16:
		f = intAppender(a.Int16Values())
	case *array.Int32:
		f = intAppender(a.Int32Values())
	case *array.Int64:
		f = intAppender(a.Int64Values())
	case *array.Uint8:
		f = uintAppender(a.Uint8Values())
	case *array.Uint16:
		f = uintAppender(a.Uint16Values())
	case *array.Uint32:
		f = uintAppender(a.Uint32Values())
	case *array.Uint64:
		f = uintAppender(a.Uint64Values())
	case *array.Float32:
		vals := a.Float32Values()
		f = func(dst []byte, i int) []byte {
			if x := float64(vals[i]); !math.IsInf(x, 1) {
				return strconv.AppendFloat(dst, x, 'g', -1, 32)
			}
			return dst
		}
	case *array.Float64:
		vals := a.Float64Values()
		f = func(dst []byte, i int) []byte {
			if x := vals[i]; !math.IsInf(x, 1) {
				return strconv.AppendFloat(dst, x, 'g', -1, 64)
			}
			return dst
		}
	case *array.String:
		f = func(dst []byte, i int) []byte { return appendCSVField(dst, a.Value(i), comma, true) }
	case *array.LargeString:
		f = func(dst []byte, i int) []byte { return appendCSVField(dst, a.Value(i), comma, true) }
	case *array.Boolean:
		f = func(dst []byte, i int) []byte { return strconv.AppendBool(dst, a.Value(i)) }
	case *array.List:
		return csvListAppender(a, comma)
	case *array.LargeList:
		return csvListAppender(a, comma)
	default:
		return nil, fmt.Errorf("column of type %s cannot be written as csv", col.DataType())
	}
	if col.NullN() == 0 {
		return f, nil
	}
	return func(dst []byte, i int) []byte {
		if col.IsNull(i) {
			return dst
		}
		return f(dst, i)
	}, nil
}

// csvListSep joins the values of a list column in one CSV field.
const csvListSep = ';'

// csvListAppender returns the fieldAppender of a list column: its values
// joined by ';' in one field (a path 1 -> 2 -> 4 is 1;2;4), empty for a
// null or empty list. A value is written as in a column of its own with
// ';' as the separator: a string id holding ';', a quote or a line break
// is quoted inside the field, so that the ids split back apart; the field
// is then quoted where the file's separator needs it.
func csvListAppender(col interface {
	arrow.Array
	ValueOffsets(i int) (start, end int64)
	ListValues() arrow.Array
}, comma byte) (fieldAppender, error) {
	if !csvScalar(col.ListValues().DataType()) {
		return nil, fmt.Errorf("column of type %s cannot be written as csv", col.DataType())
	}
	value, err := csvAppender(col.ListValues(), csvListSep)
	if err != nil {
		return nil, err
	}
	return func(dst []byte, i int) []byte {
		if col.IsNull(i) {
			return dst
		}
		start := len(dst)
		lo, hi := col.ValueOffsets(i)
		for k := lo; k < hi; k++ {
			if k > lo {
				dst = append(dst, csvListSep)
			}
			dst = value(dst, int(k))
		}
		if field := dst[start:]; len(field) > 0 && (field[0] == ' ' || field[0] == '\t' ||
			strings.ContainsAny(string(field), string([]byte{comma, '"', '\r', '\n'}))) {
			text := string(field)
			dst = appendCSVField(dst[:start], text, comma, false)
		}
		return dst
	}, nil
}

func intAppender[T int8 | int16 | int32 | int64](vals []T) fieldAppender {
	return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(vals[i]), 10) }
}

func uintAppender[T uint8 | uint16 | uint32 | uint64](vals []T) fieldAppender {
	return func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(vals[i]), 10) }
}

// appendCSVField appends s, quoted as RFC 4180 asks when it holds the
// separator, a quote or a line break, starts with a space, or is an empty
// string id (so that it differs from a missing value).
func appendCSVField(dst []byte, s string, comma byte, isString bool) []byte {
	quote := isString && s == ""
	if !quote && s != "" {
		quote = s[0] == ' ' || s[0] == '\t' || strings.ContainsAny(s, string([]byte{comma, '"', '\r', '\n'}))
	}
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for k := 0; k < len(s); k++ {
		if s[k] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[k])
	}
	return append(dst, '"')
}
