package arrowio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pathctl/pathctl/graph"
)

// cell is one value read back from a file, as text: integers in decimal,
// floats in the shortest form of their own width, strings as they are.
type outCell struct {
	nullCell bool
	s        string
}

func (c outCell) String() string {
	if c.nullCell {
		return "<null>"
	}
	return strconv.Quote(c.s)
}

func cellOf(s string) outCell { return outCell{s: s} }

var nullCell = outCell{nullCell: true}

// table is what a file read back holds: its schema (nil for text) and its
// rows, a fixed_size_list column spread into one cell per element.
type readBack struct {
	schema *arrow.Schema
	rows   [][]outCell
}

// readTable reads a file written in format with arrow-go's own readers (or,
// for text, the strict parser below).
func readBackFile(t *testing.T, path, format string, mem memory.Allocator) readBack {
	t.Helper()
	switch format {
	case outCSV, outTSV:
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		comma := byte(',')
		if format == outTSV {
			comma = '\t'
		}
		rows := parseCSVCells(t, string(data), comma)
		return readBack{rows: rows}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out readBack
	switch format {
	case outArrow:
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		out.schema = r.Schema()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			out.rows = append(out.rows, recordCells(t, rec)...)
		}
	case outArrows:
		r, err := ipc.NewReader(f, ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		out.schema = r.Schema()
		for r.Next() {
			out.rows = append(out.rows, recordCells(t, r.RecordBatch())...)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	case outParquet:
		pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Release()
		// arrow-go leaves the file's key-value metadata (where the
		// writer puts the schema metadata) out of the schema it reads.
		kv := pf.MetaData().KeyValueMetadata()
		var keys, values []string
		for _, k := range kv.Keys() {
			if strings.HasPrefix(k, "ARROW:") {
				continue
			}
			keys = append(keys, k)
			values = append(values, *kv.FindValue(k))
		}
		md := arrow.NewMetadata(keys, values)
		out.schema = arrow.NewSchema(tbl.Schema().Fields(), &md)
		tr := array.NewTableReader(tbl, -1)
		defer tr.Release()
		for tr.Next() {
			out.rows = append(out.rows, recordCells(t, tr.RecordBatch())...)
		}
	default:
		t.Fatalf("no reader for %s", format)
	}
	return out
}

func recordCells(t *testing.T, rec arrow.RecordBatch) [][]outCell {
	t.Helper()
	rows := make([][]outCell, rec.NumRows())
	for c, col := range rec.Columns() {
		for i := range rows {
			if list, ok := col.(*array.FixedSizeList); ok {
				n := int(list.DataType().(*arrow.FixedSizeListType).Len())
				if list.IsNull(i) {
					t.Fatalf("column %d row %d: null list", c, i)
				}
				start := (list.Offset() + i) * n
				for j := start; j < start+n; j++ {
					rows[i] = append(rows[i], arrayCell(t, list.ListValues(), j))
				}
				continue
			}
			rows[i] = append(rows[i], arrayCell(t, col, i))
		}
	}
	return rows
}

func arrayCell(t *testing.T, col arrow.Array, i int) outCell {
	t.Helper()
	if col.IsNull(i) {
		return nullCell
	}
	switch a := col.(type) {
	case *array.Int8:
		return cellOf(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int16:
		return cellOf(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int32:
		return cellOf(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int64:
		return cellOf(strconv.FormatInt(a.Value(i), 10))
	case *array.Uint8:
		return cellOf(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Uint16:
		return cellOf(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Uint32:
		return cellOf(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Uint64:
		return cellOf(strconv.FormatUint(a.Value(i), 10))
	case *array.Float32:
		return cellOf(strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32))
	case *array.Float64:
		return cellOf(strconv.FormatFloat(a.Value(i), 'g', -1, 64))
	case *array.String:
		return cellOf(a.Value(i))
	case *array.LargeString:
		return cellOf(a.Value(i))
	case *array.Dictionary:
		return arrayCell(t, a.Dictionary(), a.GetValueIndex(i))
	}
	t.Fatalf("no cell for %s", col.DataType())
	return nullCell
}

// parseCSV is a strict RFC 4180 parser that keeps "" (an empty string)
// apart from an empty field (a null). Every line must end in \n.
func parseCSVCells(t *testing.T, s string, comma byte) [][]outCell {
	t.Helper()
	var rows [][]outCell
	var row []outCell
	for i := 0; i < len(s); {
		var c outCell
		if s[i] == '"' {
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					t.Fatalf("unterminated quote in %q", s)
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			c = cellOf(b.String())
		} else {
			j := i
			for j < len(s) && s[j] != comma && s[j] != '\n' {
				if s[j] == '"' || s[j] == '\r' {
					t.Fatalf("bare %q in field at offset %d of %q", s[j], j, s)
				}
				j++
			}
			if j == i {
				c = nullCell
			} else {
				c = cellOf(s[i:j])
			}
			i = j
		}
		row = append(row, c)
		if i >= len(s) {
			t.Fatalf("last line lacks a newline: %q", s)
		}
		switch s[i] {
		case comma:
			i++
		case '\n':
			rows = append(rows, row)
			row = nil
			i++
		default:
			t.Fatalf("junk %q after a quoted field at offset %d", s[i], i)
		}
	}
	return rows
}

func assertCellRows(t *testing.T, got, want [][]outCell) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: %d cells, want %d\ngot  %v\nwant %v", i, len(got[i]), len(want[i]), got[i], want[i])
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("row %d cell %d: got %v, want %v\nrow got  %v\nrow want %v", i, j, got[i][j], want[i][j], got[i], want[i])
			}
		}
	}
}

// noTemp asserts that dir holds exactly the names given.
func dirHoldsOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Fatalf("directory holds %v, want %v", got, names)
	}
}

// smallRecord is a two-column record of int64 ids and float64 distances.
func smallResultRecord(mem memory.Allocator, ids []int64, d []float64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "source", Type: arrow.PrimitiveTypes.Int64},
		{Name: "distance", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(d, nil)
	return b.NewRecordBatch()
}

func TestResultWriterAtomic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallResultRecord(mem, []int64{1, 2}, []float64{0.5, 1.5})
	defer rec.Release()
	opt := WriteOptions{Allocator: mem}

	for _, format := range []string{outArrow, outArrows, outParquet, outCSV} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out."+format)

			// Abort leaves nothing.
			w, err := CreateResult(path, rec.Schema(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close after Abort: %v", err)
			}
			if err := w.Write(rec); err == nil {
				t.Fatal("Write after Abort succeeded")
			}
			dirHoldsOnly(t, dir)

			// A failed Write, then Abort, leaves nothing.
			w, err = CreateResult(path, rec.Schema(), opt)
			if err != nil {
				t.Fatal(err)
			}
			other := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{rec.Column(0)}, rec.NumRows())
			werr := w.Write(other)
			other.Release()
			if werr == nil {
				t.Fatal("Write of a record of another schema succeeded")
			}
			if !strings.HasPrefix(werr.Error(), "arrowio: ") || !strings.Contains(werr.Error(), path) {
				t.Fatalf("error %q lacks the prefix or the path", werr)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			dirHoldsOnly(t, dir)

			// An existing file is replaced on Close only.
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			w, err = CreateResult(path, rec.Schema(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Fatalf("path changed before Close: %q", got)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 2 || !strings.HasPrefix(entries[0].Name(), ".out."+format+".tmp-") {
				t.Fatalf("want the file and one temporary file, got %v", entries)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort after Close: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close after Close: %v", err)
			}
			dirHoldsOnly(t, dir, "out."+format)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != w.BytesWritten() {
				t.Fatalf("BytesWritten %d, file size %d", w.BytesWritten(), fi.Size())
			}
			got := readBackFile(t, path, format, mem)
			want := [][]outCell{{cellOf("1"), cellOf("0.5")}, {cellOf("2"), cellOf("1.5")}}
			if format == outCSV {
				want = append([][]outCell{{cellOf("source"), cellOf("distance")}}, want...)
			}
			assertCellRows(t, got.rows, want)
		})
	}
}

