package flight

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// fakeKeeper keeps CSRs on a pretend device: it records what is resident
// and what was freed, and refuses the graphs named in refuse.
type fakeKeeper struct {
	mu       sync.Mutex
	resident map[*pipeline.Graph]int64
	keeps    int
	forgets  int
	refuse   map[string]bool // by table name
	// build makes LoadGraph keep what it loads, as a build on the device.
	build bool
}

func newFakeKeeper() *fakeKeeper {
	return &fakeKeeper{resident: map[*pipeline.Graph]int64{}, refuse: map[string]bool{}}
}

func (f *fakeKeeper) Keep(_ context.Context, g *pipeline.Graph) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse[g.Table.Name] {
		return 0, errors.New("fake device: out of memory")
	}
	f.keeps++
	f.resident[g] = csrBytes(g)
	return csrBytes(g), nil
}

func (f *fakeKeeper) LoadGraph(_ context.Context, t *arrowio.EdgeTable, opt pipeline.LoadOptions) (*pipeline.Graph, int64, error) {
	g, err := pipeline.LoadGraph(t, opt)
	if err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.build || f.refuse[t.Name] {
		return g, 0, nil
	}
	f.keeps++
	f.resident[g] = csrBytes(g)
	return g, csrBytes(g), nil
}

func (f *fakeKeeper) Forget(g *pipeline.Graph) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.resident[g]; !ok {
		return fmt.Errorf("fake device: %s freed twice or never kept", g.Table.Name)
	}
	f.forgets++
	delete(f.resident, g)
	return nil
}

// state returns the resident graphs' names and device bytes, and the
// counts of keeps and forgets.
func (f *fakeKeeper) state() (names map[string]bool, bytes int64, keeps, forgets int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	names = map[string]bool{}
	for g, b := range f.resident {
		names[g.Table.Name] = true
		bytes += b
	}
	return names, bytes, f.keeps, f.forgets
}

// checkResident compares the fake device with the names wanted resident
// and the cache's count of device bytes with the fake's.
func checkResident(t *testing.T, step string, ts *testServer, f *fakeKeeper, want ...string) {
	t.Helper()
	names, bytes, _, _ := f.state()
	if len(names) != len(want) {
		t.Errorf("%s: resident %v, want %v", step, names, want)
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("%s: %s is not resident (resident: %v)", step, w, names)
		}
	}
	if n, b := ts.cache.deviceStats(); n != len(want) || b != bytes {
		t.Errorf("%s: the cache counts %d resident graphs of %d device bytes; the device holds %d of %d", step, n, b, len(names), bytes)
	}
}

