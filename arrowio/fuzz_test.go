package arrowio

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The fuzz targets assert that a reader returns a table or an error, never
// panics, and that a table it returns is consistent: every dense id within
// [0, Vertices.Len()), one weight per edge, vertices strictly ascending.

// fuzzVertexLimit keeps inputs that announce huge vertex counts from
// exhausting memory while fuzzing.
const fuzzVertexLimit = 1 << 20

func checkFuzzResult(t *testing.T, tbl *EdgeTable, err error) {
	t.Helper()
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "arrowio: ") || strings.Contains(msg, "\n") {
			t.Fatalf("error %q is not one line prefixed \"arrowio: \"", msg)
		}
		return
	}
	e, v := &tbl.Edges, tbl.Vertices
	n := v.Len()
	if e.NumVertices != n {
		t.Fatalf("Edges.NumVertices %d, Vertices.Len %d", e.NumVertices, n)
	}
	if len(e.Dst) != len(e.Src) {
		t.Fatalf("%d sources, %d targets", len(e.Src), len(e.Dst))
	}
	for i := range e.Src {
		if s, d := e.Src[i], e.Dst[i]; s < 0 || int(s) >= n || d < 0 || int(d) >= n {
			t.Fatalf("row %d: edge %d -> %d outside [0, %d)", i, s, d, n)
		}
	}
	for _, l := range []int{len(e.IntWeights), len(e.Float32Weights), len(e.Float64Weights)} {
		if l != 0 && l != len(e.Src) {
			t.Fatalf("%d weights for %d edges", l, len(e.Src))
		}
	}
	if v.IsString() {
		if !slices.IsSorted(v.Strings) || len(slices.Compact(slices.Clone(v.Strings))) != n {
			t.Fatal("string vertices not strictly ascending")
		}
	} else {
		keys := make([]int64, n)
		for i, x := range v.Ints {
			keys[i] = intKey(uint64(x), v.Type != nil && v.Type.ID() == arrow.UINT64)
		}
		if !slices.IsSorted(keys) || len(slices.Compact(keys)) != n {
			t.Fatal("integer vertices not strictly ascending")
		}
	}
}

func limitVertices(f *testing.F) {
	oldCount, oldBody := maxVertexCount, ipcBodySizeLimit
	maxVertexCount, ipcBodySizeLimit = fuzzVertexLimit, 64<<20
	f.Cleanup(func() { maxVertexCount, ipcBodySizeLimit = oldCount, oldBody })
}

func FuzzReadCSV(f *testing.F) {
	limitVertices(f)
	rng := rand.New(rand.NewPCG(21, 22))
	e := randomIntIDs(rng, arrow.PrimitiveTypes.Int16, 12, 8)
	e.weights = randomWeights(rng, arrow.PrimitiveTypes.Float32, 12)
	s := randomStringIDs(rng, 6, 4)
	s.src[0] = "a"
	f.Add(e.delimitedText(f, ',', [3]string{"src", "dst", "weight"}))
	f.Add(s.delimitedText(f, '\t', [3]string{"src", "dst", "weight"}))
	f.Add([]byte("src,dst\n1,2\n007,x\n"))
	f.Add([]byte("src,dst,weight\n1,2,3\n2,3,0.5\n3,1,-4\n"))
	f.Add(gzipped(f, []byte("src,dst\n1,2\n")))
	f.Add(zstded(f, []byte("src\tdst\n1\t2\n")))
	// Issue 14: duplicate columns, and one line over the line limit.
	f.Add([]byte("src,dst,src\n1,2,3\n"))
	f.Add([]byte("src,dst,weight,weight\n1,2,3,4\n"))
	f.Add([]byte("src,dst\n1," + strings.Repeat("9", maxTextLine+1) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"csv", "tsv"} {
			tbl, err := ReadEdgesFrom(bytes.NewReader(data), "fuzz."+format, ReadOptions{})
			checkFuzzResult(t, tbl, err)
		}
	})
}

func FuzzReadDIMACS(f *testing.F) {
	limitVertices(f)
	text, _, _, _ := dimacsText(rand.New(rand.NewPCG(1, 2)), 8, 12)
	f.Add([]byte(text))
	f.Add([]byte("c x\np sp 3 2\na 1 2 5\na 3 3 -1\n"))
	f.Add([]byte("p sp 0 0\n"))
	// Issue 14: a 30-byte header that allocated 16 GB of ids.
	f.Add([]byte("p sp 2000000000 1\na 1 2 1\n"))
	f.Add(gzipped(f, []byte("p sp 2 1\na 1 2 1\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := ReadEdgesFrom(bytes.NewReader(data), "fuzz.gr", ReadOptions{})
		checkFuzzResult(t, tbl, err)
	})
}

// columnarSeeds are small valid tables of several id and weight types.
func columnarSeeds(f *testing.F, write func(testing.TB, *arrow.Schema, []arrow.RecordBatch) []byte) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct{ id, w arrow.DataType }{
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64},
		{arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int32},
		{arrow.BinaryTypes.String, nil},
		{stringDict, arrow.FixedWidthTypes.Float16},
	} {
		var e logicalEdges
		if arrow.IsInteger(c.id.ID()) {
			e = randomIntIDs(rng, c.id, 10, 6)
		} else {
			e = randomStringIDs(rng, 10, 6)
		}
		if c.w != nil {
			e.weights = randomWeights(rng, c.w, 10)
		}
		schema, recs := e.records(f, mem, [3]string{"src", "dst", "weight"}, c.id, c.id, c.w, 10)
		f.Add(write(f, schema, recs))
		releaseAll(recs)
	}
}

func FuzzReadIPC(f *testing.F) {
	limitVertices(f)
	columnarSeeds(f, writeIPCFile)
	columnarSeeds(f, writeIPCStream)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"arrow", "arrows"} {
			tbl, err := ReadEdgesFrom(bytes.NewReader(data), "fuzz", ReadOptions{Format: format})
			checkFuzzResult(t, tbl, err)
		}
	})
}

func FuzzReadParquet(f *testing.F) {
	limitVertices(f)
	columnarSeeds(f, writeParquet)
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := ReadEdgesFrom(bytes.NewReader(data), "fuzz.parquet", ReadOptions{})
		checkFuzzResult(t, tbl, err)
	})
}
