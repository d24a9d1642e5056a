package arrowio

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// logicalEdges is what a test writes: external ids as text (integers in
// decimal, uint64 by value) and weights as float64 (exact for the values the
// tests draw), in one place from which every format is written and against
// which every read is checked.
type logicalEdges struct {
	src, dst []string
	weights  []float64 // nil: no weight column
}

// intIDs draws m edges over about n distinct integer ids valid for dt.
func randomIntIDs(rng *rand.Rand, dt arrow.DataType, m, n int) logicalEdges {
	pool := make([]string, n)
	for i := range pool {
		var v string
		switch dt.ID() {
		case arrow.INT8:
			v = strconv.Itoa(rng.IntN(256) - 128)
		case arrow.UINT8:
			v = strconv.Itoa(rng.IntN(256))
		case arrow.INT16:
			v = strconv.Itoa(rng.IntN(1<<16) - 1<<15)
		case arrow.UINT16:
			v = strconv.Itoa(rng.IntN(1 << 16))
		case arrow.INT32:
			v = strconv.FormatInt(int64(int32(rng.Uint32())), 10)
		case arrow.UINT32:
			v = strconv.FormatUint(uint64(rng.Uint32()), 10)
		case arrow.INT64:
			v = strconv.FormatInt(int64(rng.Uint64()), 10)
		case arrow.UINT64:
			v = strconv.FormatUint(rng.Uint64(), 10)
		}
		pool[i] = v
	}
	// Extremes of the type, so that ordering at the edges is exercised.
	switch dt.ID() {
	case arrow.INT64:
		pool[0], pool[1] = strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(math.MaxInt64, 10)
	case arrow.UINT64:
		pool[0], pool[1] = "0", strconv.FormatUint(math.MaxUint64, 10)
	}
	e := logicalEdges{}
	for range m {
		e.src = append(e.src, pool[rng.IntN(n)])
		e.dst = append(e.dst, pool[rng.IntN(n)])
	}
	return e
}

func randomStringIDs(rng *rand.Rand, m, n int) logicalEdges {
	pool := make([]string, n)
	for i := range pool {
		pool[i] = fmt.Sprintf("v%x-%s", rng.Uint32(), strings.Repeat("é", rng.IntN(3)))
	}
	pool[0] = "" // the empty string is a valid string id in Arrow formats
	e := logicalEdges{}
	for range m {
		e.src = append(e.src, pool[rng.IntN(n)])
		e.dst = append(e.dst, pool[rng.IntN(n)])
	}
	return e
}

func randomWeights(rng *rand.Rand, dt arrow.DataType, m int) []float64 {
	w := make([]float64, m)
	for i := range w {
		switch dt.ID() {
		case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
			w[i] = float64(rng.IntN(2000)-500) / 8 // exact in float16 too
		case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			w[i] = float64(rng.IntN(200))
		default:
			w[i] = float64(rng.IntN(170) - 50) // fits int8
		}
	}
	return w
}