// TestResidentCSRFollowsTheCache runs the server with a fake device: a
// query that would take the GPU makes its graph resident once (the next
// query keeps it), CPU queries do not, the device bytes count in the
// cache's budget and make it evict (freeing the evicted graph's copy), a
// drop and a replacement free the old copy, a graph the device refuses
// runs all the same, and shutdown frees what is left. Results are
// checked against the test case every time.
func TestResidentCSRFollowsTheCache(t *testing.T) {
	keeper := newFakeKeeper()
	ts := startServer(t, Config{keeper: keeper})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	for _, name := range []string{"a", "b", "c"} {
		uploadCase(t, ctx, cl, name, c)
	}
	query := func(name, engine string) {
		t.Helper()
		_, recs, err := doGet(ctx, cl, fmt.Sprintf(`{"graph": %q, "engine": %q, "algorithm": "dijkstra"}`, name, engine), nil)
		if err != nil {
			t.Fatalf("query %s on %s: %v", name, engine, err)
		}
		checkPairsAgainstCase(t, c, recs, false, nil)
		releaseAll(recs)
	}
	query("a", "cpu")
	checkResident(t, "a CPU query", ts, keeper)
	query("a", "auto")
	query("a", "auto")
	checkResident(t, "two auto queries", ts, keeper, "a")
	if _, _, keeps, _ := keeper.state(); keeps != 1 {
		t.Errorf("two auto queries of a kept it %d times, want once", keeps)
	}
	_, host := ts.cache.stats()
	_, device := ts.cache.deviceStats()
	if device == 0 || host <= device {
		t.Fatalf("cache: %d bytes, %d of them on the device", host, device)
	}

	// Room for two graphs on the host and one on the device: making b
	// resident evicts the least recently used, c (host only), then a,
	// whose device copy goes with it.
	ts.cache.mu.Lock()
	per := (host - device) / 3
	budget := 2*per + device
	ts.cache.max = budget
	ts.cache.mu.Unlock()
	query("b", "auto")
	checkResident(t, "b resident within the budget", ts, keeper, "b")
	if n, used := ts.cache.stats(); used > budget || n != 1 {
		t.Errorf("cache holds %d graphs, %d bytes; want b alone within the budget %d", n, used, budget)
	}
	query("a", "auto") // read again, made resident again: b goes
	checkResident(t, "a again", ts, keeper, "a")

	// A replacement frees the old copy; the new one becomes resident on
	// its first GPU query.
	uploadCase(t, ctx, cl, "a", c)
	checkResident(t, "a replaced", ts, keeper)
	query("a", "auto")
	checkResident(t, "new a", ts, keeper, "a")
	// A drop frees it.
	if _, err := doAction(ctx, cl, ActionDrop, "a"); err != nil {
		t.Fatal(err)
	}
	checkResident(t, "a dropped", ts, keeper)

	// A graph the device refuses is answered all the same, host only.
	keeper.mu.Lock()
	keeper.refuse["c"] = true
	keeper.mu.Unlock()
	query("c", "auto")
	checkResident(t, "c refused", ts, keeper)

	query("b", "auto")
	checkResident(t, "b", ts, keeper, "b")
	ts.shutdown(t)
	checkResident(t, "shutdown", ts, keeper)
	if _, _, keeps, forgets := keeper.state(); keeps != forgets {
		t.Errorf("%d copies kept, %d freed", keeps, forgets)
	}
}

