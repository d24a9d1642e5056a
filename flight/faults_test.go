package flight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// smallCase builds a test case from rows "src dst weight".
func smallCase(name string, rows ...string) testgraphs.Case {
	c := testgraphs.Case{Name: name, Kind: testgraphs.Int}
	for _, r := range rows {
		var s, d string
		var w float64
		fmt.Sscan(r, &s, &d, &w)
		c.Src, c.Dst, c.Weights = append(c.Src, s), append(c.Dst, d), append(c.Weights, w)
	}
	return c
}

func TestBadRequests(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	uploadCase(t, ctx, cl, "good", smallCase("good", "1 2 3", "2 3 4"))
	uploadCase(t, ctx, cl, "neg", smallCase("neg", "1 2 -1", "2 3 2"))
	uploadCase(t, ctx, cl, "cycle", smallCase("cycle", "1 2 1", "2 1 -3", "2 3 1"))

	queries := []struct {
		name, query, code, inMessage string
	}{
		{"not JSON", `{"graph": "good"`, "InvalidArgument", "malformed request"},
		{"not an object", `[1, 2]`, "InvalidArgument", "malformed request"},
		{"misspelt option", `{"graph": "good", "algo": "bfs"}`, "InvalidArgument", `unknown field "algo"`},
		{"trailing data", `{"graph": "good"} {}`, "InvalidArgument", "trailing data"},
		{"no graph", `{"algorithm": "bfs"}`, "InvalidArgument", `names no "graph"`},
		{"unknown graph", `{"graph": "nope"}`, "NotFound", `no graph "nope"`},
		{"graph name with a slash", `{"graph": "../good"}`, "InvalidArgument", "graph name"},
		{"unknown algorithm", `{"graph": "good", "algorithm": "astar"}`, "InvalidArgument", `unknown algorithm "astar"`},
		{"unknown layout", `{"graph": "good", "layout": "grid"}`, "InvalidArgument", `unknown layout "grid"`},
		{"unknown engine", `{"graph": "good", "engine": "tpu"}`, "InvalidArgument", `unknown engine "tpu"`},
		{"unknown source", `{"graph": "good", "sources": ["9"]}`, "InvalidArgument", `"9"`},
		{"source of a wrong type", `{"graph": "good", "sources": [true]}`, "InvalidArgument", "neither a string nor an integer"},
		{"empty sources", `{"graph": "good", "sources": []}`, "InvalidArgument", "empty list"},
		{"bfs-level with predecessors", `{"graph": "good", "algorithm": "bfs-level", "with_predecessors": true}`, "InvalidArgument", "bfs-level"},
		{"negative weight", `{"graph": "neg", "algorithm": "dijkstra"}`, "FailedPrecondition", "bellman-ford"},
		{"negative cycle", `{"graph": "cycle", "algorithm": "bellman-ford"}`, "FailedPrecondition", "negative cycle"},
	}
	for _, q := range queries {
		t.Run("get/"+q.name, func(t *testing.T) {
			_, recs, err := doGet(ctx, cl, q.query, mem)
			releaseAll(recs)
			if codeOf(err) != q.code || !strings.Contains(err.Error(), q.inMessage) {
				t.Errorf("%s: got %v; want %s mentioning %s", q.query, err, q.code, q.inMessage)
			}
		})
		if q.code == "FailedPrecondition" {
			continue // found while running: GetFlightInfo runs nothing
		}
		t.Run("info/"+q.name, func(t *testing.T) {
			_, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(q.query)})
			if codeOf(err) != q.code || !strings.Contains(err.Error(), q.inMessage) {
				t.Errorf("%s: got %v; want %s mentioning %s", q.query, err, q.code, q.inMessage)
			}
		})
	}

	actions := []struct {
		name, typ, body, code string
	}{
		{"drop an unknown graph", ActionDrop, "nope", "NotFound"},
		{"drop ..", ActionDrop, "..", "InvalidArgument"},
		{"drop a path", ActionDrop, "a/b", "InvalidArgument"},
		{"unknown action", "explode", "", "InvalidArgument"},
	}
	for _, a := range actions {
		t.Run("action/"+a.name, func(t *testing.T) {
			if _, err := doAction(ctx, cl, a.typ, a.body); codeOf(err) != a.code {
				t.Errorf("%s %q: got %v, want %s", a.typ, a.body, err, a.code)
			}
		})
	}

	schema, recs := edgeRecords(smallCase("x", "1 2 3"), 2, memory.DefaultAllocator)
	defer releaseAll(recs)
	uploads := []struct {
		name string
		desc *flight.FlightDescriptor
		meta string
		code string
	}{
		{"name with a slash", pathDesc("a/b"), "", "InvalidArgument"},
		{"name ..", pathDesc(".."), "", "InvalidArgument"},
		{"name .", pathDesc("."), "", "InvalidArgument"},
		{"empty name", pathDesc(""), "", "InvalidArgument"},
		{"long name", pathDesc(strings.Repeat("a", 129)), "", "InvalidArgument"},
		{"path of three parts", &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"graphs", "a", "b"}}, "", "InvalidArgument"},
		{"other folder", &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"tables", "a"}}, "", "InvalidArgument"},
		{"malformed options", pathDesc("a"), `{"src_col": 5}`, "InvalidArgument"},
		{"unknown option", pathDesc("a"), `{"source_column": "s"}`, "InvalidArgument"},
		{"missing column", pathDesc("a"), `{"src_col": "from"}`, "InvalidArgument"},
		{"missing weight column", pathDesc("a"), `{"weight_col": "cost"}`, "InvalidArgument"},
		{"bad distance type", pathDesc("a"), `{"dist_type": "int8"}`, "InvalidArgument"},
		{"contradictory direction", pathDesc("a"), `{"directed": false, "undirected": false}`, "InvalidArgument"},
		{"contradictory direction in a command", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": "a", "directed": true, "undirected": true}`)}, "", "InvalidArgument"},
		{"malformed command", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": `)}, "", "InvalidArgument"},
		{"command without a name", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"undirected": true}`)}, "", "InvalidArgument"},
		{"command with a bad name", &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": "x y"}`)}, "", "InvalidArgument"},
	}
	for _, u := range uploads {
		t.Run("put/"+u.name, func(t *testing.T) {
			var meta []byte
			if u.meta != "" {
				meta = []byte(u.meta)
			}
			if _, err := upload(ctx, cl, u.desc, meta, schema, recs); codeOf(err) != u.code {
				t.Errorf("got %v, want %s", err, u.code)
			}
		})
	}

	t.Run("get/gpu engine", func(t *testing.T) {
		// Runs where a GPU is usable; refused with a reason elsewhere.
		_, recs, err := doGet(ctx, cl, `{"graph": "good", "engine": "gpu"}`, mem)
		releaseAll(recs)
		if err != nil && (codeOf(err) != "FailedPrecondition" || !strings.Contains(err.Error(), "gpu")) {
			t.Errorf("got %v; want success or FailedPrecondition naming the GPU", err)
		}
		t.Logf("engine gpu: %v", err)
	})

	t.Run("put/null ids", func(t *testing.T) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendNull()
		b.Field(1).(*array.Int64Builder).Append(1)
		b.Field(2).(*array.Int64Builder).Append(1)
		rec := b.NewRecordBatch()
		defer rec.Release()
		_, err := upload(ctx, cl, pathDesc("nulls"), nil, schema, []arrow.RecordBatch{rec})
		if codeOf(err) != "InvalidArgument" || !strings.Contains(err.Error(), "null") {
			t.Errorf("got %v", err)
		}
	})

	t.Run("put/corrupt stream", func(t *testing.T) {
		stream, err := cl.DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A descriptor and a header that is not an IPC message.
		stream.Send(&flight.FlightData{FlightDescriptor: pathDesc("corrupt"), DataHeader: []byte("not flatbuffers at all"), DataBody: []byte{1, 2, 3}})
		stream.CloseSend()
		_, err = stream.Recv()
		if codeOf(err) != "InvalidArgument" {
			t.Errorf("got %v", err)
		}
	})

	t.Run("put/options via command descriptor", func(t *testing.T) {
		m, err := upload(ctx, cl, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": "bycmd", "undirected": true}`)}, nil, schema, recs)
		if err != nil || m.Name != "bycmd" || m.Directed || m.Arcs != 2 {
			t.Errorf("got %+v, %v", m, err)
		}
	})

	t.Run("put/directed false", func(t *testing.T) {
		m, err := upload(ctx, cl, pathDesc("bydir"), []byte(`{"directed": false}`), schema, recs)
		if err != nil || m.Directed || m.Arcs != 2 {
			t.Errorf("got %+v, %v", m, err)
		}
		_, err = upload(ctx, cl, pathDesc("bydir"), []byte(`{"directed": true, "undirected": true}`), schema, recs)
		if codeOf(err) != "InvalidArgument" || !strings.Contains(err.Error(), `"directed"`) || !strings.Contains(err.Error(), `"undirected"`) {
			t.Errorf("contradictory direction: got %v; want InvalidArgument naming both keys", err)
		}
	})

	// Nothing refused was stored, and the server still answers.
	stream, err := cl.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for {
		info, err := stream.Recv()
		if err != nil {
			break
		}
		names = append(names, info.FlightDescriptor.Path[1])
	}
	if got := strings.Join(names, ","); got != "bycmd,bydir,cycle,good,neg" {
		t.Errorf("stored %s", got)
	}
	_, good, err := doGet(ctx, cl, `{"graph": "good"}`, mem)
	if err != nil || len(good) == 0 {
		t.Errorf("good query after the bad ones: %v", err)
	}
	releaseAll(good)
	checkNoLeftovers(t, ts.cfg.DataDir)
	ts.shutdown(t)
}

