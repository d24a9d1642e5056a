package arrowio

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// delimitedText writes e as CSV (comma) or TSV (tab) with a header and an
// unrelated first column.
func (e logicalEdges) delimitedText(t testing.TB, comma rune, names [3]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = comma
	header := []string{"note", names[0], names[1]}
	if e.weights != nil {
		header = append(header, names[2])
	}
	rows := [][]string{header}
	for i := range e.src {
		row := []string{"x" + strconv.Itoa(i), e.src[i], e.dst[i]}
		if e.weights != nil {
			row = append(row, strconv.FormatFloat(e.weights[i], 'g', -1, 64))
		}
		rows = append(rows, row)
	}
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, data []byte) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// textWeightKind is what the text readers make of weights: int64 when all
// are integers.
func (e logicalEdges) textWeightKind() string {
	if e.weights == nil {
		return "none"
	}
	for _, w := range e.weights {
		if w != float64(int64(w)) {
			return "float64"
		}
	}
	return "int"
}

func TestReadDelimitedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ints := randomIntIDs(rng, arrow.PrimitiveTypes.Int64, 60, 40)
	ints.weights = randomWeights(rng, arrow.PrimitiveTypes.Int32, 60)
	strs := randomStringIDs(rng, 60, 40)
	for i := range strs.src { // an empty field is a null id in text
		strs.src[i] = strings.Replace(strs.src[i], "", "v", 1)
		strs.dst[i] = strings.Replace(strs.dst[i], "", "v", 1)
	}
	strs.src[3] = `quoted, "with" comma`
	strs.weights = randomWeights(rng, arrow.PrimitiveTypes.Float64, 60)
	strs.weights[0] = 0.125 // at least one non-integer
	dense := randomIntIDs(rng, arrow.PrimitiveTypes.Uint16, 500, 300)
	// Integers first, a string id late: the ids are strings, and integer
	// texts stay what they were.
	late := randomIntIDs(rng, arrow.PrimitiveTypes.Int16, 30, 20)
	late.dst[25] = "7a"
	late.src[2], late.dst[2] = "7", "007"
	// Integer weights first, a fraction late: every weight is float64.
	lateFloat := randomIntIDs(rng, arrow.PrimitiveTypes.Int8, 30, 20)
	lateFloat.weights = randomWeights(rng, arrow.PrimitiveTypes.Int16, 30)
	lateFloat.weights[29] = 2.5
	empty := logicalEdges{weights: []float64{}}

	cases := []struct {
		name   string
		file   string
		e      logicalEdges
		comma  rune
		idType arrow.DataType
		names  [3]string
		opt    ReadOptions
		pack   func(testing.TB, []byte) []byte
	}{
		{name: "int-ids", file: "e.csv", e: ints, comma: ',', idType: arrow.PrimitiveTypes.Int64},
		{name: "string-ids-tsv", file: "e.tsv", e: strs, comma: '\t', idType: arrow.BinaryTypes.String},
		{name: "dense-gz", file: "e.csv.gz", e: dense, comma: ',', idType: arrow.PrimitiveTypes.Int64, pack: gzipped},
		{name: "strings-zst", file: "e.tsv.zst", e: strs, comma: '\t', idType: arrow.BinaryTypes.String, pack: zstded},
		{name: "late-string", file: "e.csv", e: late, comma: ',', idType: arrow.BinaryTypes.String},
		{name: "late-float", file: "e.csv", e: lateFloat, comma: ',', idType: arrow.PrimitiveTypes.Int64},
		{name: "custom-names", file: "e.csv", e: ints, comma: ',', idType: arrow.PrimitiveTypes.Int64,
			names: [3]string{"a", "b", "len"}, opt: ReadOptions{SrcCol: "a", DstCol: "b", WeightCol: "len"}},
		{name: "unweighted-option", file: "e.csv", e: ints, comma: ',', idType: arrow.PrimitiveTypes.Int64, opt: ReadOptions{Unweighted: true}},
		{name: "no-weight-column", file: "e.csv", e: logicalEdges{src: ints.src, dst: ints.dst}, comma: ',', idType: arrow.PrimitiveTypes.Int64},
		{name: "header-only", file: "e.csv", e: empty, comma: ',', idType: arrow.PrimitiveTypes.Int64},
		{name: "format-option", file: "edges.data", e: ints, comma: '\t', idType: arrow.PrimitiveTypes.Int64, opt: ReadOptions{Format: "tsv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names := c.names
			if names[0] == "" {
				names = [3]string{"src", "dst", "weight"}
			}
			data := c.e.delimitedText(t, c.comma, names)
			if c.pack != nil {
				data = c.pack(t, data)
			}
			got, err := ReadEdges(writeTemp(t, c.file, data), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			kind := c.e.textWeightKind()
			if c.opt.Unweighted {
				kind = "none"
			}
			if kind == "float64" || kind == "none" {
				c.e.check(t, got, c.idType, kind)
			} else {
				c.e.check(t, got, c.idType, "int")
			}
			if kind == "float64" && got.WeightType.ID() != arrow.FLOAT64 || kind == "int" && got.WeightType.ID() != arrow.INT64 {
				t.Errorf("WeightType = %v for %s weights", got.WeightType, kind)
			}
			// Standard input needs the format and reads the same.
			fromStdin, err := ReadEdgesFrom(bytes.NewReader(data), "-", ReadOptions{Format: formatFor(t, c.file, c.opt), SrcCol: c.opt.SrcCol, DstCol: c.opt.DstCol, WeightCol: c.opt.WeightCol, Unweighted: c.opt.Unweighted})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fromStdin.Edges.Src, got.Edges.Src) || !slices.Equal(fromStdin.Edges.Dst, got.Edges.Dst) {
				t.Error("reading from a stream differs from reading the file")
			}
		})
	}
}