// TestNoResidentCSR checks that Config.NoResidentCSR keeps nothing on the
// device.
func TestNoResidentCSR(t *testing.T) {
	keeper := newFakeKeeper()
	ts := startServer(t, Config{keeper: keeper, NoResidentCSR: true})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	uploadCase(t, ctx, cl, "a", c)
	_, recs, err := doGet(ctx, cl, `{"graph": "a", "engine": "auto"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(recs)
	if _, _, keeps, _ := keeper.state(); keeps != 0 {
		t.Errorf("NoResidentCSR: %d graphs kept on the device", keeps)
	}
}

// TestResidentCSRBuiltOnDevice runs the server with a fake device that
// builds what the server loads: an upload is resident before any query
// (no Keep), and so is a graph read back from its file after an eviction;
// a replacement, a drop and shutdown free the copies, and nothing is kept
// twice.
func TestResidentCSRBuiltOnDevice(t *testing.T) {
	keeper := newFakeKeeper()
	keeper.build = true
	ts := startServer(t, Config{keeper: keeper})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	uploadCase(t, ctx, cl, "a", c)
	checkResident(t, "upload", ts, keeper, "a")
	uploadCase(t, ctx, cl, "a", c)
	checkResident(t, "replacement", ts, keeper, "a")
	_, recs, err := doGet(ctx, cl, `{"graph": "a", "engine": "auto", "algorithm": "dijkstra"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkPairsAgainstCase(t, c, recs, false, nil)
	releaseAll(recs)
	// Forgotten by the cache, read back from the file: built again.
	ts.cache.clear()
	checkResident(t, "cache cleared", ts, keeper)
	_, recs, err = doGet(ctx, cl, `{"graph": "a", "engine": "cpu", "algorithm": "dijkstra"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkPairsAgainstCase(t, c, recs, false, nil)
	releaseAll(recs)
	checkResident(t, "read back", ts, keeper, "a")
	uploadCase(t, ctx, cl, "b", c)
	if _, err := doAction(ctx, cl, ActionDrop, "a"); err != nil {
		t.Fatal(err)
	}
	checkResident(t, "a dropped", ts, keeper, "b")
	ts.shutdown(t)
	checkResident(t, "shutdown", ts, keeper)
	if _, _, keeps, forgets := keeper.state(); keeps != 4 || forgets != 4 {
		t.Errorf("%d copies kept, %d freed; want 4 and 4", keeps, forgets)
	}
}

// TestGPUFailureFallsBackToCPU runs queries through a stand-in for
// a run whose GPU runs fail with a driver error: an auto query that
// failed before sending anything runs again on the CPU and answers right;
// one that failed after sending a batch, a query for the gpu engine and a
// failure that is not the device's are errors, not run again.
func TestGPUFailureFallsBackToCPU(t *testing.T) {
	deviceErr := fmt.Errorf("pipeline: %w", &gpu.DriverError{Call: "cuMemAlloc_v2", Result: gpu.ResultOutOfMemory})
	var mu sync.Mutex
	var engines []string
	failAfterBatch, otherErr := false, false
	run := func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		engine := q.Options().Engine
		mu.Lock()
		engines = append(engines, engine)
		afterBatch, other := failAfterBatch, otherErr
		mu.Unlock()
		if engine == "cpu" {
			return q.Run(ctx, emit)
		}
		if other {
			return nil, errors.New("pipeline: something else")
		}
		if !afterBatch {
			return nil, deviceErr
		}
		sent := false
		_, err := q.OnCPU().Run(ctx, func(rec arrow.RecordBatch) error {
			if sent {
				return nil
			}
			sent = true
			return emit(rec)
		})
		if err != nil {
			return nil, err
		}
		return nil, deviceErr
	}
	ts := startServer(t, Config{keeper: newFakeKeeper(), run: run})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	uploadCase(t, ctx, cl, "g", c)
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := engines
		engines = nil
		return out
	}

	_, recs, err := doGet(ctx, cl, `{"graph": "g", "algorithm": "dijkstra"}`, nil)
	if err != nil {
		t.Fatalf("auto query with a failing GPU: %v", err)
	}
	checkPairsAgainstCase(t, c, recs, false, nil)
	releaseAll(recs)
	if got := take(); fmt.Sprint(got) != "[auto cpu]" {
		t.Errorf("runs %v, want [auto cpu]", got)
	}
	if !strings.Contains(ts.logs.String(), "running the query on the CPU") {
		t.Error("the fallback is not logged")
	}

	if _, _, err := doGet(ctx, cl, `{"graph": "g", "engine": "gpu"}`, nil); err == nil {
		t.Error("gpu query with a failing GPU: no error")
	}
	if got := take(); fmt.Sprint(got) != "[gpu]" {
		t.Errorf("gpu query: runs %v, want [gpu] alone", got)
	}

	mu.Lock()
	failAfterBatch = true
	mu.Unlock()
	if _, recs, err := doGet(ctx, cl, `{"graph": "g", "layout": "matrix", "algorithm": "dijkstra"}`, nil); err == nil {
		releaseAll(recs)
		t.Error("auto query whose GPU failed after a batch: no error")
	}
	if got := take(); fmt.Sprint(got) != "[auto]" {
		t.Errorf("failure after a batch: runs %v, want [auto] alone", got)
	}

	mu.Lock()
	failAfterBatch, otherErr = false, true
	mu.Unlock()
	if _, _, err := doGet(ctx, cl, `{"graph": "g"}`, nil); err == nil {
		t.Error("auto query failing for another reason: no error")
	}
	if got := take(); fmt.Sprint(got) != "[auto]" {
		t.Errorf("other failure: runs %v, want [auto] alone", got)
	}
}
