package arrowio

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// edgeCase is an edge table and the text of its rows.
type edgeTestCase struct {
	name     string
	src, dst arrow.Array
	weight   arrow.Array
	rows     [][]string
	formats  []string
}

func edgeTestCases(mem memory.Allocator) []edgeTestCase {
	i64 := array.NewInt64Builder(mem)
	defer i64.Release()
	f64 := array.NewFloat64Builder(mem)
	defer f64.Release()
	u32 := array.NewUint32Builder(mem)
	defer u32.Release()
	str := array.NewStringBuilder(mem)
	defer str.Release()
	i32 := array.NewInt32Builder(mem)
	defer i32.Release()

	all := []string{outArrow, outArrows, outParquet, outCSV, outTSV, outDIMACS}
	var cases []edgeTestCase

	i64.AppendValues([]int64{1, 2, 3, 1 << 40}, nil)
	s := i64.NewArray()
	i64.AppendValues([]int64{2, 3, 1, 1}, nil)
	d := i64.NewArray()
	f64.AppendValues([]float64{0.1, 2.5, 1e-300, 7}, nil)
	w := f64.NewArray()
	cases = append(cases, edgeTestCase{"int64-float64", s, d, w, [][]string{
		{"1", "2", "0.1"}, {"2", "3", "2.5"}, {"3", "1", "1e-300"}, {"1099511627776", "1", "7"},
	}, all})

	u32.AppendValues([]uint32{1, 4294967295, 2}, nil)
	s = u32.NewArray()
	u32.AppendValues([]uint32{2, 1, 4294967295}, nil)
	d = u32.NewArray()
	cases = append(cases, edgeTestCase{"uint32-unweighted", s, d, nil, [][]string{
		{"1", "2"}, {"4294967295", "1"}, {"2", "4294967295"},
	}, all})

	str.AppendValues([]string{"a", "b,c", "", "q\"t"}, nil)
	s = str.NewArray()
	str.AppendValues([]string{"b,c", "a", "a", " sp"}, nil)
	d = str.NewArray()
	i32.AppendValues([]int32{-3, 0, 5, 2147483647}, nil)
	w = i32.NewArray()
	cases = append(cases, edgeTestCase{"utf8-int32", s, d, w, [][]string{
		{"a", "b,c", "-3"}, {"b,c", "a", "0"}, {"", "a", "5"}, {"q\"t", " sp", "2147483647"},
	}, []string{outArrow, outArrows, outParquet, outCSV, outTSV}})

	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String})
	defer db.Release()
	for _, x := range []string{"x", "y", "x"} {
		db.(*array.BinaryDictionaryBuilder).AppendString(x)
	}
	s = db.NewArray()
	for _, x := range []string{"y", "x", "z"} {
		db.(*array.BinaryDictionaryBuilder).AppendString(x)
	}
	d = db.NewArray()
	cases = append(cases, edgeTestCase{"dictionary", s, d, nil, [][]string{
		{"x", "y"}, {"y", "x"}, {"x", "z"},
	}, []string{outArrow, outArrows, outParquet}})

	i64.AppendValues(nil, nil)
	s = i64.NewArray()
	d = i64.NewArray()
	cases = append(cases, edgeTestCase{"empty", s, d, nil, nil, all})
	return cases
}

func releaseEdgeCases(cases []edgeTestCase) {
	for _, c := range cases {
		c.src.Release()
		c.dst.Release()
		if c.weight != nil {
			c.weight.Release()
		}
	}
}

// parseDIMACS reads "p sp n m" and "a u v w" lines.
func parseDIMACSArcs(t *testing.T, path string) (n, m int, rows [][]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sawP := false
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || f[0] == "c":
		case f[0] == "p" && len(f) == 4 && f[1] == "sp" && !sawP:
			sawP = true
			n, _ = strconv.Atoi(f[2])
			m, _ = strconv.Atoi(f[3])
		case f[0] == "a" && len(f) == 4 && sawP:
			rows = append(rows, f[1:])
		default:
			t.Fatalf("line %d: %q", i+1, line)
		}
	}
	if !sawP {
		t.Fatal("no problem line")
	}
	return n, m, rows
}

func TestWriteEdgesRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := edgeTestCases(mem)
	defer releaseEdgeCases(cases)
	defer func(old int64) { edgeBatchRows = old }(edgeBatchRows)
	edgeBatchRows = 3 // several records per table
	dir := t.TempDir()
	for _, c := range cases {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				path := filepath.Join(dir, "edges."+format)
				if err := WriteEdges(path, c.src, c.dst, c.weight, WriteOptions{Allocator: mem}); err != nil {
					t.Fatal(err)
				}
				if format == outDIMACS {
					n, m, rows := parseDIMACSArcs(t, path)
					var maxID uint64
					want := make([][]string, len(c.rows))
					for i, r := range c.rows {
						for _, id := range r[:2] {
							x, _ := strconv.ParseUint(id, 10, 64)
							maxID = max(maxID, x)
						}
						want[i] = append(append([]string(nil), r...), "1")[:3]
					}
					if uint64(n) != maxID || m != len(c.rows) {
						t.Fatalf("p sp %d %d, want %d %d", n, m, maxID, len(c.rows))
					}
					if len(rows) != len(want) {
						t.Fatalf("%d arcs, want %d", len(rows), len(want))
					}
					for i := range want {
						if strings.Join(rows[i], " ") != strings.Join(want[i], " ") {
							t.Fatalf("arc %d: %v, want %v", i, rows[i], want[i])
						}
					}
					return
				}
				got := readBackFile(t, path, format, mem)
				var want [][]outCell
				if format == outCSV || format == outTSV {
					hdr := []outCell{cellOf("src"), cellOf("dst")}
					if c.weight != nil {
						hdr = append(hdr, cellOf("weight"))
					}
					want = append(want, hdr)
				} else {
					names := []string{"src", "dst", "weight"}
					if int(got.schema.NumFields()) != len(names)-map[bool]int{true: 1}[c.weight == nil] {
						t.Fatalf("schema %s", got.schema)
					}
					for i, f := range got.schema.Fields() {
						if f.Name != names[i] {
							t.Fatalf("column %d is %q", i, f.Name)
						}
					}
					if !arrow.TypeEqual(got.schema.Field(0).Type, c.src.DataType()) {
						t.Fatalf("src read back as %s, written as %s", got.schema.Field(0).Type, c.src.DataType())
					}
				}
				for _, r := range c.rows {
					var row []outCell
					for _, x := range r {
						row = append(row, cellOf(x))
					}
					want = append(want, row)
				}
				assertCellRows(t, got.rows, want)
			})
		}
	}
	dirHoldsOnly(t, dir, "edges.arrow", "edges.arrows", "edges.csv", "edges.gr", "edges.parquet", "edges.tsv")
}

func TestWriteEdgesErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := edgeTestCases(mem)
	defer releaseEdgeCases(cases)
	ints, unweighted, strs, dict := cases[0], cases[1], cases[2], cases[3]

	mk := func(vals []int64, valid []bool) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		return b.NewArray()
	}
	zero := mk([]int64{1, 0, 2, 3}, nil)
	defer zero.Release()
	withNull := mk([]int64{1, 2, 3, 4}, []bool{true, true, false, true})
	defer withNull.Release()
	short := mk([]int64{1}, nil)
	defer short.Release()
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{1, 2, quietNaN(), 4}, nil)
	nanW := fb.NewArray()
	fb.Release()
	defer nanW.Release()

	dir := t.TempDir()
	for _, tc := range []struct {
		name          string
		file          string
		src, dst, wgt arrow.Array
		want          string
	}{
		{"gr strings", "e.gr", strs.src, strs.dst, nil, "DIMACS needs integer ids"},
		{"gr zero id", "e.gr", zero, ints.dst, nil, "column src, row 1 holds 0"},
		{"null id", "e.parquet", ints.src, withNull, nil, "column dst, row 2: null"},
		{"nan weight", "e.arrow", ints.src, ints.dst, nanW, "row 2: weight NaN is not finite"},
		{"short column", "e.arrow", ints.src, short, nil, "column dst has 1 rows"},
		{"mixed id types", "e.arrow", ints.src, strs.dst, nil, "src is int64 but dst is utf8"},
		{"string weight", "e.arrow", ints.src, ints.dst, strs.src, "column weight of type utf8"},
		{"dictionary csv", "e.csv", dict.src, dict.dst, nil, "cannot be written as csv"},
		{"unweighted ok, bad ext", "e.json", unweighted.src, unweighted.dst, nil, "unknown output extension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			err := WriteEdges(path, tc.src, tc.dst, tc.wgt, WriteOptions{Allocator: mem})
			if err == nil || !strings.HasPrefix(err.Error(), "arrowio: "+path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
	dirHoldsOnly(t, dir)
}

func quietNaN() float64 { var z float64; return z / z }
