package arrowio

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func readCSVString(t *testing.T, body string, opt ReadOptions) (*EdgeTable, error) {
	t.Helper()
	return ReadEdgesFrom(strings.NewReader(body), "g.csv", opt)
}

// A weight column that is not called "weight": a lone numeric column is
// taken and said; several, or one that turns out not to be numeric, are
// named in the note while distances count edges.
func TestWeightColumnGuess(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		opt         ReadOptions
		guessed     string
		ints        []int64
		noteHas     []string // "" note when empty
		noteMissing bool
	}{
		{name: "lone numeric", body: "src,dst,minutes\n1,2,5\n2,3,7\n",
			guessed: "minutes", ints: []int64{5, 7}, noteHas: []string{`"minutes"`, "took"}},
		{name: "lone text", body: "src,dst,label\n1,2,a\n2,3,b\n", noteMissing: true},
		{name: "lone, bad later", body: "src,dst,minutes\n1,2,5\n2,3,n/a\n",
			noteHas: []string{`"minutes"`, `line 3 holds "n/a"`, "count edges"}},
		{name: "several numeric", body: "src,dst,a,label,b\n1,2,5,x,6\n",
			noteHas: []string{`"a", "b"`, "count edges"}},
		{name: "pandas index", body: ",src,dst\n0,1,2\n1,2,3\n", noteMissing: true},
		{name: "pandas index and a weight", body: "Unnamed: 0,src,dst,minutes\n0,1,2,5\n", guessed: "minutes", ints: []int64{5}, noteHas: []string{`"minutes"`}},
		{name: "named weight", body: "src,dst,weight,minutes\n1,2,5,6\n", ints: []int64{5}, noteMissing: true},
		{name: "weight-col given", body: "src,dst,minutes\n1,2,5\n", opt: ReadOptions{WeightCol: "minutes"}, ints: []int64{5}, noteMissing: true},
		{name: "unweighted", body: "src,dst,minutes\n1,2,5\n", opt: ReadOptions{Unweighted: true}, noteMissing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readCSVString(t, tc.body, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got.WeightGuessed != tc.guessed {
				t.Errorf("WeightGuessed = %q, want %q", got.WeightGuessed, tc.guessed)
			}
			if !slices.Equal(got.Edges.IntWeights, tc.ints) {
				t.Errorf("weights = %v, want %v", got.Edges.IntWeights, tc.ints)
			}
			if tc.noteMissing && got.WeightNote != "" {
				t.Errorf("note %q, want none", got.WeightNote)
			}
			for _, s := range tc.noteHas {
				if !strings.Contains(got.WeightNote, s) {
					t.Errorf("note %q lacks %q", got.WeightNote, s)
				}
			}
		})
	}
}