func TestLimits(t *testing.T) {
	ctx := context.Background()
	c := smallCase("g", "1 2 3", "2 3 4", "3 4 5", "4 5 6")
	schema, recs := edgeRecords(c, 1, memory.DefaultAllocator)
	defer releaseAll(recs)

	t.Run("upload bytes", func(t *testing.T) {
		ts := startServer(t, Config{MaxUploadBytes: 600})
		_, err := upload(ctx, dial(t, ts.addr), pathDesc("g"), nil, schema, recs)
		if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "600 bytes") {
			t.Errorf("got %v", err)
		}
		ts.shutdown(t)
		checkNoLeftovers(t, ts.cfg.DataDir)
		if len(ts.store.list()) != 0 {
			t.Errorf("stored %v", ts.store.list())
		}
	})
	t.Run("vertices", func(t *testing.T) {
		ts := startServer(t, Config{MaxVertices: 4})
		_, err := upload(ctx, dial(t, ts.addr), pathDesc("g"), nil, schema, recs)
		if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "limit of 4") {
			t.Errorf("got %v", err)
		}
		ts.shutdown(t)
		checkNoLeftovers(t, ts.cfg.DataDir)
	})
	t.Run("message size", func(t *testing.T) {
		ts := startServer(t, Config{MaxMessageBytes: 4096})
		big := smallCase("big")
		for i := range 400 {
			big.Src, big.Dst, big.Weights = append(big.Src, fmt.Sprint(i)), append(big.Dst, fmt.Sprint(i+1)), append(big.Weights, 1)
		}
		bs, brecs := edgeRecords(big, 400, memory.DefaultAllocator)
		defer releaseAll(brecs)
		_, err := upload(ctx, dial(t, ts.addr), pathDesc("big"), nil, bs, brecs)
		if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "4096") {
			t.Errorf("got %v", err)
		}
		// Small messages still pass.
		if _, err := upload(ctx, dial(t, ts.addr), pathDesc("g"), nil, schema, recs); err != nil {
			t.Errorf("small upload: %v", err)
		}
	})
}