func TestResultWriterStdout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := smallResultRecord(mem, []int64{7}, []float64{math.Inf(1)})
	defer rec.Release()

	var buf bytes.Buffer
	w, err := CreateResult("-", rec.Schema(), WriteOptions{Allocator: mem, Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if w.Format() != outArrows {
		t.Fatalf("format %s, want arrows", w.Format())
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != w.BytesWritten() {
		t.Fatalf("BytesWritten %d, wrote %d", w.BytesWritten(), buf.Len())
	}
	r, err := ipc.NewReader(&buf, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]outCell
	for r.Next() {
		rows = append(rows, recordCells(t, r.RecordBatch())...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Release()
	assertCellRows(t, rows, [][]outCell{{cellOf("7"), cellOf("+Inf")}})

	buf.Reset()
	w, err = CreateResult("-", rec.Schema(), WriteOptions{Allocator: mem, Stdout: &buf, Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "source,distance\n7,\n" {
		t.Fatalf("csv to stdout: %q", got)
	}

	// Abort on stdout writes nothing more: no end-of-stream marker.
	buf.Reset()
	w, err = CreateResult("-", rec.Schema(), WriteOptions{Allocator: mem, Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("aborted stream wrote %d bytes", buf.Len())
	}
}

func TestWriteOptionsErrors(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "source", Type: arrow.PrimitiveTypes.Int64}}, nil)
	matrix := ResultSchema(LayoutMatrix, &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1, 2}}, 1, false)
	// A list of scalars is one csv field (the path column); a list of
	// lists has no csv form.
	listSchema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int8))}}, nil)
	for _, tc := range []struct {
		name, path string
		schema     *arrow.Schema
		opt        WriteOptions
		want       string
	}{
		{"unknown extension", "out.xyz", schema, WriteOptions{}, "unknown output extension"},
		{"unknown format", "out.arrow", schema, WriteOptions{Format: "orc"}, "unknown output format"},
		{"gz csv", "out.csv.gz", schema, WriteOptions{}, "compressed text output"},
		{"tsv result", "out.tsv", schema, WriteOptions{}, "results are written as"},
		{"csv zstd", "out.csv", schema, WriteOptions{Compression: "zstd"}, "cannot be compressed"},
		{"bad compression", "out.parquet", schema, WriteOptions{Compression: "brotli"}, "unknown compression"},
		{"matrix csv without vertices", "out.csv", matrix, WriteOptions{}, "needs the vertices"},
		{"matrix csv wrong vertices", "out.csv", matrix, WriteOptions{Vertices: &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{1}}}, "2 columns but 1 vertices"},
		{"list csv", "out.csv", listSchema, WriteOptions{}, "cannot be written as csv"},
		{"missing dir", "nodir/sub/out.arrow", schema, WriteOptions{}, "nodir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.path)
			w, err := CreateResult(path, tc.schema, tc.opt)
			if err == nil {
				w.Abort()
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "arrowio: ") || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("error %q: want prefix, %q and the path", err, tc.want)
			}
			if errors.Is(err, os.ErrNotExist) && tc.name != "missing dir" {
				t.Fatal("unexpected not-exist")
			}
		})
	}
	dirHoldsOnly(t, dir)
}

func TestCompressionsReadBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ids := make([]int64, 5000)
	d := make([]float64, len(ids))
	want := make([][]outCell, len(ids))
	for i := range ids {
		ids[i] = int64(i * 3)
		d[i] = float64(i%17) / 4
		want[i] = []outCell{cellOf(strconv.FormatInt(ids[i], 10)), cellOf(strconv.FormatFloat(d[i], 'g', -1, 64))}
	}
	rec := smallResultRecord(mem, ids, d)
	defer rec.Release()
	dir := t.TempDir()
	for _, format := range []string{outArrow, outArrows, outParquet} {
		for _, comp := range []string{"", CompressionNone, CompressionZstd, CompressionLZ4} {
			t.Run(format+"/"+comp, func(t *testing.T) {
				path := filepath.Join(dir, "c."+format)
				w, err := CreateResult(path, rec.Schema(), WriteOptions{Allocator: mem, Compression: comp})
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := w.Write(rec); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got := readBackFile(t, path, format, mem)
				assertCellRows(t, got.rows, append(append(append([][]outCell{}, want...), want...), want...))
			})
		}
	}
}

// BenchmarkWriteResult writes pairs records (int64 ids, float32 distances)
// in every format and reports rows per second.
func BenchmarkWriteResult(b *testing.B) {
	const n, k = 1 << 14, 64
	sources := make([]graph.VertexID, k)
	for i := range sources {
		sources[i] = graph.VertexID(i * 5)
	}
	blk := graph.NewBlock(sources, n, graph.DistFloat32, false)
	d := graph.DistOf[float32](blk)
	for i := range d {
		d[i] = float32(i%4096) / 16
	}
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(i) * 13
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}
	dir := b.TempDir()
	for _, format := range []string{outArrow, outArrows, outParquet, outCSV} {
		for _, comp := range []string{"", CompressionZstd} {
			if format == outCSV && comp != "" {
				continue
			}
			b.Run(format+"/"+comp, func(b *testing.B) {
				mem := memory.NewGoAllocator()
				rb := NewResultBuilder(LayoutPairs, v, graph.DistFloat32, false, mem)
				rows := 0
				for b.Loop() {
					w, err := CreateResult(filepath.Join(dir, "bench."+format), rb.Schema(), WriteOptions{Allocator: mem, Compression: comp})
					if err != nil {
						b.Fatal(err)
					}
					err = rb.Block(blk, func(rec arrow.RecordBatch) error {
						rows += int(rec.NumRows())
						return w.Write(rec)
					})
					if err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "pairs/s")
			})
		}
	}
}

