package flight

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/pipeline"
)

// TestResidentCSRNotUploadedAgain runs GPU queries on one graph through
// the server's shared engine: the first query uploads the CSR once and
// leaves it resident (counted in the cache as on the device), the next
// ones (stats and pairs) upload nothing and answer exactly as before and
// as the CPU engine; a drop frees the copy; a new upload, the device being
// open, is built on the device and kept, and its queries upload nothing.
func TestResidentCSRNotUploadedAgain(t *testing.T) {
	if st := pipeline.GPUStatus(); !st.Available {
		t.Skip("no usable GPU: " + st.Reason)
	}
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	uploadRMAT(t, ctx, cl, "rmat", 10)
	get := func(q string) arrow.Table {
		t.Helper()
		schema, recs, err := doGet(ctx, cl, q, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer releaseAll(recs)
		return tableOf(schema, recs)
	}
	uploads := func(step string, want int64) {
		t.Helper()
		if got := ts.gpu.GraphUploads(); got != want {
			t.Errorf("%s: the shared engine uploaded a CSR %d times, want %d", step, got, want)
		}
	}
	for _, layout := range []string{"stats", "pairs"} {
		cpu := get(fmt.Sprintf(`{"graph": "rmat", "layout": %q, "engine": "cpu", "algorithm": "dijkstra"}`, layout))
		defer cpu.Release()
		q := fmt.Sprintf(`{"graph": "rmat", "layout": %q, "engine": "gpu", "algorithm": "dijkstra"}`, layout)
		first := get(q)
		defer first.Release()
		uploads(layout+", first query", 1)
		second := get(q)
		defer second.Release()
		uploads(layout+", second query", 1)
		if !sameTable(first, second) {
			t.Errorf("%s: the second GPU query's result differs from the first's", layout)
		}
		if layout == "pairs" && !sameTable(first, cpu) {
			t.Errorf("%s: the GPU result differs from the CPU engine's", layout)
		}
		if layout == "stats" && !sameColumns(first, cpu, "source", "reachable", "eccentricity", "sum") {
			t.Errorf("%s: the GPU's counts and sums differ from the CPU engine's", layout)
		}
	}
	n, b := ts.cache.deviceStats()
	if n != 1 || b == 0 || ts.gpu.KeptBytes() != b {
		t.Errorf("the cache counts %d resident graphs of %d bytes, the device keeps %d; want 1 graph", n, b, ts.gpu.KeptBytes())
	}
	if _, err := doAction(ctx, cl, ActionDrop, "rmat"); err != nil {
		t.Fatal(err)
	}
	if kept := ts.gpu.KeptBytes(); kept != 0 {
		t.Errorf("the device keeps %d bytes after the graph was dropped", kept)
	}
	// With the device open and idle, a new upload is built on it and kept.
	uploadRMAT(t, ctx, cl, "rmat", 10)
	if n, b := ts.cache.deviceStats(); n != 1 || b == 0 || ts.gpu.KeptBytes() != b {
		t.Errorf("after a new upload: the cache counts %d resident graphs of %d bytes, the device keeps %d", n, b, ts.gpu.KeptBytes())
	}
	stats := get(`{"graph": "rmat", "layout": "stats", "engine": "gpu", "algorithm": "dijkstra"}`)
	defer stats.Release()
	uploads("after a new upload built on the device", 1)
	cpu := get(`{"graph": "rmat", "layout": "stats", "engine": "cpu", "algorithm": "dijkstra"}`)
	defer cpu.Release()
	if !sameColumns(stats, cpu, "source", "reachable", "eccentricity", "sum") {
		t.Error("stats on the CSR built on the device differ from the CPU engine's")
	}
}

// sameTable reports whether two tables hold equal columns, however their
// rows are cut into batches.
func sameTable(a, b arrow.Table) bool {
	if a.NumCols() != b.NumCols() {
		return false
	}
	names := make([]string, a.NumCols())
	for i := range names {
		names[i] = a.Schema().Field(i).Name
	}
	return sameColumns(a, b, names...)
}

// sameColumns reports whether the columns names of a and b are equal.
func sameColumns(a, b arrow.Table, names ...string) bool {
	if a.NumRows() != b.NumRows() {
		return false
	}
	for _, name := range names {
		ia, ib := a.Schema().FieldIndices(name), b.Schema().FieldIndices(name)
		if len(ia) != 1 || len(ib) != 1 {
			return false
		}
		ca, err := array.Concatenate(a.Column(ia[0]).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			return false
		}
		cb, err := array.Concatenate(b.Column(ib[0]).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			ca.Release()
			return false
		}
		equal := array.Equal(ca, cb)
		ca.Release()
		cb.Release()
		if !equal {
			return false
		}
	}
	return true
}
