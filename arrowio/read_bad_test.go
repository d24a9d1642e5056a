package arrowio

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// column is one column of a hand-made bad table: JSON values (nulls
// allowed), or a builder function for values JSON cannot spell.
type column struct {
	name  string
	dt    arrow.DataType
	json  string
	build func(memory.Allocator) arrow.Array
}

// badRecords makes record batches of at most batch rows from whole columns.
func badRecords(t *testing.T, mem memory.Allocator, cols []column, batch int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, c := range cols {
		var arr arrow.Array
		if c.build != nil {
			arr = c.build(mem)
		} else {
			var err error
			arr, _, err = array.FromJSON(mem, c.dt, strings.NewReader(c.json))
			if err != nil {
				t.Fatal(err)
			}
		}
		defer arr.Release()
		fields = append(fields, arrow.Field{Name: c.name, Type: arr.DataType(), Nullable: true})
		arrs = append(arrs, arr)
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrs, -1)
	defer rec.Release()
	var recs []arrow.RecordBatch
	for lo := int64(0); lo < rec.NumRows(); lo += int64(batch) {
		recs = append(recs, rec.NewSlice(lo, min(rec.NumRows(), lo+int64(batch))))
	}
	return schema, recs
}

func floatColumn(name string, vals ...float64) column {
	return column{name: name, build: func(mem memory.Allocator) arrow.Array {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}}
}

func ints(dt arrow.DataType, name, json string) column { return column{name: name, dt: dt, json: json} }

var (
	i64 = arrow.PrimitiveTypes.Int64
	u64 = arrow.PrimitiveTypes.Uint64
	utf = arrow.BinaryTypes.String
)

