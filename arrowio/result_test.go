package arrowio

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// idCase is a vertex dictionary of five vertices and the text of each id.
type resultIDCase struct {
	name string
	v    *Vertices
	text []string
}

func resultIDCases() []resultIDCase {
	u := func(x uint64) int64 { return int64(x) }
	return []resultIDCase{
		{"int32", &Vertices{Type: arrow.PrimitiveTypes.Int32, Ints: []int64{-5, 0, 7, 100, math.MaxInt32}},
			[]string{"-5", "0", "7", "100", "2147483647"}},
		{"uint64", &Vertices{Type: arrow.PrimitiveTypes.Uint64, Ints: []int64{1, 2, u(1 << 63), u(1<<63 + 5), u(math.MaxUint64)}},
			[]string{"1", "2", "9223372036854775808", "9223372036854775813", "18446744073709551615"}},
		{"int64", &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{-1 << 62, -3, 0, 5, math.MaxInt64}},
			[]string{"-4611686018427387904", "-3", "0", "5", "9223372036854775807"}},
		{"utf8", &Vertices{Type: arrow.BinaryTypes.String, Strings: []string{"", "a,b", "b\"q", "x y", "ü\n"}},
			[]string{"", "a,b", "b\"q", "x y", "ü\n"}},
		{"large_utf8", &Vertices{Type: arrow.BinaryTypes.LargeString, Strings: []string{" lead", "b", "c\td", "e", "f"}},
			[]string{" lead", "b", "c\td", "e", "f"}},
	}
}

// The test block: sources 0, 3 and 4 over five vertices. Row 0 has ties (2
// and 2) and an unreachable vertex, row 3 reaches two vertices at the same
// distance, row 4 reaches nothing but itself.
var (
	resultSources = []graph.VertexID{0, 3, 4}
	resultPred    = []graph.VertexID{
		-1, 0, 0, -1, 2,
		-1, 3, -1, -1, 3,
		-1, -1, -1, -1, -1,
	}
)

const unreach = -1 // unreachable in the templates below

func resultDist[D graph.Number](big D, small D) []D {
	inf := graph.Infinity[D]()
	tmpl := []D{
		0, small, small, unreach, big,
		unreach, 1, unreach, 0, 1,
		unreach, unreach, unreach, unreach, 0,
	}
	for i, x := range tmpl {
		if x == unreach {
			tmpl[i] = inf
		}
	}
	return tmpl
}

func resultTestBlock(t graph.DistType) *graph.Block {
	b := &graph.Block{Sources: resultSources, NumVertices: 5, Type: t, Pred: resultPred}
	switch t {
	case graph.DistInt32:
		b.Dist = resultDist[int32](math.MaxInt32-1, 2)
	case graph.DistInt64:
		b.Dist = resultDist[int64](1<<53+1, 2)
	case graph.DistFloat32:
		b.Dist = resultDist[float32](3.4e38, 0.1)
	case graph.DistFloat64:
		b.Dist = resultDist[float64](1e300, 0.1)
	}
	return b
}

// distText formats distance i of b as the files should carry it, and
// reports whether it is Infinity.
func distText(b *graph.Block, i int) (string, bool) {
	switch d := b.Dist.(type) {
	case []int32:
		return strconv.FormatInt(int64(d[i]), 10), d[i] == math.MaxInt32
	case []int64:
		return strconv.FormatInt(d[i], 10), d[i] == math.MaxInt64
	case []float32:
		return strconv.FormatFloat(float64(d[i]), 'g', -1, 32), math.IsInf(float64(d[i]), 1)
	case []float64:
		return strconv.FormatFloat(d[i], 'g', -1, 64), math.IsInf(d[i], 1)
	}
	panic("bad block")
}

func distFloat(b *graph.Block, i int) float64 {
	switch d := b.Dist.(type) {
	case []int32:
		return float64(d[i])
	case []int64:
		return float64(d[i])
	case []float32:
		return float64(d[i])
	}
	return b.Dist.([]float64)[i]
}