// oracle computes the expected dictionary and dense edges independently of
// the reader: distinct ids sorted by a comparator on their parsed values.
func (e logicalEdges) oracle(numeric, unsigned bool) (ids []string, src, dst []int32) {
	seen := map[string]bool{}
	for _, s := range append(slices.Clone(e.src), e.dst...) {
		if !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		switch {
		case unsigned:
			x, _ := strconv.ParseUint(a, 10, 64)
			y, _ := strconv.ParseUint(b, 10, 64)
			return cmp.Compare(x, y)
		case numeric:
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
	pos := map[string]int32{}
	for i, s := range ids {
		pos[s] = int32(i)
	}
	for i := range e.src {
		src = append(src, pos[e.src[i]])
		dst = append(dst, pos[e.dst[i]])
	}
	return ids, src, dst
}

// check compares a table read back with what was written.
func (e logicalEdges) check(t *testing.T, got *EdgeTable, idType arrow.DataType, wantWeight string) {
	t.Helper()
	numeric := arrow.IsInteger(idType.ID())
	ids, src, dst := e.oracle(numeric, idType.ID() == arrow.UINT64)
	v := got.Vertices
	if v.Len() != len(ids) || got.Edges.NumVertices != len(ids) {
		t.Fatalf("%d vertices (Edges.NumVertices %d), want %d", v.Len(), got.Edges.NumVertices, len(ids))
	}
	if !arrow.TypeEqual(v.Type, idType) {
		t.Errorf("Vertices.Type = %v, want %v", v.Type, idType)
	}
	for i, want := range ids {
		if g := v.Format(int32(i)); g != want {
			t.Fatalf("vertex %d = %q, want %q", i, g, want)
		}
		if d, err := v.Lookup(want); err != nil || d != int32(i) {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", want, d, err, i)
		}
	}
	if !slices.Equal(got.Edges.Src, src) || !slices.Equal(got.Edges.Dst, dst) {
		t.Fatalf("dense edges differ:\n src %v\nwant %v\n dst %v\nwant %v", got.Edges.Src, src, got.Edges.Dst, dst)
	}
	var gotW []float64
	kind := "none"
	switch {
	case got.Edges.IntWeights != nil:
		kind = "int"
		for _, w := range got.Edges.IntWeights {
			gotW = append(gotW, float64(w))
		}
	case got.Edges.Float32Weights != nil:
		kind = "float32"
		for _, w := range got.Edges.Float32Weights {
			gotW = append(gotW, float64(w))
		}
	case got.Edges.Float64Weights != nil:
		kind = "float64"
		gotW = got.Edges.Float64Weights
	}
	if kind != wantWeight {
		t.Fatalf("weights are %s, want %s", kind, wantWeight)
	}
	if wantWeight != "none" && !slices.Equal(gotW, e.weights) && !(len(gotW) == 0 && len(e.weights) == 0) {
		t.Fatalf("weights = %v, want %v", gotW, e.weights)
	}
	if (got.WeightType == nil) != (wantWeight == "none") {
		t.Errorf("WeightType = %v with weights %s", got.WeightType, wantWeight)
	}
}

// weightKind is the weight slice a reader fills for a weight column type.
func weightKind(dt arrow.DataType) string {
	switch {
	case dt == nil:
		return "none"
	case dt.ID() == arrow.FLOAT64:
		return "float64"
	case dt.ID() == arrow.FLOAT16 || dt.ID() == arrow.FLOAT32:
		return "float32"
	}
	return "int"
}

// idArray builds an id column of type dt (integer, string, or dictionary).
func idArray(t testing.TB, mem memory.Allocator, dt arrow.DataType, vals []string) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, s := range vals {
		var err error
		switch bb := b.(type) {
		case *array.Int8Builder:
			v, _ := strconv.ParseInt(s, 10, 8)
			bb.Append(int8(v))
		case *array.Int16Builder:
			v, _ := strconv.ParseInt(s, 10, 16)
			bb.Append(int16(v))
		case *array.Int32Builder:
			v, _ := strconv.ParseInt(s, 10, 32)
			bb.Append(int32(v))
		case *array.Int64Builder:
			v, _ := strconv.ParseInt(s, 10, 64)
			bb.Append(v)
		case *array.Uint8Builder:
			v, _ := strconv.ParseUint(s, 10, 8)
			bb.Append(uint8(v))
		case *array.Uint16Builder:
			v, _ := strconv.ParseUint(s, 10, 16)
			bb.Append(uint16(v))
		case *array.Uint32Builder:
			v, _ := strconv.ParseUint(s, 10, 32)
			bb.Append(uint32(v))
		case *array.Uint64Builder:
			v, _ := strconv.ParseUint(s, 10, 64)
			bb.Append(v)
		case *array.StringBuilder:
			bb.Append(s)
		case *array.LargeStringBuilder:
			bb.Append(s)
		case *array.StringViewBuilder:
			bb.Append(s)
		case *array.BinaryDictionaryBuilder:
			err = bb.AppendString(s)
		case *array.Int16DictionaryBuilder:
			v, _ := strconv.ParseInt(s, 10, 16)
			err = bb.Append(int16(v))
		default:
			t.Fatalf("idArray: no builder for %v", dt)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.NewArray()
}

func weightArray(t testing.TB, mem memory.Allocator, dt arrow.DataType, vals []float64) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, w := range vals {
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(w))
		case *array.Int16Builder:
			bb.Append(int16(w))
		case *array.Int32Builder:
			bb.Append(int32(w))
		case *array.Int64Builder:
			bb.Append(int64(w))
		case *array.Uint8Builder:
			bb.Append(uint8(w))
		case *array.Uint16Builder:
			bb.Append(uint16(w))
		case *array.Uint32Builder:
			bb.Append(uint32(w))
		case *array.Uint64Builder:
			bb.Append(uint64(w))
		case *array.Float16Builder:
			bb.Append(float16.New(float32(w)))
		case *array.Float32Builder:
			bb.Append(float32(w))
		case *array.Float64Builder:
			bb.Append(w)
		default:
			t.Fatalf("weightArray: no builder for %v", dt)
		}
	}
	return b.NewArray()
}