func TestReadBadColumnar(t *testing.T) {
	seven := "[1,2,3,4,5,6,7]"
	cases := []struct {
		name  string
		cols  []column
		opt   ReadOptions
		limit int // maxVertexCount for the case; 0 keeps it
		want  []string
	}{
		{name: "missing-src", cols: []column{ints(i64, "from", seven), ints(i64, "dst", seven)},
			want: []string{`no column "src"`, `"from"`, `"dst"`}},
		{name: "missing-custom-dst", cols: []column{ints(i64, "src", seven), ints(i64, "dst", seven)}, opt: ReadOptions{DstCol: "to"},
			want: []string{`no column "to"`, `columns: "src", "dst"`}},
		{name: "missing-named-weight", cols: []column{ints(i64, "src", seven), ints(i64, "dst", seven)}, opt: ReadOptions{WeightCol: "cost"},
			want: []string{`no weight column "cost"`}},
		{name: "float-ids", cols: []column{floatColumn("src", 1, 2), floatColumn("dst", 1, 2)},
			want: []string{`column "src"`, "float64", "integers", "strings"}},
		{name: "string-weights", cols: []column{ints(i64, "src", "[1]"), ints(i64, "dst", "[2]"), ints(utf, "weight", `["x"]`)},
			want: []string{`column "weight"`, "utf8", "weights must be"}},
		{name: "int-and-string-ids", cols: []column{ints(i64, "src", "[1]"), ints(utf, "dst", `["a"]`)},
			want: []string{`"src"`, `"dst"`, "int64", "utf8", "both integers or both strings"}},
		{name: "null-dst", cols: []column{ints(i64, "src", seven), ints(i64, "dst", "[1,2,3,4,5,null,7]")},
			want: []string{`column "dst" row 5: null id`}},
		{name: "null-string-src", cols: []column{ints(utf, "src", `["a","b","c",null]`), ints(utf, "dst", `["a","b","c","d"]`)},
			want: []string{`column "src" row 3: null id`}},
		{name: "null-weight", cols: []column{ints(i64, "src", seven), ints(i64, "dst", seven), ints(i64, "weight", "[1,2,3,4,null,6,7]")},
			want: []string{`column "weight" row 4: null weight`}},
		{name: "nan-weight", cols: []column{ints(i64, "src", "[1,2,3]"), ints(i64, "dst", "[1,2,3]"), floatColumn("weight", 1, 2, math.NaN())},
			want: []string{`column "weight" row 2: weight NaN is not finite`}},
		{name: "inf-weight", cols: []column{ints(i64, "src", "[1,2,3]"), ints(i64, "dst", "[1,2,3]"), floatColumn("weight", math.Inf(-1), 2, 3)},
			want: []string{`column "weight" row 0: weight -Inf is not finite`}},
		{name: "float16-inf-weight", cols: []column{ints(i64, "src", "[1,2]"), ints(i64, "dst", "[1,2]"), {name: "weight", build: func(mem memory.Allocator) arrow.Array {
			b := array.NewFloat16Builder(mem)
			defer b.Release()
			b.AppendValues([]float16.Num{float16.New(1), float16.New(float32(math.Inf(1)))}, nil)
			return b.NewArray()
		}}}, want: []string{`column "weight" row 1: weight +Inf is not finite`}},
		{name: "uint64-weight-too-big", cols: []column{ints(i64, "src", "[1,2]"), ints(i64, "dst", "[1,2]"), ints(u64, "weight", "[1,18446744073709551615]")},
			want: []string{`column "weight" row 1: weight 18446744073709551615 is above the int64 maximum`}},
		{name: "uint64-id-with-signed", cols: []column{ints(u64, "src", "[1,9223372036854775808]"), ints(i64, "dst", "[1,2]")},
			want: []string{`column "src" row 1: id 9223372036854775808 does not fit int64`}},
		{name: "too-many-dense-ints", limit: 5, cols: []column{ints(i64, "src", seven), ints(i64, "dst", "[1,1,1,1,1,1,1]")},
			want: []string{`column "src" row 5: more than 5 distinct vertices`}},
		{name: "too-many-sparse-ints", limit: 5, cols: []column{ints(i64, "src", "[1,1,1,1,1,1,1]"), ints(i64, "dst", "[1,-9000000000000,2,3,3,9000000000000,7]")},
			want: []string{`column "dst" row 6: more than 5 distinct vertices`}},
		{name: "too-many-strings", limit: 3, cols: []column{ints(utf, "src", `["a","b","a","a"]`), ints(utf, "dst", `["a","c","a","d"]`)},
			want: []string{`column "dst" row 3: more than 3 distinct vertices`}},
	}
	for _, c := range cases {
		for _, enc := range encodings {
			t.Run(c.name+"/"+enc.name, func(t *testing.T) {
				if c.limit > 0 {
					defer func(old int) { maxVertexCount = old }(maxVertexCount)
					maxVertexCount = c.limit
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				schema, recs := badRecords(t, mem, c.cols, 2) // rows cross batches
				defer releaseAll(recs)
				var data []byte
				if enc.data != nil {
					data = enc.data(t, schema, recs)
				}
				opt := c.opt
				opt.Allocator = mem
				_, err := readEncoded(t, enc.name, schema, recs, data, enc.ext, opt)
				fileName := "edges" + enc.ext
				if enc.name == "records" {
					fileName = "upload"
				}
				assertError(t, err, append([]string{fileName}, c.want...)...)
			})
		}
	}
}

func assertError(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", want)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "arrowio: ") || strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line prefixed \"arrowio: \"", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
}

// TestReadCorruptFiles cuts and scrambles valid files: the readers must
// return an error naming the file, release everything, and never panic.
func TestReadCorruptFiles(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := randomIntIDs(newRand(5), i64, 100, 30)
	e.weights = randomWeights(newRand(6), i64, 100)
	schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, i64, i64, i64, 25)
	defer releaseAll(recs)
	for _, enc := range encodings[1:] {
		data := enc.data(t, schema, recs)
		for _, cut := range []int{0, 3, len(data) / 3, len(data) / 2, len(data) - 9, len(data) - 1} {
			name := "cut" + enc.ext
			_, err := ReadEdges(writeTemp(t, name, data[:cut]), ReadOptions{Allocator: mem})
			assertError(t, err, name)
		}
	}
	// The text formats report where they stopped.
	gr := []byte("p sp 3 2\na 1 2 5\na 2 3 7\n")
	_, err := ReadEdges(writeTemp(t, "t.gr.gz", gzipped(t, gr)[:20]), ReadOptions{})
	assertError(t, err, "t.gr.gz")
	_, err = ReadEdges(writeTemp(t, "t.gr", gr[:len(gr)-8]), ReadOptions{})
	assertError(t, err, "t.gr", "line 1", "announces 2 arcs but 1")
}