func floatText(x float64, t graph.DistType) string {
	switch t {
	case graph.DistInt32, graph.DistInt64:
		return strconv.FormatInt(int64(x), 10)
	case graph.DistFloat32:
		return strconv.FormatFloat(float64(float32(x)), 'g', -1, 32)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// expectedRows is the oracle: the rows a file of layout must hold, written
// from the block's slices and the id texts directly.
func expectedRows(layout Layout, format string, ids resultIDCase, b *graph.Block, withPred bool) [][]outCell {
	n := b.NumVertices
	var rows [][]outCell
	switch layout {
	case LayoutPairs:
		if format == outCSV {
			hdr := []outCell{cellOf("source"), cellOf("target"), cellOf("distance")}
			if withPred {
				hdr = append(hdr, cellOf("predecessor"))
			}
			rows = append(rows, hdr)
		}
		for r, s := range b.Sources {
			for v := 0; v < n; v++ {
				d, inf := distText(b, r*n+v)
				if inf {
					continue
				}
				row := []outCell{cellOf(ids.text[s]), cellOf(ids.text[v]), cellOf(d)}
				if withPred {
					if p := b.Pred[r*n+v]; p < 0 {
						row = append(row, nullCell)
					} else {
						row = append(row, cellOf(ids.text[p]))
					}
				}
				rows = append(rows, row)
			}
		}
	case LayoutMatrix:
		if format == outCSV {
			hdr := []outCell{cellOf("source")}
			for _, id := range ids.text {
				hdr = append(hdr, cellOf(id))
			}
			rows = append(rows, hdr)
		}
		for r, s := range b.Sources {
			row := []outCell{cellOf(ids.text[s])}
			for v := 0; v < n; v++ {
				d, inf := distText(b, r*n+v)
				switch {
				case inf && (format == outCSV || !b.Type.IsFloat()):
					row = append(row, nullCell)
				case inf:
					row = append(row, cellOf("+Inf"))
				default:
					row = append(row, cellOf(d))
				}
			}
			rows = append(rows, row)
		}
	case LayoutStats:
		if format == outCSV {
			rows = append(rows, []outCell{cellOf("source"), cellOf("reachable"), cellOf("eccentricity"), cellOf("sum"), cellOf("closeness"), cellOf("harmonic")})
		}
		// Reductions by hand over the block, following design.md.
		for r, s := range b.Sources {
			var reach int64
			var ecc, sum, harm float64
			for v := 0; v < n; v++ {
				if v == int(s) {
					continue
				}
				_, inf := distText(b, r*n+v)
				if inf {
					continue
				}
				d := distFloat(b, r*n+v)
				reach++
				ecc = max(ecc, d)
				sum += d
				if d != 0 {
					harm += 1 / d
				}
			}
			row := []outCell{cellOf(ids.text[s]), cellOf(strconv.FormatInt(reach, 10))}
			if reach == 0 {
				row = append(row, nullCell)
			} else {
				row = append(row, cellOf(floatText(ecc, b.Type)))
			}
			var close float64
			if reach > 0 && sum > 0 {
				close = float64(reach) / sum * (float64(reach) / float64(n-1))
			}
			if b.Type.IsFloat() {
				row = append(row, cellOf(strconv.FormatFloat(sum, 'g', -1, 64)))
			} else {
				row = append(row, cellOf(floatText(sum, graph.DistInt64)))
			}
			row = append(row, cellOf(strconv.FormatFloat(close, 'g', -1, 64)), cellOf(strconv.FormatFloat(harm, 'g', -1, 64)))
			rows = append(rows, row)
		}
	}
	return rows
}

// approxStats compares stats rows allowing float rounding in the last
// columns (sum of floats, closeness, harmonic), where the builder's order of
// additions may differ from the oracle's.
func approxEqualCell(got, want outCell) bool {
	if got == want {
		return true
	}
	if got.nullCell || want.nullCell {
		return false
	}
	g, err1 := strconv.ParseFloat(got.s, 64)
	w, err2 := strconv.ParseFloat(want.s, 64)
	return err1 == nil && err2 == nil && math.Abs(g-w) <= 1e-12*math.Max(1, math.Abs(w))
}

func TestResultRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, layout := range []Layout{LayoutPairs, LayoutMatrix, LayoutStats} {
		for _, format := range []string{outArrow, outArrows, outParquet, outCSV} {
			for _, dt := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
				for _, ids := range resultIDCases() {
					for _, withPred := range []bool{false, true} {
						if withPred && layout != LayoutPairs {
							continue
						}
						name := string(layout) + "/" + format + "/" + dt.String() + "/" + ids.name
						if withPred {
							name += "/pred"
						}
						t.Run(name, func(t *testing.T) {
							resultRoundTrip(t, dir, layout, format, dt, ids, withPred)
						})
					}
				}
			}
		}
	}
}