// records splits e into batches of at most batch rows with the given column
// names and types (wType nil: no weight column). An extra "label" column
// of text comes first so that the readers must find columns by name (a
// numeric one would be taken as the weight of an unweighted table).
func (e logicalEdges) records(t testing.TB, mem memory.Allocator, names [3]string, srcType, dstType, wType arrow.DataType, batch int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	fields := []arrow.Field{
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: names[0], Type: srcType}, {Name: names[1], Type: dstType},
	}
	if wType != nil {
		fields = append(fields, arrow.Field{Name: names[2], Type: wType})
	}
	schema := arrow.NewSchema(fields, nil)
	var recs []arrow.RecordBatch
	for lo := 0; lo < len(e.src) || (lo == 0 && len(recs) == 0); lo += batch {
		hi := min(len(e.src), lo+batch)
		labels := make([]string, hi-lo)
		cols := []arrow.Array{
			idArray(t, mem, arrow.BinaryTypes.String, labels),
			idArray(t, mem, srcType, e.src[lo:hi]), idArray(t, mem, dstType, e.dst[lo:hi]),
		}
		if wType != nil {
			cols = append(cols, weightArray(t, mem, wType, e.weights[lo:hi]))
		}
		recs = append(recs, array.NewRecordBatch(schema, cols, int64(hi-lo)))
		for _, c := range cols {
			c.Release()
		}
		if hi == len(e.src) {
			break
		}
	}
	return schema, recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

