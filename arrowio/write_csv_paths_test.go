package arrowio

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestCSVPathColumn writes pairs with a path column as csv: the
// path is one field of its ids joined by ';', empty for a null path; an id
// holding ';', a quote or the separator is quoted so that a csv reader,
// then a split on ';' outside quotes, gives the ids back.
func TestCSVPathColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: ColSource, Type: arrow.BinaryTypes.String},
		{Name: ColTarget, Type: arrow.BinaryTypes.String},
		{Name: ColPath, Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	paths := [][]string{{"a"}, {"a", "b", "c"}, {"a", "x;y"}, {"a", `q"t`, "c,d"}, nil}
	for _, p := range paths {
		b.Field(0).(*array.StringBuilder).Append("a")
		b.Field(1).(*array.StringBuilder).Append("z")
		lb := b.Field(2).(*array.ListBuilder)
		if p == nil {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, id := range p {
			lb.ValueBuilder().(*array.StringBuilder).Append(id)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	write := func(format string) string {
		var buf bytes.Buffer
		w, err := CreateResult("-", schema, WriteOptions{Allocator: mem, Stdout: &buf, Format: format})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	want := "source,target,path\n" +
		"a,z,a\n" +
		"a,z,a;b;c\n" +
		`a,z,"a;""x;y"""` + "\n" +
		`a,z,"a;""q""""t"";c,d"` + "\n" +
		"a,z,\n"
	got := write("csv")
	if got != want {
		t.Fatalf("csv with paths:\n got %q\nwant %q", got, want)
	}
	// Read back: csv, then the path field split on ';' outside quotes.
	rows, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		field := rows[i+1][2]
		if p == nil {
			if field != "" {
				t.Errorf("row %d: a null path as %q", i, field)
			}
			continue
		}
		r := csv.NewReader(strings.NewReader(field))
		r.Comma, r.LazyQuotes = ';', false
		ids, err := r.Read()
		if err != nil || strings.Join(ids, "|") != strings.Join(p, "|") {
			t.Errorf("row %d: path field %q splits into %q (%v), want %q", i, field, ids, err, p)
		}
	}
}

// TestCSVPathColumnInts writes an int64 path column: plain ids joined by
// ';', unquoted.
func TestCSVPathColumnInts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: ColPath, Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	for _, p := range [][]int64{{1}, {1, 2, 40}, {-3, 5}} {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).AppendValues(p, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := CreateResult("-", schema, WriteOptions{Allocator: mem, Stdout: &buf, Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "path\n1\n1;2;40\n-3;5\n"; got != want {
		t.Errorf("csv of int64 paths: got %q, want %q", got, want)
	}
}