func resultRoundTrip(t *testing.T, dir string, layout Layout, format string, dt graph.DistType, ids resultIDCase, withPred bool) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	blk := resultTestBlock(dt)
	b := NewResultBuilder(layout, ids.v, dt, withPred, mem)
	b.SetMetadata(MetaAlgorithm, "dijkstra")
	path := filepath.Join(dir, "r."+format)
	w, err := CreateResult(path, b.Schema(), WriteOptions{Allocator: mem, Vertices: ids.v})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(rec arrow.RecordBatch) error { return w.Write(rec) }
	if layout == LayoutStats {
		// Two stats blocks, to cover more than one record.
		first := &graph.Block{Sources: blk.Sources[:1], NumVertices: 5, Type: dt}
		rest := &graph.Block{Sources: blk.Sources[1:], NumVertices: 5, Type: dt}
		switch d := blk.Dist.(type) {
		case []int32:
			first.Dist, rest.Dist = d[:5], d[5:]
		case []int64:
			first.Dist, rest.Dist = d[:5], d[5:]
		case []float32:
			first.Dist, rest.Dist = d[:5], d[5:]
		case []float64:
			first.Dist, rest.Dist = d[:5], d[5:]
		}
		for _, part := range []*graph.Block{first, rest} {
			if err := b.Stats(graph.ComputeStats(part), emit); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := b.Block(blk, emit); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readBackFile(t, path, format, mem)
	want := expectedRows(layout, format, ids, blk, withPred)
	if layout == LayoutStats {
		if len(got.rows) != len(want) {
			t.Fatalf("%d rows, want %d: %v", len(got.rows), len(want), got.rows)
		}
		for i := range want {
			if len(got.rows[i]) != len(want[i]) {
				t.Fatalf("row %d: %v, want %v", i, got.rows[i], want[i])
			}
			for j := range want[i] {
				if !approxEqualCell(got.rows[i][j], want[i][j]) {
					t.Fatalf("row %d cell %d: %v, want %v", i, j, got.rows[i][j], want[i][j])
				}
			}
		}
	} else {
		assertCellRows(t, got.rows, want)
	}
	if format == outCSV {
		return
	}
	// The schema read back is the builder's, metadata included.
	if !sameFields(got.schema, b.Schema()) {
		t.Fatalf("schema read back:\n%s\nwant\n%s", got.schema, b.Schema())
	}
	for _, kv := range [][2]string{{MetaLayout, string(layout)}, {MetaDistType, dt.String()}, {MetaNumVertices, "5"}, {MetaAlgorithm, "dijkstra"}} {
		if v, ok := got.schema.Metadata().GetValue(kv[0]); !ok || v != kv[1] {
			t.Fatalf("metadata %s = %q (present %v), want %q", kv[0], v, ok, kv[1])
		}
	}
}

// sameFields compares names, types and nullability, not field metadata
// (Parquet adds field ids).
func sameFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i, f := range a.Fields() {
		g := b.Field(i)
		if f.Name != g.Name || !arrow.TypeEqual(f.Type, g.Type) || f.Nullable != g.Nullable {
			return false
		}
	}
	return true
}

func TestResultSchema(t *testing.T) {
	v := &Vertices{Type: arrow.PrimitiveTypes.Uint32, Ints: []int64{1, 2, 3}}
	for _, tc := range []struct {
		layout   Layout
		dt       graph.DistType
		withPred bool
		want     string
	}{
		{LayoutPairs, graph.DistInt32, false, "source:uint32 target:uint32 distance:int32"},
		{LayoutPairs, graph.DistFloat64, true, "source:uint32 target:uint32 distance:float64 predecessor:uint32?"},
		{LayoutMatrix, graph.DistInt64, false, "source:uint32 distance:fixed_size_list<item: int64, nullable>[3]"},
		{LayoutStats, graph.DistFloat32, false, "source:uint32 reachable:int64 eccentricity:float32? sum:float64 closeness:float64 harmonic:float64"},
		{LayoutStats, graph.DistInt32, false, "source:uint32 reachable:int64 eccentricity:int32? sum:int64 closeness:float64 harmonic:float64"},
	} {
		s := ResultSchema(tc.layout, v, tc.dt, tc.withPred)
		var got string
		for i, f := range s.Fields() {
			if i > 0 {
				got += " "
			}
			got += f.Name + ":" + f.Type.String()
			if f.Nullable {
				got += "?"
			}
		}
		if got != tc.want {
			t.Errorf("%s %s pred=%v: %s, want %s", tc.layout, tc.dt, tc.withPred, got, tc.want)
		}
	}
	for _, s := range []string{"pairs", "matrix", "stats"} {
		if l, err := ParseLayout(s); err != nil || string(l) != s {
			t.Errorf("ParseLayout(%q) = %q, %v", s, l, err)
		}
	}
	if _, err := ParseLayout("table"); err == nil {
		t.Error("ParseLayout accepted table")
	}
}

func TestPairsChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ids := resultIDCases()[3] // utf8
	blk := resultTestBlock(graph.DistInt64)
	whole := expectedRows(LayoutPairs, outArrow, ids, blk, true)
	for _, limit := range []int{1, 2, 3, 4, 100} {
		b := NewResultBuilder(LayoutPairs, ids.v, graph.DistInt64, true, mem)
		b.maxRows = limit
		var rows [][]outCell
		err := b.Block(blk, func(rec arrow.RecordBatch) error {
			if rec.NumRows() > int64(limit) || rec.NumRows() == 0 {
				t.Fatalf("limit %d: record of %d rows", limit, rec.NumRows())
			}
			rows = append(rows, recordCells(t, rec)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		assertCellRows(t, rows, whole)
	}
}

func TestMatrixZeroCopy(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, dt := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
		blk := resultTestBlock(dt)
		b := NewResultBuilder(LayoutMatrix, resultIDCases()[0].v, dt, false, mem)
		err := b.Block(blk, func(rec arrow.RecordBatch) error {
			values := rec.Column(1).(*array.FixedSizeList).ListValues().Data().Buffers()[1].Bytes()
			var first unsafe.Pointer
			switch d := blk.Dist.(type) {
			case []int32:
				first = unsafe.Pointer(&d[0])
			case []int64:
				first = unsafe.Pointer(&d[0])
			case []float32:
				first = unsafe.Pointer(&d[0])
			case []float64:
				first = unsafe.Pointer(&d[0])
			}
			if unsafe.Pointer(&values[0]) != first {
				t.Errorf("%s: matrix values were copied", dt)
			}
			wantNulls := 0
			if !dt.IsFloat() {
				wantNulls = 7
			}
			if got := rec.Column(1).(*array.FixedSizeList).ListValues().NullN(); got != wantNulls {
				t.Errorf("%s: %d nulls, want %d", dt, got, wantNulls)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMatrixRecycle checks that a block's Recycle runs exactly once, when
// the last reference to the matrix record wrapping its distances (the
// record, then a slice a consumer kept) is released, and not before.
func TestMatrixRecycle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	blk := resultTestBlock(graph.DistInt32)
	recycled := 0
	blk.Recycle = func() { recycled++ }
	b := NewResultBuilder(LayoutMatrix, resultIDCases()[0].v, graph.DistInt32, false, mem)
	var kept arrow.RecordBatch
	err := b.Block(blk, func(rec arrow.RecordBatch) error {
		kept = rec.NewSlice(0, 1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if recycled != 0 {
		t.Fatalf("recycled %d times while a slice of the record is alive", recycled)
	}
	kept.Release()
	if recycled != 1 {
		t.Fatalf("recycled %d times after the last release, want 1", recycled)
	}
}

// TestMatrixWide writes a matrix of 65,536 columns in every format and
// checks it cell by cell.
func TestMatrixWide(t *testing.T) {
	const n = 1 << 16
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(i) * 3
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}
	sources := []graph.VertexID{0, 5, n - 1}
	blk := graph.NewBlock(sources, n, graph.DistInt32, false)
	d := graph.DistOf[int32](blk)
	for i := range d {
		if i%7 == 3 {
			d[i] = math.MaxInt32
		} else {
			d[i] = int32(i % 1000)
		}
	}
	dir := t.TempDir()
	for _, format := range []string{outArrow, outArrows, outParquet, outCSV} {
		t.Run(format, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(dir, "wide."+format)
			writeBlockFile(t, path, LayoutMatrix, v, blk, mem)
			got := readBackFile(t, path, format, mem).rows
			if format == outCSV {
				hdr := got[0]
				if len(hdr) != n+1 || hdr[0] != cellOf("source") || hdr[n] != cellOf(strconv.FormatInt(ints[n-1], 10)) {
					t.Fatalf("header of %d cells, last %v", len(hdr), hdr[len(hdr)-1])
				}
				got = got[1:]
			}
			if len(got) != len(sources) {
				t.Fatalf("%d rows", len(got))
			}
			for r, s := range sources {
				if got[r][0] != cellOf(strconv.FormatInt(ints[s], 10)) || len(got[r]) != n+1 {
					t.Fatalf("row %d: source %v, %d cells", r, got[r][0], len(got[r]))
				}
				for j := 0; j < n; j++ {
					x := d[r*n+j]
					want := cellOf(strconv.Itoa(int(x)))
					if x == math.MaxInt32 {
						want = nullCell
					}
					if got[r][j+1] != want {
						t.Fatalf("row %d col %d: %v, want %v", r, j, got[r][j+1], want)
					}
				}
			}
		})
	}
}

func TestVerticesRecord(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, ids := range resultIDCases() {
		rec := VerticesRecord(ids.v, mem)
		if rec.Schema().Field(0).Name != ColVertex || !arrow.TypeEqual(rec.Schema().Field(0).Type, IDType(ids.v)) {
			t.Fatalf("%s: schema %s", ids.name, rec.Schema())
		}
		var want [][]outCell
		for _, s := range ids.text {
			want = append(want, []outCell{cellOf(s)})
		}
		assertCellRows(t, recordCells(t, rec), want)
		rec.Release()
	}
}

func TestBuilderErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	v := resultIDCases()[0].v
	emit := func(arrow.RecordBatch) error { return nil }
	good := resultTestBlock(graph.DistInt32)
	for _, tc := range []struct {
		name   string
		layout Layout
		dt     graph.DistType
		pred   bool
		blk    *graph.Block
	}{
		{"stats layout", LayoutStats, graph.DistInt32, false, good},
		{"type mismatch", LayoutPairs, graph.DistInt64, false, good},
		{"vertex count", LayoutPairs, graph.DistInt32, false, &graph.Block{Sources: resultSources, NumVertices: 4, Type: graph.DistInt32, Dist: make([]int32, 12)}},
		{"short dist", LayoutMatrix, graph.DistInt32, false, &graph.Block{Sources: resultSources, NumVertices: 5, Type: graph.DistInt32, Dist: make([]int32, 14)}},
		{"go type", LayoutMatrix, graph.DistInt32, false, &graph.Block{Sources: resultSources, NumVertices: 5, Type: graph.DistInt32, Dist: make([]int64, 15)}},
		{"source range", LayoutPairs, graph.DistInt32, false, &graph.Block{Sources: []graph.VertexID{5}, NumVertices: 5, Type: graph.DistInt32, Dist: make([]int32, 5)}},
		{"missing pred", LayoutPairs, graph.DistInt32, true, &graph.Block{Sources: resultSources, NumVertices: 5, Type: graph.DistInt32, Dist: make([]int32, 15)}},
	} {
		b := NewResultBuilder(tc.layout, v, tc.dt, tc.pred, mem)
		err := b.Block(tc.blk, emit)
		if err == nil || err.Error()[:9] != "arrowio: " {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
	b := NewResultBuilder(LayoutPairs, v, graph.DistInt32, false, mem)
	if err := b.Stats(graph.ComputeStats(good), emit); err == nil {
		t.Error("Stats on a pairs builder succeeded")
	}
	b = NewResultBuilder(LayoutStats, v, graph.DistInt64, false, mem)
	if err := b.Stats(graph.ComputeStats(good), emit); err == nil {
		t.Error("Stats of another distance type succeeded")
	}
}

// BenchmarkPairs measures the pairs builder alone (no writer), per id type,
// on a block of one record (64 sources of 16,384 vertices) and of four
// (256 sources), which the builder builds side by side.
func BenchmarkPairs(b *testing.B) {
	const n = 1 << 14
	ints := make([]int64, n)
	strs := make([]string, n)
	for i := range ints {
		ints[i] = int64(i) * 11
		strs[i] = "vertex-" + strconv.Itoa(i)
	}
	for _, k := range []int{64, 256} {
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(i * 7 % n)
		}
		blk := graph.NewBlock(sources, n, graph.DistFloat32, true)
		d := graph.DistOf[float32](blk)
		for i := range d {
			d[i] = float32(i%1000) / 8
			if i%10 == 9 {
				d[i] = float32(math.Inf(1))
			}
			blk.Pred[i] = int32(i % n)
		}
		for _, v := range []*Vertices{
			{Type: arrow.PrimitiveTypes.Int64, Ints: ints},
			{Type: arrow.PrimitiveTypes.Uint32, Ints: ints},
			{Type: arrow.BinaryTypes.String, Strings: strs},
		} {
			b.Run(fmt.Sprintf("%s/%d-sources", IDType(v), k), func(b *testing.B) {
				rb := NewResultBuilder(LayoutPairs, v, graph.DistFloat32, true, memory.NewGoAllocator())
				rows := 0
				for b.Loop() {
					err := rb.Block(blk, func(rec arrow.RecordBatch) error {
						rows += int(rec.NumRows())
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "pairs/s")
			})
		}
	}
}

// TestEmptyGraph writes every layout of a graph without vertices: a valid
// file with no rows.
func TestEmptyGraph(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64}
	dir := t.TempDir()
	for _, layout := range []Layout{LayoutPairs, LayoutMatrix, LayoutStats} {
		for _, format := range []string{outArrow, outArrows, outParquet, outCSV} {
			b := NewResultBuilder(layout, v, graph.DistInt32, false, mem)
			path := filepath.Join(dir, string(layout)+"."+format)
			w, err := CreateResult(path, b.Schema(), WriteOptions{Allocator: mem, Vertices: v})
			if err != nil {
				t.Fatalf("%s %s: %v", layout, format, err)
			}
			blk := graph.NewBlock(nil, 0, graph.DistInt32, false)
			if layout == LayoutStats {
				err = b.Stats(graph.ComputeStats(blk), w.Write)
			} else {
				err = b.Block(blk, w.Write)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", layout, format, err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("%s %s: %v", layout, format, err)
			}
			got := readBackFile(t, path, format, mem)
			want := 0
			if format == outCSV {
				want = 1 // the header
			}
			if len(got.rows) != want {
				t.Fatalf("%s %s: rows %v", layout, format, got.rows)
			}
		}
	}
}

// TestMatrixValidityRoom checks the bitmaps of a block with room for one
// (graph.Block.Valid): built in that room when the runner left it alone,
// taken as the runner left it when ValidSet (even where it disagrees with
// the distances, so that the test can tell it was not rebuilt), absent when
// the runner counted no nulls, and the block recycled once both buffers
// that wrap its memory are released.
func TestMatrixValidityRoom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      bool
		runner   []byte // the runner's bitmap, when set
		nulls    int
		wantNull func(i int, inf bool) bool
	}{
		{name: "built in the room", wantNull: func(_ int, inf bool) bool { return inf }},
		{name: "runner's bitmap", set: true, runner: []byte{0xfe, 0xff, 0xff, 0xff}, nulls: 1,
			wantNull: func(i int, _ bool) bool { return i == 0 }},
		{name: "runner counted no nulls", set: true, runner: []byte{0, 0, 0, 0}, nulls: 0,
			wantNull: func(int, bool) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			blk := resultTestBlock(graph.DistInt32)
			blk.Pred = nil
			cells := len(blk.Sources) * blk.NumVertices
			blk.Valid = make([]byte, (cells+7)/8+3) // room to spare
			if tc.set {
				copy(blk.Valid, tc.runner)
				blk.ValidSet, blk.Nulls = true, tc.nulls
			}
			recycled := 0
			blk.Recycle = func() { recycled++ }
			b := NewResultBuilder(LayoutMatrix, resultIDCases()[0].v, graph.DistInt32, false, mem)
			var kept arrow.RecordBatch
			if err := b.Block(blk, func(rec arrow.RecordBatch) error {
				rec.Retain()
				kept = rec
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			values := kept.Column(1).(*array.FixedSizeList).ListValues()
			infs := 0
			for i := range cells {
				_, inf := distText(blk, i)
				if inf {
					infs++
				}
				if got, want := values.IsNull(i), tc.wantNull(i, inf); got != want {
					t.Errorf("entry %d: null %v, want %v", i, got, want)
				}
			}
			if infs == 0 {
				t.Fatal("the test block has no unreachable entry")
			}
			if bufs := values.Data().Buffers(); bufs[0] != nil && len(bufs[0].Bytes()) > 0 && &bufs[0].Bytes()[0] != &blk.Valid[0] {
				t.Error("the bitmap is not the block's room")
			}
			// The values buffer alone outliving the record keeps the block.
			vals := values.Data().Buffers()[1]
			vals.Retain()
			kept.Release()
			if recycled != 0 {
				t.Fatalf("recycled while a buffer is alive")
			}
			vals.Release()
			if recycled != 1 {
				t.Fatalf("recycled %d times, want 1", recycled)
			}
		})
	}
}