func TestReadBadText(t *testing.T) {
	cases := []struct {
		file string
		text string
		opt  ReadOptions
		want []string
	}{
		{"e.csv", "", ReadOptions{}, []string{"empty file", "header"}},
		{"e.csv", "from,to\n1,2\n", ReadOptions{}, []string{`no column "src"`, `columns: "from", "to"`}},
		{"e.csv", "src,dst\n1,2\n", ReadOptions{WeightCol: "w"}, []string{`no weight column "w"`}},
		{"e.csv", "src,dst,weight\n1,2,3\n2,3,4\n3,4,abc\n", ReadOptions{}, []string{`column "weight" line 4: weight "abc" is not a number`}},
		{"e.csv", "src,dst,weight\n1,2,3\n2,3,nan\n", ReadOptions{}, []string{`column "weight" line 3: weight "nan" is not finite`}},
		{"e.tsv", "src\tdst\tweight\n1\t2\t-Inf\n", ReadOptions{}, []string{`column "weight" line 2: weight "-Inf" is not finite`}},
		{"e.csv", "src,dst,weight\n1,2,\n", ReadOptions{}, []string{`column "weight" line 2: empty (null) weight`}},
		{"e.csv", "src,dst\n1,2\n,3\n", ReadOptions{}, []string{`column "src" line 3: empty (null) id`}},
		{"e.csv", "a,src,dst\n1,2,3\n1,2\n", ReadOptions{}, []string{"line 3", "wrong number of fields"}},
		{"e.csv", "src,dst,weight\n1,2,1e999\n", ReadOptions{}, []string{`column "weight" line 2: weight "1e999" is out of range`}},
		{"e.txt", "src,dst\n1,2\n", ReadOptions{}, []string{"e.txt", `unknown file extension ".txt"`}},
		{"e.csv", "src,dst\n1,2\n", ReadOptions{Format: "xml"}, []string{`unknown format "xml"`}},
		{"g.gr", "a 1 2 3\np sp 2 1\n", ReadOptions{}, []string{"line 1", "arc before the problem line"}},
		{"g.gr", "p sp 2 1\na 1 3 3\n", ReadOptions{}, []string{"line 2", `arc head "3" is not a vertex in 1..2`}},
		{"g.gr", "p sp 2 1\na 0 1 3\n", ReadOptions{}, []string{"line 2", `arc tail "0"`}},
		{"g.gr", "p sp 2 1\na 1 2 x\n", ReadOptions{}, []string{"line 2", `arc weight "x"`}},
		{"g.gr", "p sp 2 1\na 1 2 1.5\n", ReadOptions{}, []string{"line 2", `arc weight "1.5"`}},
		{"g.gr", "c only\nc comments\n", ReadOptions{}, []string{`no problem line`}},
		{"g.gr", "p sp 2 1\nx 1 2\n", ReadOptions{}, []string{"line 2", `unknown line type "x"`}},
		{"g.gr", "p sp 2\n", ReadOptions{}, []string{"line 1", `is not "p sp N M"`}},
		{"g.gr", "p sp 2 0\np sp 2 0\n", ReadOptions{}, []string{"line 2", "second problem line"}},
		{"g.gr", "p sp 2 1\na 1 2\n", ReadOptions{}, []string{"line 2", `is not "a U V W"`}},
		{"g.gr", "p sp 99999999999 0\n", ReadOptions{}, []string{"line 1", "more than", "int32"}},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+strings.Join(c.want, ";"), func(t *testing.T) {
			_, err := ReadEdges(writeTemp(t, c.file, []byte(c.text)), c.opt)
			assertError(t, err, append([]string{c.file}, c.want...)...)
		})
	}
	t.Run("csv-too-many-vertices", func(t *testing.T) {
		defer func(old int) { maxVertexCount = old }(maxVertexCount)
		maxVertexCount = 3
		_, err := ReadEdgesFrom(strings.NewReader("src,dst\na,b\nb,c\nc,d\n"), "v.csv", ReadOptions{})
		assertError(t, err, "v.csv", `column "dst" line 4: more than 3 distinct vertices`)
	})
	t.Run("csv-too-many-int-vertices", func(t *testing.T) {
		defer func(old int) { maxVertexCount = old }(maxVertexCount)
		maxVertexCount = 3
		_, err := ReadEdgesFrom(strings.NewReader("src,dst,note\n1,2,\"two\nlines\"\n2,3,x\n3,4,x\n"), "v.csv", ReadOptions{})
		assertError(t, err, "v.csv", `column "dst" line 5: more than 3 distinct vertices`)
	})
	t.Run("missing-file", func(t *testing.T) {
		_, err := ReadEdges("does-not-exist.parquet", ReadOptions{})
		assertError(t, err, "does-not-exist.parquet")
	})
}