// TestCSVRowsOnEveryCore writes records large enough for several windows
// of chunks (pairs: 65,536 rows a chunk; matrix: about 1 MiB of text) on
// one core and on four, in both layouts and with unreachable cells: the
// files must be byte for byte the same, one line per row and the header.
func TestCSVRowsOnEveryCore(t *testing.T) {
	for _, c := range []struct {
		layout Layout
		n, k   int
		lines  int
	}{
		{LayoutPairs, 30011, 12, 0}, // lines: the reachable pairs, counted below
		{LayoutMatrix, 301, 1700, 1700},
	} {
		t.Run(string(c.layout), func(t *testing.T) {
			sources := make([]graph.VertexID, c.k)
			for i := range sources {
				sources[i] = graph.VertexID(i % c.n)
			}
			blk := graph.NewBlock(sources, c.n, graph.DistFloat64, false)
			d := graph.DistOf[float64](blk)
			reachable := 0
			for i := range d {
				if i%7 == 3 {
					d[i] = math.Inf(1)
				} else {
					d[i] = float64(i%1000) / 8
					reachable++
				}
			}
			want := c.lines
			if c.layout == LayoutPairs {
				want = reachable
			}
			ints := make([]int64, c.n)
			for i := range ints {
				ints[i] = int64(i)*3 - 7
			}
			v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}
			var files [2][]byte
			for f, procs := range []int{1, 4} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					path := filepath.Join(t.TempDir(), "rows.csv")
					writeBlockFile(t, path, c.layout, v, blk, mem)
					var err error
					if files[f], err = os.ReadFile(path); err != nil {
						t.Fatal(err)
					}
				}()
			}
			if !bytes.Equal(files[0], files[1]) {
				t.Fatalf("the file written on 4 cores (%d bytes) differs from the one on 1 (%d bytes)", len(files[1]), len(files[0]))
			}
			if got := bytes.Count(files[0], []byte{'\n'}); got != want+1 {
				t.Errorf("%d lines, want %d rows and the header", got, want)
			}
		})
	}
}

// writeBlockFile writes blk in layout to path, its format from the
// extension, through a ResultBuilder and CreateResult as `pathctl run` does.
func writeBlockFile(t testing.TB, path string, layout Layout, v *Vertices, blk *graph.Block, mem memory.Allocator) {
	t.Helper()
	rb := NewResultBuilder(layout, v, blk.Type, blk.Pred != nil, mem)
	w, err := CreateResult(path, rb.Schema(), WriteOptions{Allocator: mem, Vertices: v})
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Block(blk, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
