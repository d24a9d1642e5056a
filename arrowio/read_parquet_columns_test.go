package arrowio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestParquetColumnsInParallel checks that reading the columns side by side
// gives the batches that one reader of all the selected columns gives (its
// schema, column order, rows and values), over row groups and batches
// whose boundaries differ, string and integer columns, and that nothing is
// left allocated.
func TestParquetColumnsInParallel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := noteEdgeRecords(rand.New(rand.NewPCG(13, 14)), 5)
	defer releaseAll(recs)
	data := writeParquetRows(t, schema, recs, 777)
	open := func() (*file.Reader, *pqarrow.FileReader) { return openParquetBytes(t, data, mem, 1000) }
	fields := []int{3, 1, 2} // src, dst, weight: fieldIndices' order
	pf1, fr := open()
	defer pf1.Close()
	var leaves []int
	for _, idx := range fields {
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[idx])
	}
	want, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	pf2, fr2 := open()
	defer pf2.Close()
	got, err := newParquetColumns(context.Background(), fr2, fields)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !got.Schema().Equal(want.Schema()) {
		t.Fatalf("schema %s, want %s", got.Schema(), want.Schema())
	}
	batches := 0
	for want.Next() {
		if !got.Next() {
			t.Fatalf("batch %d: the parallel reader ended early: %v", batches, got.Err())
		}
		if !array.RecordEqual(got.RecordBatch(), want.RecordBatch()) {
			t.Fatalf("batch %d differs", batches)
		}
		batches++
	}
	if got.Next() || got.Err() != nil || want.Err() != nil {
		t.Errorf("after %d batches: more %v, errors %v and %v", batches, got.RecordBatch() != nil, got.Err(), want.Err())
	}
	if batches < 5 {
		t.Errorf("%d batches: the test wants several", batches)
	}
}

// noteEdgeRecords makes batches record batches of 1,000-1,500 edges with a
// string column before the ids and a float weight (note, dst, weight,
// src), drawn from rng.
func noteEdgeRecords(rng *rand.Rand, batches int) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "note", Type: arrow.BinaryTypes.String},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Float32},
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	var recs []arrow.RecordBatch
	for range batches {
		for range 1000 + rng.IntN(500) {
			bld.Field(0).(*array.StringBuilder).Append(fmt.Sprint("n", rng.IntN(100)))
			bld.Field(1).(*array.Int64Builder).Append(rng.Int64N(1 << 40))
			bld.Field(2).(*array.Float32Builder).Append(rng.Float32())
			bld.Field(3).(*array.Int64Builder).Append(rng.Int64N(300))
		}
		recs = append(recs, bld.NewRecordBatch())
	}
	return schema, recs
}

// openParquetBytes opens the Parquet file data with mem, for batches of
// batch rows.
func openParquetBytes(t *testing.T, data []byte, mem memory.Allocator, batch int64) (*file.Reader, *pqarrow.FileReader) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, mem)
	if err != nil {
		t.Fatal(err)
	}
	return pf, fr
}

// TestParquetReadsTheSameInParallel reads one Parquet file through
// ReadEdges with the columns side by side (GOMAXPROCS above 1) and one
// after the other (GOMAXPROCS 1): the tables are the same.
func TestParquetReadsTheSameInParallel(t *testing.T) {
	schema, recs := benchRecords(t, "sparse", 1<<15, 1<<12)
	defer releaseAll(recs)
	data := writeParquetRows(t, schema, recs, 5000)
	read := func(procs int) *EdgeTable {
		defer runtimeGOMAXPROCS(procs)()
		if got := readsColumnsInParallel(3); got != (procs > 1) {
			t.Fatalf("GOMAXPROCS %d: reads in parallel %v", procs, got)
		}
		tbl, err := ReadEdgesFrom(bytes.NewReader(data), "g.parquet", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	one, many := read(1), read(4)
	if fmt.Sprint(one.Edges) != fmt.Sprint(many.Edges) || fmt.Sprint(one.Vertices) != fmt.Sprint(many.Vertices) {
		t.Errorf("the tables read with the columns side by side and one after the other differ")
	}
	if one.Edges.Len() != 1<<15 {
		t.Errorf("%d edges, want %d", one.Edges.Len(), 1<<15)
	}
}

// runtimeGOMAXPROCS sets GOMAXPROCS to n and returns what sets it back.
func runtimeGOMAXPROCS(n int) func() {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}

// panickyReader is a column reader whose decoder panics, as arrow-go's do
// on some corrupt pages.
type panickyReader struct{ array.RecordReader }

func (panickyReader) Next() bool { panic("index out of range in a corrupt page") }

// TestParquetColumnPanicIsAnError checks that a decoder's panic in a
// column's goroutine becomes the error of a corrupt file, naming it, instead
// of ending the process; and that a reader's error names its column.
func TestParquetColumnPanicIsAnError(t *testing.T) {
	schema, recs := benchRecords(t, "dense", 100, 10)
	defer releaseAll(recs)
	one := func(col int) array.RecordReader {
		sub := arrow.NewSchema([]arrow.Field{schema.Field(col)}, nil)
		var out []arrow.RecordBatch
		for _, r := range recs {
			out = append(out, array.NewRecordBatch(sub, []arrow.Array{r.Column(col)}, r.NumRows()))
		}
		defer releaseAll(out)
		rr, err := array.NewRecordReader(sub, out)
		if err != nil {
			t.Fatal(err)
		}
		return rr
	}
	p := &parquetColumns{
		schema:  arrow.NewSchema([]arrow.Field{schema.Field(0), schema.Field(1)}, nil),
		readers: []array.RecordReader{one(0), panickyReader{one(1)}},
	}
	defer p.Release()
	_, err := EdgesFromRecords(p, "bad.parquet", ReadOptions{Unweighted: true})
	if err == nil || !strings.Contains(err.Error(), "arrowio: bad.parquet: corrupt or truncated file: index out of range") {
		t.Errorf("a column decoder's panic: %v", err)
	}

	p = &parquetColumns{
		schema:  arrow.NewSchema([]arrow.Field{schema.Field(0), schema.Field(1)}, nil),
		readers: []array.RecordReader{one(0), failingReader{one(1)}},
	}
	defer p.Release()
	_, err = EdgesFromRecords(p, "bad.parquet", ReadOptions{Unweighted: true})
	if err == nil || !strings.Contains(err.Error(), `column "dst": bad page header`) {
		t.Errorf("a column reader's error: %v", err)
	}
}

// failingReader is a column reader that fails at once.
type failingReader struct{ array.RecordReader }

func (failingReader) Next() bool { return false }
func (failingReader) Err() error { return errors.New("bad page header") }