// TestUploadCutOff cancels an upload half way: nothing is stored.
func TestUploadCutOff(t *testing.T) {
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	schema, recs := edgeRecords(smallCase("g", "1 2 3", "2 3 4", "3 4 5"), 1, memory.DefaultAllocator)
	defer releaseAll(recs)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc("cut"))
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	// Wait until the server has the upload's temporary file, then hang up.
	waitFor(t, func() bool {
		es, _ := os.ReadDir(filepath.Join(ts.cfg.DataDir, tmpDir))
		return len(es) > 0
	})
	cancel()
	waitFor(t, func() bool {
		es, _ := os.ReadDir(filepath.Join(ts.cfg.DataDir, tmpDir))
		return len(es) == 0
	})
	if _, ok := ts.store.get("cut"); ok {
		t.Errorf("a cut-off upload was stored")
	}
	checkNoLeftovers(t, ts.cfg.DataDir)
	// The server goes on serving.
	if _, err := upload(context.Background(), cl, pathDesc("whole"), nil, schema, recs); err != nil {
		t.Errorf("upload after a cut-off one: %v", err)
	}
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRestart stores graphs, restarts on the same directory and finds them.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cases := testgraphs.Cases()
	ts := startServer(t, Config{DataDir: dir})
	cl := dial(t, ts.addr)
	want := map[string]string{}
	for _, c := range cases {
		uploadCase(t, ctx, cl, c.Name, c)
	}
	// Replace one graph and drop another: the restart sees the new state.
	uploadCase(t, ctx, cl, cases[0].Name, cases[1])
	if _, err := doAction(ctx, cl, ActionDrop, cases[2].Name); err != nil {
		t.Fatal(err)
	}
	for _, m := range ts.store.list() {
		_, recs, err := doGet(ctx, cl, fmt.Sprintf(`{"graph": %q, "layout": "stats", "algorithm": "bfs"}`, m.Name), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		want[m.Name] = tableString(recs)
		releaseAll(recs)
	}
	before := ts.store.list()
	ts.shutdown(t)

	ts2 := startServer(t, Config{DataDir: dir})
	cl2 := dial(t, ts2.addr)
	after := ts2.store.list()
	if len(after) != len(before) || len(after) != len(cases)-1 {
		t.Fatalf("%d graphs after the restart, %d before", len(after), len(before))
	}
	for i := range after {
		b, a := before[i], after[i]
		if a.Name != b.Name || a.Vertices != b.Vertices || a.Edges != b.Edges || a.Data != b.Data {
			t.Errorf("after the restart %+v, before %+v", a, b)
		}
		_, recs, err := doGet(ctx, cl2, fmt.Sprintf(`{"graph": %q, "layout": "stats", "algorithm": "bfs"}`, a.Name), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if got := tableString(recs); got != want[a.Name] {
			t.Errorf("%s after the restart:\n%s\nbefore:\n%s", a.Name, got, want[a.Name])
		}
		releaseAll(recs)
	}
	checkNoLeftovers(t, dir)
}

// tableString prints batches row by row, for comparisons of whole results.
func tableString(recs []arrow.RecordBatch) string {
	var b strings.Builder
	for _, r := range recs {
		for i := range int(r.NumRows()) {
			for _, c := range r.Columns() {
				b.WriteString(c.ValueStr(i))
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestRecoverAfterCrash lays out what a server killed at each step of an
// upload leaves behind, and checks that a new server keeps exactly the
// graphs completely stored before.
func TestRecoverAfterCrash(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ts := startServer(t, Config{DataDir: dir})
	cl := dial(t, ts.addr)
	c := smallCase("g", "1 2 3", "2 3 4")
	uploadCase(t, ctx, cl, "kept", c)
	uploadCase(t, ctx, cl, "replaced", c)
	ts.shutdown(t)
	kept, _ := readSidecar(filepath.Join(dir, graphsDir, "kept.json"))

	// Killed while receiving: a partial temporary table.
	os.WriteFile(filepath.Join(dir, tmpDir, "new-123.arrow.tmp"), []byte("ARROW1\x00\x00partial"), 0o644)
	// Killed after the table moved to data/ but before the sidecar rename:
	// an unreferenced table, and a sidecar still in tmp/.
	os.WriteFile(filepath.Join(dir, dataDir, "new-0123456789abcdef.arrow"), []byte("ARROW1"), 0o644)
	os.WriteFile(filepath.Join(dir, tmpDir, "new.json-999.tmp"), []byte(`{"name": "new"`), 0o644)
	// Killed after a replacement's sidecar rename, before the old table's
	// removal: the old table of "replaced" is unreferenced. Simulate it by
	// a copy of kept's table under another name.
	old, _ := os.ReadFile(filepath.Join(dir, dataDir, kept.Data))
	os.WriteFile(filepath.Join(dir, dataDir, "replaced-fedcba9876543210.arrow"), old, 0o644)

	ts2 := startServer(t, Config{DataDir: dir})
	var names []string
	for _, m := range ts2.store.list() {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "kept,replaced" {
		t.Errorf("graphs after the crash: %v", names)
	}
	checkNoLeftovers(t, dir)
	for _, name := range names {
		_, recs, err := doGet(ctx, dial(t, ts2.addr), fmt.Sprintf(`{"graph": %q}`, name), memory.DefaultAllocator)
		if err != nil || len(recs) == 0 {
			t.Errorf("%s: %v", name, err)
		}
		releaseAll(recs)
	}
}

// TestQueueAndCancel holds the only job slot with a slow query, checks that
// a second query waits, cancels the first and sees the second finish.
func TestQueueAndCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{MaxConcurrent: 1, Allocator: mem, MaxBatchBytes: 1 << 10})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	big := chainCase(3000)
	uploadCase(t, ctx, cl, "chain", big)
	uploadCase(t, ctx, cl, "small", smallCase("small", "1 2 3"))

	slowCtx, cancelSlow := context.WithCancel(ctx)
	stream, err := cl.DoGet(slowCtx, &flight.Ticket{Ticket: []byte(`{"graph": "chain", "engine": "cpu"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() { // the job runs and holds the slot
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	quick := make(chan error, 1)
	go func() {
		_, recs, err := doGet(ctx, cl, `{"graph": "small"}`, mem)
		releaseAll(recs)
		quick <- err
	}()
	select {
	case err := <-quick:
		t.Fatalf("a second job ran while the only slot was taken: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancelSlow()
	for rdr.Next() {
	}
	rdr.Release()
	select {
	case err := <-quick:
		if err != nil {
			t.Errorf("queued job: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the queued job did not run after the first was cancelled")
	}
	if !strings.Contains(ts.logs.String(), "code=Canceled") {
		t.Errorf("no log line for the cancelled job:\n%s", ts.logs.String())
	}
	ts.shutdown(t)
}

// chainCase is a path 0 -> 1 -> … -> n-1 of weight 1: n²/2 reachable pairs.
func chainCase(n int) testgraphs.Case {
	c := testgraphs.Case{Name: "chain", Kind: testgraphs.Int}
	for i := range n - 1 {
		c.Src, c.Dst, c.Weights = append(c.Src, fmt.Sprint(i)), append(c.Dst, fmt.Sprint(i+1)), append(c.Weights, 1)
	}
	return c
}

// TestShutdownDrains cancels Serve while a stream runs: the stream ends
// complete and Serve returns.
func TestShutdownDrains(t *testing.T) {
	ts := startServer(t, Config{MaxBatchBytes: 1 << 10})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	uploadCase(t, ctx, cl, "chain", chainCase(1500))
	stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte(`{"graph": "chain"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	rows := rdr.RecordBatch().NumRows()
	stopped := make(chan struct{})
	go func() {
		ts.shutdown(t)
		close(stopped)
	}()
	for rdr.Next() {
		rows += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("stream cut by the shutdown: %v", err)
	}
	if want := int64(1500 * 1501 / 2); rows != want {
		t.Errorf("%d rows, want %d", rows, want)
	}
	<-stopped
	// New calls are refused once the server is gone.
	conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, _, err = doGet(short, flight.NewClientFromConn(conn, nil), `{"graph": "chain"}`, memory.DefaultAllocator)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("a call after shutdown: %v", err)
	}
}