func writeIPCFile(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeIPCStream(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeParquet writes small row groups so that reads cross them.
func writeParquet(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch) []byte {
	return writeParquetRows(t, schema, recs, 7)
}

func writeParquetRows(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch, groupRows int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf,
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodings are the columnar ways of handing records to the readers.
var encodings = []struct {
	name string
	ext  string
	data func(testing.TB, *arrow.Schema, []arrow.RecordBatch) []byte
}{
	{"records", "", nil},
	{"ipc-file", ".arrow", writeIPCFile},
	{"ipc-stream", ".arrows", writeIPCStream},
	{"parquet", ".parquet", writeParquet},
}

func readEncoded(t *testing.T, enc string, schema *arrow.Schema, recs []arrow.RecordBatch, data []byte, ext string, opt ReadOptions) (*EdgeTable, error) {
	t.Helper()
	if enc == "records" {
		rr, err := array.NewRecordReader(schema, recs)
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		return EdgesFromRecords(rr, "upload", opt)
	}
	// Through a file on disk (in place) and through a plain reader
	// (buffered); both must agree.
	path := filepath.Join(t.TempDir(), "edges"+ext)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := ReadEdges(path, opt)
	fromReader, err2 := ReadEdgesFrom(struct{ *bytes.Buffer }{bytes.NewBuffer(data)}, "edges"+ext, opt)
	if (err == nil) != (err2 == nil) {
		t.Fatalf("ReadEdges: %v; ReadEdgesFrom: %v", err, err2)
	}
	if err == nil && !slices.Equal(fromFile.Edges.Src, fromReader.Edges.Src) {
		t.Fatalf("ReadEdges and ReadEdgesFrom disagree")
	}
	return fromFile, err
}

var intTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
}

var weightTypes = append(slices.Clone(intTypes),
	arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64)

var (
	stringDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	intDict    = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int16}
)

func TestReadColumnarRoundTrip(t *testing.T) {
	type tc struct {
		name    string
		idType  arrow.DataType // of both columns
		wType   arrow.DataType
		m, n    int
		names   [3]string
		opt     ReadOptions
		skipEnc string
	}
	var cases []tc
	for i, it := range intTypes {
		cases = append(cases, tc{name: "ids-" + it.String(), idType: it, wType: weightTypes[(i+3)%len(weightTypes)], m: 40, n: 25})
	}
	for _, wt := range weightTypes {
		cases = append(cases, tc{name: "weights-" + wt.String(), idType: arrow.PrimitiveTypes.Int64, wType: wt, m: 30, n: 12})
	}
	cases = append(cases,
		tc{name: "utf8", idType: arrow.BinaryTypes.String, wType: arrow.PrimitiveTypes.Float64, m: 50, n: 30},
		tc{name: "large-utf8", idType: arrow.BinaryTypes.LargeString, wType: arrow.PrimitiveTypes.Int32, m: 50, n: 30},
		tc{name: "string-view", idType: arrow.BinaryTypes.StringView, m: 20, n: 9, skipEnc: "parquet"},
		tc{name: "dict-utf8", idType: stringDict, wType: arrow.PrimitiveTypes.Uint16, m: 50, n: 10},
		tc{name: "dict-int16", idType: intDict, wType: arrow.PrimitiveTypes.Float32, m: 50, n: 10},
		tc{name: "unweighted", idType: arrow.PrimitiveTypes.Int32, m: 30, n: 10},
		tc{name: "custom-names", idType: arrow.PrimitiveTypes.Int64, wType: arrow.PrimitiveTypes.Float64, m: 30, n: 10,
			names: [3]string{"from", "to", "cost"}, opt: ReadOptions{SrcCol: "from", DstCol: "to", WeightCol: "cost"}},
		tc{name: "unweighted-option", idType: arrow.PrimitiveTypes.Int64, wType: arrow.PrimitiveTypes.Float64, m: 30, n: 10,
			opt: ReadOptions{Unweighted: true}},
		tc{name: "empty", idType: arrow.PrimitiveTypes.Int64, wType: arrow.PrimitiveTypes.Int64, m: 0, n: 2},
		tc{name: "empty-strings", idType: arrow.BinaryTypes.String, m: 0, n: 2},
		tc{name: "dense-large", idType: arrow.PrimitiveTypes.Uint32, wType: arrow.PrimitiveTypes.Int64, m: 3000, n: 1500},
		tc{name: "sparse-large", idType: arrow.PrimitiveTypes.Int64, wType: arrow.PrimitiveTypes.Int64, m: 5000, n: 6000},
		tc{name: "sparse-large-uint64", idType: arrow.PrimitiveTypes.Uint64, m: 3000, n: 4000},
	)
	for ci, c := range cases {
		for _, enc := range encodings {
			if enc.name == c.skipEnc {
				continue
			}
			t.Run(c.name+"/"+enc.name, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				seed := uint64(ci)
				rng := rand.New(rand.NewPCG(seed, 7))
				var e logicalEdges
				vt := valueType(c.idType)
				if arrow.IsInteger(vt.ID()) {
					e = randomIntIDs(rng, vt, c.m, c.n)
				} else {
					e = randomStringIDs(rng, c.m, c.n)
				}
				if c.wType != nil {
					e.weights = randomWeights(rng, c.wType, c.m)
				}
				names := c.names
				if names[0] == "" {
					names = [3]string{"src", "dst", "weight"}
				}
				batch := 16
				if enc.name == "ipc-file" && c.idType.ID() == arrow.DICTIONARY {
					batch = c.m // an IPC file holds one dictionary per field
				}
				schema, recs := e.records(t, mem, names, c.idType, c.idType, c.wType, batch)
				defer releaseAll(recs)
				var data []byte
				if enc.data != nil {
					data = enc.data(t, schema, recs)
				}
				opt := c.opt
				opt.Allocator = mem
				got, err := readEncoded(t, enc.name, schema, recs, data, enc.ext, opt)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				wantW := weightKind(c.wType)
				if c.opt.Unweighted {
					wantW = "none"
				}
				e.check(t, got, vt, wantW)
			})
		}
	}
}

