package flight

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
)

// gridUpload is pathctl gen grid side×side (seed 1) as one edge batch of
// int64 ids and weights, with its CSR (int64 weights) for the oracle.
func gridUpload(t *testing.T, side int) (*arrow.Schema, []arrow.RecordBatch, *graph.CSR) {
	t.Helper()
	list, err := gen.Grid(side, side, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := list.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	csr, err := graph.Build(e, graph.BuildOptions{DistType: graph.DistInt64})
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(list.Src, nil)
	b.Field(1).(*array.Int64Builder).AppendValues(list.Dst, nil)
	b.Field(2).(*array.Int64Builder).AppendValues(list.Weights, nil)
	return schema, []arrow.RecordBatch{b.NewRecordBatch()}, csr
}

// hierarchyOf is the "hierarchy" of graph name's listing.
func hierarchyOf(t *testing.T, cl flight.Client, name string) string {
	t.Helper()
	stream, err := cl.ListFlights(context.Background(), &flight.Criteria{Expression: []byte(name)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no graph %q listed", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		var m publicMeta
		if err := json.Unmarshal(info.AppMetadata, &m); err != nil {
			t.Fatal(err)
		}
		if m.Name == name {
			return m.Hierarchy
		}
	}
}

// waitHierarchy polls the listing until graph name's hierarchy is want.
func waitHierarchy(t *testing.T, cl flight.Client, name, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := hierarchyOf(t, cl, name)
		if got == want {
			return
		}
		if got == HierarchyFailed || time.Now().After(deadline) {
			t.Fatalf("graph %q: hierarchy %q, want %q", name, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGridQuery runs a pairs query of auto from sources on the grid and
// compares every distance with serial Dijkstra; with wantCH, the call's
// log line must name the algorithm ch.
func checkGridQuery(t *testing.T, ts *testServer, cl flight.Client, csr *graph.CSR, sources []int64, wantCH bool) {
	t.Helper()
	q, _ := json.Marshal(map[string]any{"graph": "grid", "sources": sources, "engine": "cpu"})
	_, recs, err := doGet(context.Background(), cl, string(q), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	got := map[[2]int64]int64{}
	for _, r := range recs {
		src, dst := r.Column(0).(*array.Int64), r.Column(1).(*array.Int64)
		for i := range int(r.NumRows()) {
			var d int64
			switch col := r.Column(2).(type) {
			case *array.Int32:
				d = int64(col.Value(i))
			case *array.Int64:
				d = col.Value(i)
			default:
				t.Fatalf("distance column %s", col.DataType())
			}
			got[[2]int64{src.Value(i), dst.Value(i)}] = d
		}
	}
	for _, s := range sources {
		want, err := ref.Distances[int64](csr, graph.VertexID(s))
		if err != nil {
			t.Fatal(err)
		}
		for v, d := range want {
			if g, ok := got[[2]int64{s, int64(v)}]; !ok || g != d {
				t.Fatalf("distance %d -> %d: %d (listed %v), oracle %d", s, v, g, ok, d)
			}
		}
	}
	if len(got) != len(sources)*csr.NumVertices {
		t.Errorf("%d pairs, want %d", len(got), len(sources)*csr.NumVertices)
	}
	if wantCH {
		waitFor(t, func() bool { return strings.Contains(ts.logs.String(), `algorithm="ch (contraction hierarchy`) })
	}
}

// TestBackgroundHierarchy uploads a road-like grid: the server builds its
// hierarchy in the background and stores it beside the table; queries use
// it; a restart on the same directory reads it back instead of building
// it; a damaged file is built again; a replacement and a drop remove the
// old version's file.
func TestBackgroundHierarchy(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	schema, recs, csr := gridUpload(t, 40) // 1,600 vertices: auto from every one builds
	defer releaseAll(recs)

	// 1. Upload: built once in the background, stored, used.
	ts := startServer(t, Config{DataDir: dir})
	cl := dial(t, ts.addr)
	if _, err := upload(ctx, cl, pathDesc("grid"), nil, schema, recs); err != nil {
		t.Fatal(err)
	}
	uploadCase(t, ctx, cl, "small", smallCase("small", "1 2 3", "2 3 4"))
	meta, _ := ts.store.get("grid") // the table's file name, which clients do not see
	small, _ := ts.store.get("small")
	waitHierarchy(t, cl, "grid", HierarchyReady)
	if _, err := os.Stat(filepath.Join(dir, dataDir, indexFile(meta.Data))); err != nil {
		t.Fatalf("the hierarchy is not stored beside the table: %v", err)
	}
	if built, read := ts.index.counts(); built != 1 || read != 0 {
		t.Errorf("after the upload: %d built, %d read; want 1, 0", built, read)
	}
	checkGridQuery(t, ts, cl, csr, []int64{0, 777, 1599}, true)
	if got := hierarchyOf(t, cl, "small"); got != "" {
		t.Errorf("a 3-vertex graph's hierarchy: %q, want none", got)
	}
	if _, err := os.Stat(filepath.Join(dir, dataDir, indexFile(small.Data))); err == nil {
		t.Errorf("a hierarchy file for a 3-vertex graph")
	}
	ts.shutdown(t)

	// 2. Restart: read back with the graph, not built.
	ts = startServer(t, Config{DataDir: dir})
	cl = dial(t, ts.addr)
	if got := hierarchyOf(t, cl, "grid"); got != HierarchyReady {
		t.Errorf("after the restart, before a query: %q, want %q", got, HierarchyReady)
	}
	checkGridQuery(t, ts, cl, csr, []int64{5, 1234}, true)
	if built, read := ts.index.counts(); built != 0 || read != 1 {
		t.Errorf("after the restart: %d built, %d read; want 0, 1", built, read)
	}
	ts.shutdown(t)

	// 3. A damaged file: refused, removed and built again.
	path := filepath.Join(dir, dataDir, indexFile(meta.Data))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, Config{DataDir: dir})
	cl = dial(t, ts.addr)
	checkGridQuery(t, ts, cl, csr, []int64{42}, false) // the search kernels: one source does not repay a build
	waitHierarchy(t, cl, "grid", HierarchyReady)
	checkGridQuery(t, ts, cl, csr, []int64{43}, true)
	if built, read := ts.index.counts(); built != 1 || read != 0 {
		t.Errorf("after a damaged file: %d built, %d read; want 1, 0", built, read)
	}
	if !strings.Contains(ts.logs.String(), "removing a hierarchy file") {
		t.Errorf("the damaged file was not reported:\n%s", ts.logs.String())
	}

	// 4. A replacement removes the old file; a drop the new one.
	schema41, recs41, _ := gridUpload(t, 41)
	defer releaseAll(recs41)
	if _, err := upload(ctx, cl, pathDesc("grid"), nil, schema41, recs41); err != nil {
		t.Fatal(err)
	}
	replaced, _ := ts.store.get("grid")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the replaced graph's hierarchy file: %v, want it removed", err)
	}
	waitHierarchy(t, cl, "grid", HierarchyReady)
	newPath := filepath.Join(dir, dataDir, indexFile(replaced.Data))
	if _, err := os.Stat(newPath); err != nil {
		t.Fatalf("the replacement's hierarchy: %v", err)
	}
	if _, err := doAction(ctx, cl, ActionDrop, "grid"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(newPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dropped graph's hierarchy file: %v, want it removed", err)
	}
	ts.shutdown(t)
	checkNoLeftovers(t, dir)
	entries, _ := os.ReadDir(filepath.Join(dir, dataDir))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), indexExt) {
			t.Errorf("left in data/: %s", e.Name())
		}
	}
}

// TestBackgroundHierarchyOff checks --no-background-index: nothing is
// built, and the graph's queries still answer.
func TestBackgroundHierarchyOff(t *testing.T) {
	schema, recs, _ := gridUpload(t, 40)
	defer releaseAll(recs)
	ts := startServer(t, Config{NoBackgroundIndex: true})
	cl := dial(t, ts.addr)
	if _, err := upload(context.Background(), cl, pathDesc("grid"), nil, schema, recs); err != nil {
		t.Fatal(err)
	}
	_, out, err := doGet(context.Background(), cl, `{"graph": "grid", "sources": [3], "layout": "stats"}`, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(out)
	if got := hierarchyOf(t, cl, "grid"); got != "" {
		t.Errorf("hierarchy %q with the builds off, want none", got)
	}
	if built, _ := ts.index.counts(); built != 0 {
		t.Errorf("%d built with the builds off", built)
	}
}
