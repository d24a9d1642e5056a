package arrowio

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// hintTestRecords are batches of 3, 5 and 7 rows of (src int64, dst
// int64, weight int32).
func hintTestRecords(mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	var recs []arrow.RecordBatch
	for _, n := range []int{3, 5, 7} {
		b := array.NewRecordBuilder(mem, schema)
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int64Builder).Append(int64(i + 1))
			b.Field(2).(*array.Int32Builder).Append(int32(i + 2))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return schema, recs
}

// TestCheckFileBlocksRows: the rows an IPC file's batches declare, which
// the reader reserves its columns for, are the batches' lengths summed;
// and the file reads back whole.
func TestCheckFileBlocksRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := hintTestRecords(mem)
	defer releaseAll(recs)
	data := writeIPCFile(t, schema, recs)
	rows, err := checkFileBlocks(bytes.NewReader(data), int64(len(data)), 0)
	if err != nil || rows != 15 {
		t.Fatalf("checkFileBlocks: %d rows, %v; want 15", rows, err)
	}
	tbl, err := readSeekable(bytes.NewReader(data), int64(len(data)), FormatArrowFile, "hint.arrow", ReadOptions{Allocator: mem})
	if err != nil || tbl.Edges.Len() != 15 {
		t.Fatalf("read %v edges, %v; want 15", tbl, err)
	}
}

// TestStreamRowsHint: an IPC stream of known size holds at most size /
// (bytes of a row of its fixed-width columns) rows; a column of another
// width, or an unknown size, gives no hint.
func TestStreamRowsHint(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := hintTestRecords(mem)
	defer releaseAll(recs)
	data := writeIPCStream(t, schema, recs)
	hint := streamRowsHint(schema, int64(len(data)))
	if hint < 15 || hint != int64(len(data))/20 {
		t.Errorf("hint %d for %d bytes, want %d (20 bytes a row, at least 15)", hint, len(data), len(data)/20)
	}
	if h := streamRowsHint(schema, -1); h != 0 {
		t.Errorf("unknown size: hint %d, want 0", h)
	}
	text := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.BinaryTypes.String}, {Name: "dst", Type: arrow.BinaryTypes.String}}, nil)
	if h := streamRowsHint(text, 1<<20); h != 0 {
		t.Errorf("string columns: hint %d, want 0", h)
	}
	tbl, err := readStream(bytes.NewReader(data), FormatArrowStream, "hint.arrows", ReadOptions{Allocator: mem})
	if err != nil || tbl.Edges.Len() != 15 {
		t.Fatalf("read %v edges, %v; want 15", tbl, err)
	}
}

// TestChunkedMatchesReserved reads the same batches, some of them empty,
// with their rows unknown ahead (EdgesFromRecords: each batch's columns
// kept apart and joined at the end) and from an IPC file (columns reserved
// for the rows declared): the tables are the same, for integer and string
// ids and integer and float weights.
func TestChunkedMatchesReserved(t *testing.T) {
	e := logicalEdges{
		src:     []string{"5", "7", "5", "9", "11", "7", "13", "5", "9", "2"},
		dst:     []string{"7", "9", "11", "5", "13", "13", "2", "2", "7", "5"},
		weights: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
	}
	for _, idType := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String} {
		for _, wType := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, nil} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, idType, idType, wType, 3)
			// An empty batch between the others.
			empty := recs[0].NewSlice(0, 0)
			recs = append(recs[:2:2], append([]arrow.RecordBatch{empty}, recs[2:]...)...)
			rr, err := array.NewRecordReader(schema, recs)
			if err != nil {
				t.Fatal(err)
			}
			chunked, err := EdgesFromRecords(rr, "chunked", ReadOptions{})
			rr.Release()
			if err != nil {
				t.Fatal(err)
			}
			data := writeIPCFile(t, schema, recs)
			reserved, err := readSeekable(bytes.NewReader(data), int64(len(data)), FormatArrowFile, "reserved", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(chunked.Edges, chunked.Vertices) != fmt.Sprint(reserved.Edges, reserved.Vertices) || chunked.Edges.Len() != len(e.src) {
				t.Errorf("ids %s, weights %v: chunked %+v %+v, reserved %+v %+v", idType, wType, chunked.Edges, chunked.Vertices, reserved.Edges, reserved.Vertices)
			}
			if (wType != nil) != chunked.Edges.Weighted() {
				t.Errorf("ids %s, weights %v: weighted %v", idType, wType, chunked.Edges.Weighted())
			}
			releaseAll(recs)
			mem.AssertSize(t, 0)
		}
	}
}