// TestReadMixedIDTypes reads src and dst columns of different integer
// types, which widen to a common type.
func TestReadMixedIDTypes(t *testing.T) {
	cases := []struct {
		src, dst, want arrow.DataType
		e              logicalEdges
	}{
		{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32,
			logicalEdges{src: []string{"-5", "3", "100"}, dst: []string{"70000", "-5", "-70000"}}},
		{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
			logicalEdges{src: []string{"200", "3"}, dst: []string{"-100", "3"}}},
		{arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Uint64,
			logicalEdges{src: []string{"4000000000", "1"}, dst: []string{"18446744073709551615", "1"}}},
		{arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64,
			logicalEdges{src: []string{"9223372036854775807", "1"}, dst: []string{"-9", "1"}}},
	}
	for _, c := range cases {
		t.Run(c.src.String()+"+"+c.dst.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema, recs := c.e.records(t, mem, [3]string{"src", "dst", "weight"}, c.src, c.dst, nil, 10)
			defer releaseAll(recs)
			got, err := readEncoded(t, "records", schema, recs, nil, "", ReadOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			c.e.check(t, got, c.want, "none")
		})
	}
	t.Run("string+large_string", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		e := logicalEdges{src: []string{"b", "a"}, dst: []string{"c", "b"}}
		schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, nil, 10)
		defer releaseAll(recs)
		got, err := readEncoded(t, "records", schema, recs, nil, "", ReadOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		e.check(t, got, arrow.BinaryTypes.LargeString, "none")
	})
}

