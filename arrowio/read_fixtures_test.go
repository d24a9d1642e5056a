package arrowio

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSampleFixtures reads the bundled sample graph (go run
// ./internal/cmd/mkfixtures) in all its formats: each is the same graph of
// 2,000 vertices with ids 1..2000 and 16,000 int64-weighted edges.
func TestSampleFixtures(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var first *EdgeTable
	for _, name := range []string{"sample.parquet", "sample.arrow", "sample.csv", "sample.gr"} {
		tbl, err := ReadEdges(filepath.Join("..", "testdata", name), ReadOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		v := tbl.Vertices
		if v.Len() != 2000 || tbl.Edges.Len() != 16000 || !arrow.TypeEqual(v.Type, arrow.PrimitiveTypes.Int64) {
			t.Fatalf("%s: %d vertices of %v, %d edges; want 2000 int64, 16000", name, v.Len(), v.Type, tbl.Edges.Len())
		}
		if v.Ints[0] != 1 || v.Ints[1999] != 2000 {
			t.Fatalf("%s: ids %d..%d, want 1..2000", name, v.Ints[0], v.Ints[1999])
		}
		w := tbl.Edges.IntWeights
		if len(w) != 16000 || slices.Min(w) < 1 || slices.Max(w) > 100 {
			t.Fatalf("%s: weights outside 1..100", name)
		}
		if first == nil {
			first = tbl
			continue
		}
		if !slices.Equal(tbl.Edges.Src, first.Edges.Src) || !slices.Equal(tbl.Edges.Dst, first.Edges.Dst) || !slices.Equal(w, first.Edges.IntWeights) {
			t.Fatalf("%s differs from %s", name, first.Name)
		}
	}
	tiny, err := ReadEdges(filepath.Join("..", "testdata", "tiny.csv"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"amsterdam", "berlin", "lyon", "milan", "paris", "prague", "rome", "vienna"}
	if !slices.Equal(tiny.Vertices.Strings, want) || tiny.Edges.Len() != 8 {
		t.Fatalf("tiny.csv: vertices %v, %d edges", tiny.Vertices.Strings, tiny.Edges.Len())
	}
}
