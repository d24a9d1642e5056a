package arrowio

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// randomRecords makes batches of the given sizes over schema's fields
// (ints, floats, strings), with nulls in the nullable ones, from seed.
func randomRecords(t testing.TB, schema *arrow.Schema, sizes []int, seed uint64) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []arrow.RecordBatch
	for _, n := range sizes {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i, f := range schema.Fields() {
			for range n {
				if f.Nullable && rng.IntN(5) == 0 {
					b.Field(i).AppendNull()
					continue
				}
				switch fb := b.Field(i).(type) {
				case *array.Int32Builder:
					fb.Append(rng.Int32N(1000))
				case *array.Int64Builder:
					fb.Append(rng.Int64N(1 << 40))
				case *array.Float64Builder:
					fb.Append(rng.Float64())
				case *array.StringBuilder:
					fb.Append(fmt.Sprintf("v%d", rng.IntN(100)))
				default:
					t.Fatalf("no values for %s", f.Type)
				}
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// newTestParquetWriter is newParquetWriter, or with serial pqarrow's
// writer it stands beside, of zstd row groups of rows rows.
func newTestParquetWriter(tb testing.TB, sink io.Writer, schema *arrow.Schema, rows int64, serial bool) recordWriter {
	newWriter := newParquetWriter
	if serial {
		newWriter = newSerialParquetWriter
	}
	w, err := newWriter(sink, schema, compress.Codecs.Zstd, rows, memory.DefaultAllocator)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// writeAllAndClose writes recs through w and closes it.
func writeAllAndClose(tb testing.TB, w recordWriter, recs []arrow.RecordBatch) {
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// encodeParquet writes recs through a writer made for schema and returns
// the file.
func encodeParquet(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch, rows int64, serial bool) []byte {
	var buf bytes.Buffer
	writeAllAndClose(t, newTestParquetWriter(t, &buf, schema, rows, serial), recs)
	return buf.Bytes()
}

// readParquetTable reads a Parquet file back with pqarrow, and its row
// groups' row counts.
func readParquetTable(t testing.TB, b []byte) (arrow.Table, []int64) {
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var groups []int64
	for g := range pf.NumRowGroups() {
		groups = append(groups, pf.RowGroup(g).NumRows())
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tbl, groups
}

// The columns encoded side by side give the table pqarrow's own writer
// gives, with its schema and metadata, in row groups of the same sizes,
// whatever the batches' sizes against the group's.
func TestParquetColumnsSideBySide(t *testing.T) {
	md := arrow.NewMetadata([]string{"pathctl.layout"}, []string{"pairs"})
	schemas := []*arrow.Schema{
		arrow.NewSchema([]arrow.Field{
			{Name: "source", Type: arrow.PrimitiveTypes.Int64},
			{Name: "target", Type: arrow.PrimitiveTypes.Int64},
			{Name: "distance", Type: arrow.PrimitiveTypes.Int32},
		}, &md),
		arrow.NewSchema([]arrow.Field{
			{Name: "vertex", Type: arrow.BinaryTypes.String},
			{Name: "distance", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "source", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "hops", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		}, nil),
	}
	for seed := range uint64(4) {
		for si, schema := range schemas {
			rng := rand.New(rand.NewPCG(seed, 3))
			var sizes []int
			for range 1 + rng.IntN(6) {
				sizes = append(sizes, rng.IntN(700))
			}
			rows := int64(1 + rng.IntN(500))
			t.Run(fmt.Sprintf("seed%d/schema%d", seed, si), func(t *testing.T) {
				recs := randomRecords(t, schema, sizes, seed)
				defer func() {
					for _, r := range recs {
						r.Release()
					}
				}()
				got, gotGroups := readParquetTable(t, encodeParquet(t, schema, recs, rows, false))
				want, wantGroups := readParquetTable(t, encodeParquet(t, schema, recs, rows, true))
				defer got.Release()
				defer want.Release()
				if !got.Schema().Equal(want.Schema()) {
					t.Fatalf("batches %v, groups of %d: schema\n%s\nwant\n%s", sizes, rows, got.Schema(), want.Schema())
				}
				if !array.TableEqual(got, want) {
					t.Fatalf("batches %v, groups of %d: tables differ", sizes, rows)
				}
				if fmt.Sprint(gotGroups) != fmt.Sprint(wantGroups) {
					t.Fatalf("batches %v, groups of %d: row groups %v, want %v", sizes, rows, gotGroups, wantGroups)
				}
			})
		}
	}
}

// Schemas with a column whose levels the side-by-side writer does not
// compute (a fixed-size list: the matrix layout) go through pqarrow's.
func TestParquetNestedSchemaIsSerial(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "source", Type: arrow.PrimitiveTypes.Int64},
		{Name: "distances", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int32)},
	}, nil)
	w, err := newParquetWriter(io.Discard, schema, compress.Codecs.Zstd, 10, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(serialParquetWriter); !ok {
		t.Fatalf("writer %T for a fixed-size list, want serialParquetWriter", w)
	}
	if !flatParquetSchema(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Uint32}}, nil)) {
		t.Fatal("a uint32 column is not flat")
	}
}

// A record of another schema is an error, and the writer writes nothing
// more after one.
func TestParquetWriterRefusesOtherSchema(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, nil)
	other := arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	w, err := newParquetWriter(io.Discard, schema, compress.Codecs.Zstd, 10, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	recs := randomRecords(t, other, []int{5}, 1)
	defer recs[0].Release()
	if err := w.Write(recs[0]); err == nil {
		t.Fatal("a record of another schema was written")
	}
	if err := w.Write(recs[0]); err == nil {
		t.Fatal("a second write was taken")
	}
}

// BenchmarkParquetPairs writes 8 million pairs rows (a source's run of
// targets and distances) as Parquet: columns side by side against
// pqarrow's serial writer.
func BenchmarkParquetPairs(b *testing.B) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "source", Type: arrow.PrimitiveTypes.Int64},
		{Name: "target", Type: arrow.PrimitiveTypes.Int64},
		{Name: "distance", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	const n = 4096
	var recs []arrow.RecordBatch
	rng := rand.New(rand.NewPCG(1, 2))
	for s := range 2048 {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for v := range n {
			bld.Field(0).(*array.Int64Builder).Append(int64(s))
			bld.Field(1).(*array.Int64Builder).Append(int64(v))
			bld.Field(2).(*array.Int32Builder).Append(rng.Int32N(2000))
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	for _, serial := range []bool{true, false} {
		b.Run(fmt.Sprintf("serial=%v", serial), func(b *testing.B) {
			b.SetBytes(int64(len(recs)) * n * 20)
			for b.Loop() {
				writeAllAndClose(b, newTestParquetWriter(b, io.Discard, schema, parquetGroupValues, serial), recs)
			}
		})
	}
}
