package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// trips is a timetable with a text column ("line", one cell empty) beside
// its one numeric column ("minutes"). Alexanderplatz -> Zoo is 2 hops
// through Potsdamer Platz (19 minutes) and 14 minutes along the S5 (5
// hops): counting hops gives another answer than the weights.
var trips = [][4]string{
	{"Alexanderplatz", "Hackescher Markt", "3", "S5"},
	{"Hackescher Markt", "Friedrichstraße", "2", "S5"},
	{"Friedrichstraße", "Hauptbahnhof", "3", ""},
	{"Hauptbahnhof", "Bellevue", "3", "S5"},
	{"Bellevue", "Zoo", "3", "S5"},
	{"Alexanderplatz", "Potsdamer Platz", "10", "U2"},
	{"Potsdamer Platz", "Zoo", "9", "U2"},
}

// writeTrips writes trips to path in the format its extension names:
// CSV or TSV text, or a Parquet or Arrow IPC file of utf8 ids, int64
// minutes and a nullable utf8 line.
func writeTrips(t *testing.T, path string) string {
	t.Helper()
	if sep := map[string]string{".csv": ",", ".tsv": "\t"}[filepath.Ext(path)]; sep != "" {
		lines := []string{strings.Join([]string{"from", "to", "minutes", "line"}, sep)}
		for _, r := range trips {
			lines = append(lines, strings.Join(r[:], sep))
		}
		return writeFile(t, filepath.Dir(path), filepath.Base(path), strings.Join(lines, "\n")+"\n")
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "from", Type: arrow.BinaryTypes.String}, {Name: "to", Type: arrow.BinaryTypes.String},
		{Name: "minutes", Type: arrow.PrimitiveTypes.Int64}, {Name: "line", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for _, r := range trips {
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
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch filepath.Ext(path) {
	case ".parquet":
		w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
		if err == nil {
			err = w.Write(rec)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	case ".arrow":
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
		if err == nil {
			err = w.Write(rec)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no writer for %s", path)
	}
	return path
}

// TestLoneNumericColumnIsTheWeightEveryFormat: `pathctl run trips.X
// --src-col from --dst-col to` takes "minutes" as the weight from CSV,
// TSV, Parquet and Arrow alike, says so on stderr, and every distance is
// a plain Dijkstra's over the minutes. The CSV and TSV readers counted
// hops (Alexanderplatz -> Zoo = 2 instead of 14).
func TestLoneNumericColumnIsTheWeightEveryFormat(t *testing.T) {
	dir := t.TempDir()
	index := map[string]int{}
	for _, r := range trips {
		for _, id := range r[:2] {
			if _, ok := index[id]; !ok {
				index[id] = len(index)
			}
		}
	}
	arcs := map[[2]int]float64{}
	for _, r := range trips {
		m, _ := strconv.ParseFloat(r[2], 64)
		arcs[[2]int{index[r[0]], index[r[1]]}] = m
	}
	want := map[string]string{}
	for s, si := range index {
		dist := dijkstraOracle(len(index), arcs, si)
		for v, vi := range index {
			if !math.IsInf(dist[vi], 1) {
				want[s+">"+v] = strconv.FormatFloat(dist[vi], 'f', -1, 64)
			}
		}
	}
	if want["Alexanderplatz>Zoo"] != "14" {
		t.Fatalf("oracle: Alexanderplatz -> Zoo = %s, want 14", want["Alexanderplatz>Zoo"])
	}
	for _, name := range []string{"trips.csv", "trips.tsv", "trips.parquet", "trips.arrow"} {
		t.Run(name, func(t *testing.T) {
			in := writeTrips(t, filepath.Join(dir, name))
			out := filepath.Join(dir, name+".out.csv")
			r := pathctl(t, nil, "run", in, "--src-col", "from", "--dst-col", "to", "--engine", "cpu", "-o", out)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, `pathctl: note: took column "minutes" as the edge weight`) {
				t.Errorf("stderr does not name the column taken:\n%s", r.stderr)
			}
			_, got := readCSVPairs(t, out)
			if len(got) != len(want) {
				t.Errorf("%d pairs, want %d", len(got), len(want))
			}
			for pair, d := range want {
				if g := got[pair]; len(g) == 0 || g[0] != d {
					t.Errorf("%s = %v, want %s", pair, g, d)
				}
			}
		})
	}
}