func TestWeightColumnGuessRecords(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	read := func(fields []arrow.Field, cols ...arrow.Array) *EdgeTable {
		t.Helper()
		schema := arrow.NewSchema(fields, nil)
		rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
		for _, c := range cols {
			c.Release()
		}
		defer rec.Release()
		rr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		got, err := EdgesFromRecords(rr, "up", ReadOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ids := func(v ...string) arrow.Array { return idArray(t, mem, arrow.PrimitiveTypes.Int64, v) }
	got := read([]arrow.Field{{Name: "label", Type: arrow.BinaryTypes.String}, {Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64}, {Name: "cost", Type: arrow.PrimitiveTypes.Float32}},
		idArray(t, mem, arrow.BinaryTypes.String, []string{"x", "y"}), ids("1", "2"), ids("2", "3"),
		weightArray(t, mem, arrow.PrimitiveTypes.Float32, []float64{1.5, 2.5}))
	if got.WeightGuessed != "cost" || !slices.Equal(got.Edges.Float32Weights, []float32{1.5, 2.5}) || !strings.Contains(got.WeightNote, `"cost"`) {
		t.Errorf("lone float32 column: guessed %q, weights %v, note %q", got.WeightGuessed, got.Edges.Float32Weights, got.WeightNote)
	}
	got = read([]arrow.Field{{Name: "src", Type: arrow.PrimitiveTypes.Int64}, {Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "b", Type: arrow.PrimitiveTypes.Float64}},
		ids("1"), ids("2"), weightArray(t, mem, arrow.PrimitiveTypes.Int32, []float64{3}), weightArray(t, mem, arrow.PrimitiveTypes.Float64, []float64{4}))
	if got.WeightGuessed != "" || got.Edges.IntWeights != nil || got.Edges.Float64Weights != nil || !strings.Contains(got.WeightNote, `"a", "b"`) {
		t.Errorf("two numeric columns: guessed %q, note %q", got.WeightGuessed, got.WeightNote)
	}
}

func TestReadVerticesAndAddVertices(t *testing.T) {
	edges, err := readCSVString(t, "src,dst\n1,2\n5,6\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	verts, err := ReadVerticesFrom(strings.NewReader("vertex\n3\n1\n9\n3\n"), "v.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(verts.Ints, []int64{1, 3, 9}) {
		t.Fatalf("vertex table = %v, want [1 3 9]", verts.Ints)
	}
	if err := edges.AddVertices(verts); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(edges.Vertices.Ints, []int64{1, 2, 3, 5, 6, 9}) || edges.Edges.NumVertices != 6 {
		t.Fatalf("vertices = %v (n %d), want [1 2 3 5 6 9]", edges.Vertices.Ints, edges.Edges.NumVertices)
	}
	// 1->2 and 5->6 keep their external ids under the new numbering.
	for i, want := range [][2]int64{{1, 2}, {5, 6}} {
		s, d := edges.Vertices.Ints[edges.Edges.Src[i]], edges.Vertices.Ints[edges.Edges.Dst[i]]
		if s != want[0] || d != want[1] {
			t.Errorf("edge %d = %d->%d, want %d->%d", i, s, d, want[0], want[1])
		}
	}

	str, err := readCSVString(t, "src,dst\nb,d\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sv, err := ReadVerticesFrom(strings.NewReader("name,id\nx,a\ny,c\n"), "v.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := str.AddVertices(sv); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(str.Vertices.Strings, []string{"a", "b", "c", "d"}) || str.Vertices.Strings[str.Edges.Src[0]] != "b" || str.Vertices.Strings[str.Edges.Dst[0]] != "d" {
		t.Errorf("string vertices %v, edge %d->%d", str.Vertices.Strings, str.Edges.Src[0], str.Edges.Dst[0])
	}
	if err := edges.AddVertices(sv); err == nil || !strings.Contains(err.Error(), "strings") {
		t.Errorf("string vertex table on integer edges: %v", err)
	}
	// Integer-looking ids of a text vertex table join string edge ids as text.
	if err := str.AddVertices(&Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{7, 10}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(str.Vertices.Strings, []string{"10", "7", "a", "b", "c", "d"}) || str.Vertices.Strings[str.Edges.Src[0]] != "b" {
		t.Errorf("integer ids on string edges: %v", str.Vertices.Strings)
	}

	for _, bad := range []struct{ body, want string }{
		{"a,b\n1,2\n", `"vertex" or "id"`},
		{"vertex,x\n1,a\n,b\n", "null"},
	} {
		if _, err := ReadVerticesFrom(strings.NewReader(bad.body), "v.csv", ReadOptions{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("vertex table %q: error %v, want one naming %s", bad.body, err, bad.want)
		}
	}
	if _, err := ReadVerticesFrom(strings.NewReader("p sp 1 0\n"), "v.gr", ReadOptions{}); err == nil {
		t.Error("a DIMACS vertex table was accepted")
	}
}

func TestAddVerticesRefusesIDsOutsideTheType(t *testing.T) {
	edges := &EdgeTable{Name: "e", Vertices: &Vertices{Type: arrow.PrimitiveTypes.Int8, Ints: []int64{1, 2}}}
	edges.Edges.Src, edges.Edges.Dst, edges.Edges.NumVertices = []int32{0}, []int32{1}, 2
	err := edges.AddVertices(&Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{300}})
	if err == nil || !strings.Contains(err.Error(), "300") || !strings.Contains(err.Error(), "int8") {
		t.Errorf("id 300 into int8 ids: %v", err)
	}
}
