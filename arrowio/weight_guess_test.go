package arrowio

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// tripRows is a timetable with a text column ("line", one cell empty)
// beside its one numeric column ("minutes"): the lone numeric column is
// the weight in every format.
var tripRows = [][4]string{
	{"Alexanderplatz", "Hackescher Markt", "3", "S5"},
	{"Hackescher Markt", "Friedrichstraße", "2", "S5"},
	{"Friedrichstraße", "Hauptbahnhof", "3", ""},
	{"Hauptbahnhof", "Bellevue", "3", "S5"},
	{"Bellevue", "Zoo", "3", "S5"},
	{"Alexanderplatz", "Potsdamer Platz", "10", "U2"},
	{"Potsdamer Platz", "Zoo", "9", "U2"},
}

func tripText(sep string) string {
	var b strings.Builder
	b.WriteString(strings.Join([]string{"from", "to", "minutes", "line"}, sep) + "\n")
	for _, r := range tripRows {
		b.WriteString(strings.Join(r[:], sep) + "\n")
	}
	return b.String()
}

// tripRecord is tripRows as a record of utf8 ids, int64 minutes and a utf8
// line with a null where the CSV cell is empty.
func tripRecord(t *testing.T, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "from", Type: arrow.BinaryTypes.String}, {Name: "to", Type: arrow.BinaryTypes.String},
		{Name: "minutes", Type: arrow.PrimitiveTypes.Int64}, {Name: "line", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range tripRows {
		b.Field(0).(*array.StringBuilder).Append(r[0])
		b.Field(1).(*array.StringBuilder).Append(r[1])
		m, _ := strconv.ParseInt(r[2], 10, 64)
		b.Field(2).(*array.Int64Builder).Append(m)
		if r[3] == "" {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(r[3])
		}
	}
	return schema, []arrow.RecordBatch{b.NewRecordBatch()}
}

// TestLoneNumericBesideTextEveryFormat: the trips table read as CSV, TSV,
// Parquet, Arrow IPC file and stream, and as records (a Flight upload),
// takes "minutes" as the weight and says so. The CSV reader counted the
// text column as a second candidate and counted hops.
func TestLoneNumericBesideTextEveryFormat(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := tripRecord(t, mem)
	defer releaseAll(recs)
	opt := ReadOptions{SrcCol: "from", DstCol: "to", Allocator: mem}
	inputs := map[string][]byte{
		"trips.csv":     []byte(tripText(",")),
		"trips.tsv":     []byte(tripText("\t")),
		"trips.parquet": writeParquet(t, schema, recs),
		"trips.arrow":   writeIPCFile(t, schema, recs),
		"trips.arrows":  writeIPCStream(t, schema, recs),
	}
	want := make([]int64, len(tripRows))
	for i, r := range tripRows {
		want[i], _ = strconv.ParseInt(r[2], 10, 64)
	}
	check := func(name string, got *EdgeTable, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.WeightGuessed != "minutes" {
			t.Errorf("%s: WeightGuessed = %q, want \"minutes\" (note %q)", name, got.WeightGuessed, got.WeightNote)
		}
		if !strings.Contains(got.WeightNote, `took column "minutes" as the edge weight`) {
			t.Errorf("%s: note %q does not name the column taken", name, got.WeightNote)
		}
		if !slices.Equal(got.Edges.IntWeights, want) {
			t.Errorf("%s: weights %v, want %v", name, got.Edges.IntWeights, want)
		}
		if got.Vertices.Len() != 7 {
			t.Errorf("%s: %d vertices, want 7", name, got.Vertices.Len())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		got, err := ReadEdgesFrom(bytes.NewReader(inputs[name]), name, opt)
		check(name, got, err)
	}
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	got, err := EdgesFromRecords(rr, "upload", opt)
	check("records", got, err)
}

// TestCSVWeightGuessRule: a CSV column is numeric when it holds a number
// and every non-empty value parses as one; the lone numeric column is the
// weight whatever text columns stand beside it, and its empty or
// non-finite values are refused as weights are in every format.
func TestCSVWeightGuessRule(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		guessed    string
		ints       []int64
		floats     []float64
		noteHas    string // "" for no note
		errHas     string
	}{
		{name: "text first", body: "src,dst,line,minutes\n1,2,S5,3\n2,3,U2,4\n", guessed: "minutes", ints: []int64{3, 4}, noteHas: `took column "minutes"`},
		{name: "text after", body: "src,dst,minutes,line\n1,2,3,S5\n2,3,4,U2\n", guessed: "minutes", ints: []int64{3, 4}, noteHas: `took column "minutes"`},
		{name: "text that starts numeric", body: "src,dst,platform,minutes\n1,2,1,3.5\n2,3,2a,4\n", guessed: "minutes", floats: []float64{3.5, 4}, noteHas: `took column "minutes"`},
		{name: "empty text cells", body: "src,dst,minutes,line\n1,2,3,\n2,3,4,U2\n", guessed: "minutes", ints: []int64{3, 4}, noteHas: `took column "minutes"`},
		{name: "empty column", body: "src,dst,minutes,note\n1,2,3,\n2,3,4,\n", guessed: "minutes", ints: []int64{3, 4}, noteHas: `took column "minutes"`},
		{name: "two numeric beside text", body: "src,dst,a,line,b\n1,2,3,S5,4\n", noteHas: `the numeric columns "a", "b" are unused`},
		{name: "null in the lone numeric", body: "src,dst,minutes,line\n1,2,3,S5\n2,3,,S5\n", errHas: `column "minutes" line 3: empty (null) weight`},
		{name: "NaN in the lone numeric", body: "src,dst,minutes,line\n1,2,3,S5\n2,3,NaN,S5\n", errHas: `column "minutes" line 3: weight "NaN" is not finite`},
		{name: "numbers then text", body: "src,dst,minutes,line\n1,2,3,S5\n2,3,n/a,S5\n", noteHas: `column "minutes" was not taken as the edge weight (line 3 holds "n/a")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readCSVString(t, tc.body, ReadOptions{})
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.WeightGuessed != tc.guessed || !slices.Equal(got.Edges.IntWeights, tc.ints) || !slices.Equal(got.Edges.Float64Weights, tc.floats) {
				t.Errorf("guessed %q, weights %v %v; want %q, %v %v", got.WeightGuessed, got.Edges.IntWeights, got.Edges.Float64Weights, tc.guessed, tc.ints, tc.floats)
			}
			if (tc.noteHas == "") != (got.WeightNote == "") || !strings.Contains(got.WeightNote, tc.noteHas) {
				t.Errorf("note %q, want one with %q", got.WeightNote, tc.noteHas)
			}
		})
	}
}
