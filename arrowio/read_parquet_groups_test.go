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
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestParquetRowGroupsInParallel checks that reading the row groups side
// by side gives the rows that one reader of all the selected columns gives
// (its schema, column order and values, in order), over row groups of
// several batches and string, integer and float columns; that a read
// stopped after its first batch, with row groups read ahead, and a read
// to the end leave nothing allocated.
func TestParquetRowGroupsInParallel(t *testing.T) {
	defer runtimeGOMAXPROCS(4)()
	schema, recs := noteEdgeRecords(rand.New(rand.NewPCG(15, 16)), 6)
	defer releaseAll(recs)
	data := writeParquetRows(t, schema, recs, 1300)
	fields := []int{3, 1, 2} // src, dst, weight: fieldIndices' order
	open := func(mem memory.Allocator) (*file.Reader, *pqarrow.FileReader) {
		return openParquetBytes(t, data, mem, 500)
	}
	// rows reads every batch of rr into one table's columns.
	rows := func(rr array.RecordReader) arrow.Table {
		var batches []arrow.RecordBatch
		for rr.Next() {
			rec := rr.RecordBatch()
			rec.Retain()
			batches = append(batches, rec)
		}
		if rr.Err() != nil {
			t.Fatal(rr.Err())
		}
		defer releaseAll(batches)
		return array.NewTableFromRecords(rr.Schema(), batches)
	}
	pf1, fr := open(memory.DefaultAllocator)
	defer pf1.Close()
	if pf1.NumRowGroups() < 5 {
		t.Fatalf("%d row groups: the test wants several", pf1.NumRowGroups())
	}
	var leaves []int
	for _, idx := range fields {
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[idx])
	}
	plain, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Release()
	want := rows(plain)
	defer want.Release()

	for _, stopAfter := range []int{0, 1} {
		t.Run(fmt.Sprintf("stop=%d", stopAfter), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			pf, fr := open(mem)
			defer pf.Close()
			got, err := newParquetGroups(context.Background(), fr, fields, pf.NumRowGroups(), 3)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if !got.Schema().Equal(want.Schema()) {
				t.Fatalf("schema %s, want %s", got.Schema(), want.Schema())
			}
			if stopAfter > 0 {
				if !got.Next() || got.RecordBatch().NumRows() == 0 {
					t.Fatalf("no first batch: %v", got.Err())
				}
				return // Release with row groups read ahead
			}
			tbl := rows(got)
			defer tbl.Release()
			if tbl.NumRows() != want.NumRows() {
				t.Fatalf("%d rows, want %d", tbl.NumRows(), want.NumRows())
			}
			for c := range int(want.NumCols()) {
				if !array.ChunkedEqual(tbl.Column(c).Data(), want.Column(c).Data()) {
					t.Fatalf("column %q differs", want.Schema().Field(c).Name)
				}
			}
		})
	}
}

// TestParquetRowGroupFaults fails one column of one row group of a read
// of many (readGroupFault): a decoder's panic there must come back as the
// error of a corrupt file, naming it, and a reader's error must name the
// row group and the column; neither may leave anything allocated.
func TestParquetRowGroupFaults(t *testing.T) {
	defer runtimeGOMAXPROCS(4)()
	t.Cleanup(func() { readGroupFault = nil })
	schema, recs := benchRecords(t, "sparse", 1<<13, 1<<10)
	defer releaseAll(recs)
	data := writeParquetRows(t, schema, recs, 1000)
	for _, c := range []struct {
		fault func() error
		want  string
	}{
		{func() error { panic("index out of range in a corrupt page") }, "arrowio: g.parquet: corrupt or truncated file: index out of range"},
		{func() error { return errors.New("bad page header") }, `row group 5, column "dst": bad page header`},
	} {
		readGroupFault = func(g, col int) error {
			if g == 5 && col == 1 {
				return c.fault()
			}
			return nil
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, err := ReadEdgesFrom(bytes.NewReader(data), "g.parquet", ReadOptions{Allocator: mem})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one containing %q", err, c.want)
		}
		mem.AssertSize(t, 0)
	}
}

// TestParquetRowGroupsCorrupt reads a Parquet file of many row groups
// with bytes of its pages overwritten at random places (seeded): a read
// may fail or, where the bytes still decode, succeed, but it must return.
func TestParquetRowGroupsCorrupt(t *testing.T) {
	defer runtimeGOMAXPROCS(4)()
	schema, recs := benchRecords(t, "sparse", 1<<13, 1<<10)
	defer releaseAll(recs)
	data := writeParquetRows(t, schema, recs, 1000)
	rng := rand.New(rand.NewPCG(17, 18))
	failed := 0
	for range 200 {
		bad := bytes.Clone(data)
		at := 4 + rng.IntN(len(bad)*3/4) // pages, not the footer
		for i := range 8 {
			if at+i < len(bad) {
				bad[at+i] = byte(rng.IntN(256))
			}
		}
		if _, err := ReadEdgesFrom(bytes.NewReader(bad), "bad.parquet", ReadOptions{}); err != nil {
			failed++
		}
	}
	t.Logf("%d of 200 corrupt files refused", failed)
	if failed == 0 {
		t.Error("no corrupt file was refused")
	}
}

// TestReadsRowGroupsInParallel checks when a Parquet read takes
// parquetGroups and how far it reads ahead: several row groups, none above
// parquetGroupMaxBytes, more than one CPU; ahead at most GOMAXPROCS and
// parquetAheadBytes' worth, and at least one.
func TestReadsRowGroupsInParallel(t *testing.T) {
	defer runtimeGOMAXPROCS(4)()
	mb := int64(1 << 20)
	for _, c := range []struct {
		sizes []int64
		ahead int
		ok    bool
	}{
		{[]int64{24 * mb}, 0, false},
		{[]int64{24 * mb, 24 * mb}, 4, true},
		{[]int64{24 * mb, 100 * mb}, 0, false},
		{[]int64{64 * mb, 64 * mb, 10 * mb}, 4, true},
		{[]int64{60 * mb, 0}, 4, true},
		{[]int64{0, 0}, 4, true},
	} {
		if ahead, ok := readsRowGroupsInParallel(c.sizes); ahead != c.ahead || ok != c.ok {
			t.Errorf("sizes %v: ahead %d, %v; want %d, %v", c.sizes, ahead, ok, c.ahead, c.ok)
		}
	}
	runtime.GOMAXPROCS(16)
	if ahead, ok := readsRowGroupsInParallel([]int64{64 * mb, 64 * mb}); ahead != 4 || !ok {
		t.Errorf("16 CPUs, row groups of 64 MiB: ahead %d, %v; want 4 (256 MiB)", ahead, ok)
	}
	runtime.GOMAXPROCS(1)
	if _, ok := readsRowGroupsInParallel([]int64{mb, mb}); ok {
		t.Error("one CPU reads row groups side by side")
	}
}