func formatFor(t *testing.T, file string, opt ReadOptions) string {
	if opt.Format != "" {
		return opt.Format
	}
	f, err := FormatFromPath(file)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReadCSVSpaces: spaces around numbers are not part of them; string ids
// keep theirs (RFC 4180: spaces are part of a field).
func TestReadCSVSpaces(t *testing.T) {
	got, err := ReadEdgesFrom(strings.NewReader("src, dst , weight\n1, 2 , 3\n 2 ,10, 4.5 \n"), "e.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Vertices.Ints, []int64{1, 2, 10}) || !slices.Equal(got.Edges.Float64Weights, []float64{3, 4.5}) {
		t.Fatalf("vertices %v weights %v", got.Vertices.Ints, got.Edges.Float64Weights)
	}
	got, err = ReadEdgesFrom(strings.NewReader("src\tdst\nnew york \t boston\n"), "e.tsv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Vertices.Strings, []string{" boston", "new york "}) {
		t.Fatalf("vertices %q", got.Vertices.Strings)
	}
}

// TestReadCSVNonCanonicalIntegers: ids that are all integers are int64 ids
// even when written "007" or "+7", and those are the vertex 7.
func TestReadCSVNonCanonicalIntegers(t *testing.T) {
	data := "src,dst\r\n7,8\r\n007,+8\r\n-0,9\r\n"
	got, err := ReadEdgesFrom(strings.NewReader("\ufeff"+data), "e.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(got.Vertices.Type, arrow.PrimitiveTypes.Int64) || !slices.Equal(got.Vertices.Ints, []int64{0, 7, 8, 9}) {
		t.Fatalf("vertices %v %v, want int64 [0 7 8 9]", got.Vertices.Type, got.Vertices.Ints)
	}
	if !slices.Equal(got.Edges.Src, []int32{1, 1, 0}) || !slices.Equal(got.Edges.Dst, []int32{2, 2, 3}) {
		t.Fatalf("edges %v -> %v", got.Edges.Src, got.Edges.Dst)
	}
	if got.Edges.Weighted() {
		t.Error("no weight column, yet weighted")
	}
}
