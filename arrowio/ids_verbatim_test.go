package arrowio

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// spacedEdges has the ids "a", " a", "b" and "c": kept verbatim, the path
// a -> " a" -> b -> c (6) beats the edge a -> c (10); were " a" merged with
// "a", the distances from a would be b 2, c 5 over 3 vertices.
var spacedEdges = struct {
	src, dst []string
	weight   []int64
}{
	src:    []string{"a", " a", "b", "a"},
	dst:    []string{" a", "b", "c", "c"},
	weight: []int64{1, 2, 3, 10},
}

// TestIDsVerbatimEveryFormat reads one table with the ids "a" and " a" as
// CSV (quoted and unquoted " a"), TSV, Parquet and Arrow: every format has
// the same 4 vertices, the same edges and the same distances.
func TestIDsVerbatimEveryFormat(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// RFC 4180: a quoted field is verbatim, and so are the spaces of an
		// unquoted one; the weights' spaces are not part of the number.
		"quoted.csv":   writeTemp(t, "quoted.csv", []byte("src,dst,weight\na,\" a\",1\n\" a\",b, 2\nb,c,3 \na,c,10\n")),
		"unquoted.csv": writeTemp(t, "unquoted.csv", []byte("src,dst,weight\r\na, a,1\r\n a,b,2\r\nb,c,3\r\na,c,10\r\n")),
		"edges.tsv":    writeTemp(t, "edges.tsv", []byte("src\tdst\tweight\na\t a\t1\n a\tb\t 2\nb\tc\t3\na\tc\t10\n")),
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src, dst := stringArray(mem, spacedEdges.src), stringArray(mem, spacedEdges.dst)
	wb := array.NewInt64Builder(mem)
	wb.AppendValues(spacedEdges.weight, nil)
	weight := wb.NewArray()
	wb.Release()
	for _, name := range []string{"edges.parquet", "edges.arrow", "written.csv", "written.tsv"} {
		path := filepath.Join(dir, name)
		if err := WriteEdges(path, src, dst, weight, WriteOptions{Allocator: mem}); err != nil {
			t.Fatal(err)
		}
		files[name] = path
	}
	src.Release()
	dst.Release()
	weight.Release()

	wantVerts := []string{" a", "a", "b", "c"}
	wantDist := []int64{1, 0, 3, 6} // from "a", in vertex order
	for name, path := range files {
		tbl, err := ReadEdges(path, ReadOptions{Allocator: mem})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !tbl.Vertices.IsString() || !slices.Equal(tbl.Vertices.Strings, wantVerts) {
			t.Errorf("%s: vertices %q, want %q", name, tbl.Vertices.Strings, wantVerts)
			continue
		}
		if got := spacedDistances(t, tbl, "a"); !slices.Equal(got, wantDist) {
			t.Errorf("%s: distances from a %v, want %v", name, got, wantDist)
		}
		if _, err := tbl.Vertices.Lookup(" a"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func stringArray(mem memory.Allocator, vals []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

// spacedDistances is the oracle's distances from the vertex from.
func spacedDistances(t *testing.T, tbl *EdgeTable, from string) []int64 {
	t.Helper()
	g, err := graph.Build(&tbl.Edges, graph.BuildOptions{DistType: graph.DistInt64})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.Vertices.Lookup(from)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ref.Dijkstra[int64](g, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCSVIDTypeWithSpaces: a column whose every id is an integer once its
// spaces are trimmed is an integer column, " 7" and "7" one vertex; as soon
// as one id is not an integer, the ids are strings and kept verbatim.
func TestCSVIDTypeWithSpaces(t *testing.T) {
	for _, c := range []struct {
		name, text string
		ints       []int64
		strs       []string
	}{
		{"csv integers", "src,dst\n 7,8\n7 , 8\n\" 9\",007\n", []int64{7, 8, 9}, nil},
		{"tsv integers", "src\tdst\n 7\t8\n7 \t 8\n", []int64{7, 8}, nil},
		{"csv strings", "src,dst\n 7,8\n7,x\n", nil, []string{" 7", "7", "8", "x"}},
		{"csv strings first", "src,dst\nx, 7\n7,8\n", nil, []string{" 7", "7", "8", "x"}},
		{"csv spaces only", "src,dst\n1, \n", nil, []string{" ", "1"}},
	} {
		ext := ".csv"
		if strings.HasPrefix(c.name, "tsv") {
			ext = ".tsv"
		}
		tbl, err := ReadEdgesFrom(strings.NewReader(c.text), "e"+ext, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		v := tbl.Vertices
		if c.ints != nil {
			if !arrow.TypeEqual(v.Type, arrow.PrimitiveTypes.Int64) || !slices.Equal(v.Ints, c.ints) {
				t.Errorf("%s: vertices %v %v %q, want int64 %v", c.name, v.Type, v.Ints, v.Strings, c.ints)
			}
			continue
		}
		if !v.IsString() || !slices.Equal(v.Strings, c.strs) {
			t.Errorf("%s: vertices %v %v %q, want strings %q", c.name, v.Type, v.Ints, v.Strings, c.strs)
		}
	}
}

// TestCSVQuoteAfterSpace: RFC 4180 has no field ` "b"` (a space, then a
// quote); the error says where a quoted field starts.
func TestCSVQuoteAfterSpace(t *testing.T) {
	_, err := ReadEdgesFrom(strings.NewReader("src,dst\na, \"b\"\n"), "e.csv", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "a quoted field starts right after the delimiter") {
		t.Fatalf("got %v", err)
	}
}

// TestCSVVertexTableVerbatim: a CSV vertex table keeps its ids as the
// edges do, so " a" is a vertex beside "a".
func TestCSVVertexTableVerbatim(t *testing.T) {
	v, err := ReadVerticesFrom(strings.NewReader("vertex\na\n\" a\"\n b\n"), "v.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{" a", " b", "a"}; !slices.Equal(v.Strings, want) {
		t.Fatalf("vertices %q, want %q", v.Strings, want)
	}
}

// TestReadIDList: one id per line exactly as written; only "\n" or "\r\n"
// is removed, the final newline adds no id, an empty line is the id "".
func TestReadIDList(t *testing.T) {
	long := strings.Repeat("x", maxTextLine)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{" a\na \n", []string{" a", "a "}},
		{"a\r\n b\r\n", []string{"a", " b"}},
		{"\n", []string{""}},
		{"a\n\nb\n", []string{"a", "", "b"}},
		{"a\n\n", []string{"a", ""}},
		{"a\r", []string{"a\r"}},
		{"a\rb\n", []string{"a\rb"}},
		{"\t,x\n", []string{"\t,x"}},
		{long + "\r\n" + long, []string{long, long}},
	} {
		got, err := ReadIDList(strings.NewReader(c.text))
		if err != nil {
			t.Errorf("%.20q: %v", c.text, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%.20q: got %.40q, want %.40q", c.text, got, c.want)
		}
	}
	for _, text := range []string{"a\n" + long + "x\n", "a\n" + long + "x", "a\n" + long + "x\r\n", "a\n" + long + strings.Repeat("y", 3<<20)} {
		_, err := ReadIDList(strings.NewReader(text))
		if err == nil || err.Error() != "arrowio: line 2 is longer than 1048576 bytes (1 MiB), the limit of a line of an id list" {
			t.Errorf("line over 1 MiB: %v", err)
		}
	}
}

// TestSameColumnRefused: src equal to dst, or the weight equal to an id
// column, is refused in every format before anything is read, with an
// error matching ErrSameColumn that names both options.
func TestSameColumnRefused(t *testing.T) {
	csvFile := writeTemp(t, "e.csv", []byte("src,dst,weight\n1,2,3\n"))
	mem := memory.NewGoAllocator()
	src, dst := stringArray(mem, []string{"a"}), stringArray(mem, []string{"b"})
	defer src.Release()
	defer dst.Release()
	dir := t.TempDir()
	files := []string{csvFile}
	for _, name := range []string{"e.parquet", "e.arrow", "e.tsv"} {
		path := filepath.Join(dir, name)
		if err := WriteEdges(path, src, dst, nil, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	for _, c := range []struct {
		opt   ReadOptions
		words []string
	}{
		{ReadOptions{SrcCol: "src", DstCol: "src"}, []string{"(--src-col, --dst-col) are both \"src\"", "self-loop"}},
		{ReadOptions{DstCol: "src"}, []string{"(--src-col, --dst-col) are both \"src\""}},
		{ReadOptions{SrcCol: "dst"}, []string{"(--src-col, --dst-col) are both \"dst\""}},
		{ReadOptions{WeightCol: "src"}, []string{"(--src-col, --weight-col) are both \"src\"", "weights"}},
		{ReadOptions{DstCol: "to", WeightCol: "to"}, []string{"(--dst-col, --weight-col) are both \"to\""}},
	} {
		for _, f := range files {
			_, err := ReadEdges(f, c.opt)
			if !errors.Is(err, ErrSameColumn) {
				t.Errorf("%s %+v: %v, want ErrSameColumn", filepath.Base(f), c.opt, err)
				continue
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s %+v: %q lacks %q", filepath.Base(f), c.opt, err, w)
				}
			}
		}
		if _, err := ReadEdgesFrom(strings.NewReader("src,dst\n1,2\n"), "e.csv", c.opt); !errors.Is(err, ErrSameColumn) {
			t.Errorf("ReadEdgesFrom %+v: %v, want ErrSameColumn", c.opt, err)
		}
		// The Flight service's uploads.
		schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.BinaryTypes.String}, {Name: "dst", Type: arrow.BinaryTypes.String}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{src, dst}, 1)
		rr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := EdgesFromRecords(rr, "upload", c.opt); !errors.Is(err, ErrSameColumn) {
			t.Errorf("EdgesFromRecords %+v: %v, want ErrSameColumn", c.opt, err)
		}
		rr.Release()
	}
	// Options naming distinct columns read as before.
	if _, err := ReadEdges(csvFile, ReadOptions{SrcCol: "dst", DstCol: "src", WeightCol: "weight"}); err != nil {
		t.Error(err)
	}
}