func TestFormatFromPath(t *testing.T) {
	cases := []struct{ path, want string }{
		{"a.parquet", "parquet"}, {"dir.x/A.PQ", "parquet"}, {"a.arrow", "arrow"}, {"a.feather", "arrow"},
		{"a.ipc", "arrow"}, {"a.arrows", "arrows"}, {"a.csv", "csv"}, {"a.csv.gz", "csv"}, {"a.tsv.zst", "tsv"},
		{"a.gr", "gr"}, {"a.gr.gz", "gr"}, {"-", "arrows"},
		{"a.txt", ""}, {"a", ""}, {"a.parquet.gz", ""}, {"a.gz", ""},
	}
	for _, c := range cases {
		got, err := FormatFromPath(c.path)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("FormatFromPath(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "arrowio: ") {
			t.Errorf("error %q lacks the package prefix", err)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	ints := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{-4, 2, 9}}
	u64 := &Vertices{Type: arrow.PrimitiveTypes.Uint64, Ints: []int64{3, -1}} // -1 is MaxUint64
	strs := &Vertices{Type: arrow.BinaryTypes.String, Strings: []string{"a", "b"}}
	cases := []struct {
		v    *Vertices
		id   string
		want int32
		err  string
	}{
		{ints, "-4", 0, ""}, {ints, "9", 2, ""}, {ints, " 2 ", 1, ""},
		{ints, "3", -1, `"3" is not in the graph`}, {ints, "x7", -1, `"x7" is not a valid int64 id`},
		{u64, "18446744073709551615", 1, ""}, {u64, "-1", -1, `"-1" is not a uint64 id`},
		{strs, "b", 1, ""}, {strs, "c", -1, `"c" is not in the graph`},
	}
	for _, c := range cases {
		got, err := c.v.Lookup(c.id)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("Lookup(%q) = %d, %v; want %d", c.id, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "arrowio: ") {
			t.Errorf("Lookup(%q) error = %v; want it to contain %s", c.id, err, c.err)
		}
	}
}

// TestDenseIntIDsPaths checks the three ways of ranking integer ids (table,
// sort with positions, binary search) against each other and the oracle.
func TestDenseIntIDsPaths(t *testing.T) {
	defer func(old uint64) { positionLimit = old }(positionLimit)
	for _, n := range []int{50, 3000, 20000, 100000} { // 100,000: the table marked by several workers
		seed := uint64(n)
		e := randomIntIDs(newRand(seed), arrow.PrimitiveTypes.Int64, 2*n, n)
		dense := randomIntIDs(newRand(seed), arrow.PrimitiveTypes.Uint16, 2*n, n)
		for _, c := range []logicalEdges{e, dense} {
			ids, wantSrc, wantDst := c.oracle(true, false)
			src, dst := make([]int64, len(c.src)), make([]int64, len(c.dst))
			for i := range src {
				src[i], _ = strconv.ParseInt(c.src[i], 10, 64)
				dst[i], _ = strconv.ParseInt(c.dst[i], 10, 64)
			}
			for _, limit := range []uint64{math.MaxUint32, 0} {
				positionLimit = limit
				verts, s, d, err := denseIntIDs(src, dst, "x", "src", "dst")
				if err != nil {
					t.Fatal(err)
				}
				if len(verts) != len(ids) || !slices.Equal(s, wantSrc) || !slices.Equal(d, wantDst) {
					t.Fatalf("n=%d seed %d limit %d: dense ids differ from the oracle", n, seed, limit)
				}
				for i, v := range verts {
					if strconv.FormatInt(v, 10) != ids[i] {
						t.Fatalf("n=%d seed %d limit %d: vertex %d = %d, want %s", n, seed, limit, i, v, ids[i])
					}
				}
			}
		}
	}
}

func TestSortKeys(t *testing.T) {
	draws := map[string]func(*rand.Rand) int64{
		"full":    func(r *rand.Rand) int64 { return int64(r.Uint64()) },
		"small":   func(r *rand.Rand) int64 { return int64(r.IntN(1000)) - 500 },
		"clumped": func(r *rand.Rand) int64 { return 1<<40 + int64(r.IntN(3))<<20 + int64(r.IntN(50)) },
		"equal":   func(r *rand.Rand) int64 { return 42 },
	}
	for name, draw := range draws {
		for _, n := range []int{0, 1, 100, 5000, 70000} {
			seed := uint64(n)
			rng := rand.New(rand.NewPCG(seed, 1))
			keys := make([]int64, n)
			for i := range keys {
				keys[i] = draw(rng)
			}
			if n > 10 && name != "equal" {
				keys[3], keys[7] = math.MinInt64, math.MaxInt64
			}
			orig := slices.Clone(keys)
			want := slices.Clone(keys)
			slices.Sort(want)
			pos := make([]uint32, n)
			for i := range pos {
				pos[i] = uint32(i)
			}
			sortKeysWith(keys, pos)
			if !slices.Equal(keys, want) {
				t.Fatalf("%s n=%d seed %d: sortKeysWith differs from slices.Sort", name, n, seed)
			}
			for i, p := range pos {
				if orig[p] != keys[i] {
					t.Fatalf("%s n=%d seed %d: pos[%d]=%d does not follow its key", name, n, seed, i, p)
				}
			}
			plain := slices.Clone(orig)
			sortKeys(plain)
			if !slices.Equal(plain, want) {
				t.Fatalf("%s n=%d seed %d: sortKeys differs from slices.Sort", name, n, seed)
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// TestReadLargeBatches reads batches big enough for the parallel paths
// (string lookups, integer ranking) and checks them against the oracle.
func TestReadLargeBatches(t *testing.T) {
	for _, idType := range []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64} {
		t.Run(idType.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := newRand(77)
			var e logicalEdges
			if idType.ID() == arrow.STRING {
				e = randomStringIDs(rng, 140000, 5000)
			} else {
				e = randomIntIDs(rng, idType, 140000, 50000)
			}
			schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, idType, idType, nil, 70000)
			defer releaseAll(recs)
			got, err := readEncoded(t, "records", schema, recs, nil, "", ReadOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			e.check(t, got, idType, "none")
		})
	}
}
