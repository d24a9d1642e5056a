package flight

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSecondServerKeepsUploads starts a second server on the data directory
// of a running one while an upload is half way. Before the data directory
// lock, the second server's recovery deleted the upload's temporary file and
// the first server lost the upload; now the second server stops with
// DataDirInUseError before touching anything, and the upload completes.
func TestSecondServerKeepsUploads(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ts := startServer(t, Config{DataDir: dir})
	cl := dial(t, ts.addr)
	c := randomCase(5, 200, 600, false)
	schema, recs := edgeRecords(c, 20, memory.DefaultAllocator)
	defer releaseAll(recs)
	stream, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc("inflight"))
	half := len(recs) / 2
	for _, r := range recs[:half] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		es, _ := os.ReadDir(filepath.Join(dir, tmpDir))
		return len(es) > 0
	})

	// The second server fails: on the lock (now), or on the address in use
	// after its recovery ran (before).
	_, err = NewServer(Config{DataDir: dir, Addr: ts.addr})
	var inUse *DataDirInUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Errorf("second server: %v; want a DataDirInUseError naming process %d", err, os.Getpid())
	}
	want := fmt.Sprintf("data directory %s is in use by process %d", dir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second server: %v; want %q", err, want)
	}

	for _, r := range recs[half:] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	stream.CloseSend()
	for {
		_, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the upload half way when the second server started failed: %v", err)
		}
	}
	names, err := listGraphs(ctx, cl)
	if err != nil || strings.Join(names, ",") != "inflight" {
		t.Errorf("graphs: %v, %v", names, err)
	}

	// Once the first server stops, the directory is free again.
	ts.shutdown(t)
	ts2 := startServer(t, Config{DataDir: dir})
	if names, err := listGraphs(ctx, dial(t, ts2.addr)); err != nil || strings.Join(names, ",") != "inflight" {
		t.Errorf("graphs after the restart: %v, %v", names, err)
	}
}

// TestRecoveryKeepsNewerFiles leaves a temporary file newer than the lock
// (as a server that did not lock would write while this one starts) and
// checks that recovery keeps it.
func TestRecoveryKeepsNewerFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{graphsDir, dataDir, tmpDir} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
	}
	old := filepath.Join(dir, tmpDir, "old-1.arrow.tmp")
	os.WriteFile(old, []byte("x"), 0o644)
	os.Chtimes(old, l.acquired.Add(-1e9), l.acquired.Add(-1e9))
	newer := filepath.Join(dir, tmpDir, "new-2.arrow.tmp")
	os.WriteFile(newer, []byte("x"), 0o644)
	os.Chtimes(newer, l.acquired.Add(1e9), l.acquired.Add(1e9))
	st, err := openStore(dir, l.acquired, slog.New(slog.DiscardHandler))
	if err != nil || st == nil {
		t.Fatal(err)
	}
	l.release()
	if _, err := os.Stat(old); err == nil {
		t.Error("recovery kept a temporary file older than the lock")
	}
	if _, err := os.Stat(newer); err != nil {
		t.Errorf("recovery removed a temporary file newer than the lock: %v", err)
	}
}

// captureData collects the FlightData a RecordWriter sends.
type captureData struct{ msgs []*flight.FlightData }

func (c *captureData) Send(d *flight.FlightData) error {
	c.msgs = append(c.msgs, &flight.FlightData{
		FlightDescriptor: d.FlightDescriptor,
		DataHeader:       bytes.Clone(d.DataHeader),
		DataBody:         bytes.Clone(d.DataBody),
		AppMetadata:      bytes.Clone(d.AppMetadata),
	})
	return nil
}

// encodeUpload turns batches into the FlightData of an upload to graph
// name, with the writer options given (compression).
func encodeUpload(t testing.TB, name string, schema *arrow.Schema, recs []arrow.RecordBatch, opts ...ipc.Option) []*flight.FlightData {
	t.Helper()
	c := &captureData{}
	w := flight.NewRecordWriter(c, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	w.SetFlightDescriptor(pathDesc(name))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return c.msgs
}

// putRaw sends FlightData as they are and returns the upload's status.
func putRaw(ctx context.Context, cl flight.Client, msgs []*flight.FlightData) error {
	stream, err := cl.DoPut(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server refused: its status comes from Recv
		}
	}
	stream.CloseSend()
	for {
		_, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// repetitiveEdges is rows int64 edges among 7 vertices: they compress
// about a hundredfold.
func repetitiveEdges(rows int, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: arrow.PrimitiveTypes.Int64}, {Name: "dst", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range int64(rows) {
		b.Field(0).(*array.Int64Builder).Append(i % 7)
		b.Field(1).(*array.Int64Builder).Append((i + 1) % 7)
	}
	return schema, []arrow.RecordBatch{b.NewRecordBatch()}
}

// TestCompressedLengthBombUpload sends a zstd batch whose data buffers
// declare 0x8000000000 uncompressed bytes. arrow-go allocates the declared
// length before decompressing: without the check of each message this test
// ends the whole test process (server included) with "fatal error: runtime:
// out of memory" in ipc.(*ipcSource).buffer. Now the upload is refused with
// RESOURCE_EXHAUSTED, nothing is allocated for it, and the server goes on.
func TestCompressedLengthBombUpload(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	const rows = 1000
	schema, recs := repetitiveEdges(rows, memory.DefaultAllocator)
	defer releaseAll(recs)
	msgs := encodeUpload(t, "bomb", schema, recs, ipc.WithZstd())
	var old, bomb [8]byte
	binary.LittleEndian.PutUint64(old[:], 8*rows)
	binary.LittleEndian.PutUint64(bomb[:], 0x8000000000)
	patched, wire := 0, 0
	for _, m := range msgs {
		patched += bytes.Count(m.DataBody, old[:])
		m.DataBody = bytes.ReplaceAll(m.DataBody, old[:], bomb[:])
		wire += len(m.DataHeader) + len(m.DataBody)
	}
	if patched != 2 || wire > 2048 {
		t.Fatalf("crafted %d prefixes in %d bytes; want 2 in a small upload", patched, wire)
	}
	err := putRaw(ctx, cl, msgs)
	if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "--max-upload-bytes") {
		t.Errorf("crafted upload: %v; want RESOURCE_EXHAUSTED naming --max-upload-bytes", err)
	}
	// A buffer outside its body is refused as corrupt.
	bad := encodeUpload(t, "cut", schema, recs)
	bad[len(bad)-1].DataBody = bad[len(bad)-1].DataBody[:8]
	if err := putRaw(ctx, cl, bad); codeOf(err) != "InvalidArgument" || !strings.Contains(err.Error(), "outside the message body") {
		t.Errorf("truncated body: %v; want INVALID_ARGUMENT", err)
	}
	// The server still serves.
	uploadCase(t, ctx, cl, "after", smallCase("after", "1 2 3"))
	if names, err := listGraphs(ctx, cl); err != nil || strings.Join(names, ",") != "after" {
		t.Errorf("graphs: %v, %v", names, err)
	}
	checkNoLeftovers(t, ts.cfg.DataDir)
}

// TestUploadLimitCountsDecodedBytes: --max-upload-bytes counts what an
// upload decodes to. A compressed upload small on the wire and a dictionary
// upload of one long value repeated are refused when their decoded size
// passes the limit (before, they were counted by wire bytes and stored);
// the same tables pass under a limit above their decoded size.
func TestUploadLimitCountsDecodedBytes(t *testing.T) {
	ctx := context.Background()
	const rows = 20000 // 320 KB decoded, a few KB compressed
	schema, recs := repetitiveEdges(rows, memory.DefaultAllocator)
	defer releaseAll(recs)
	compressed := encodeUpload(t, "zstd", schema, recs, ipc.WithZstd())
	wire := 0
	for _, m := range compressed {
		wire += len(m.DataHeader) + len(m.DataBody)
	}
	dictSchema, dictRecs := longDictionaryEdges(2000, 1000, memory.DefaultAllocator)
	defer releaseAll(dictRecs)
	dict := encodeUpload(t, "dict", dictSchema, dictRecs, ipc.WithZstd())
	dictWire := 0
	for _, m := range dict {
		dictWire += len(m.DataHeader) + len(m.DataBody)
	}
	const limit = 100_000
	if wire > limit/4 || dictWire > limit/4 {
		t.Fatalf("uploads of %d and %d bytes on the wire; want far under %d", wire, dictWire, limit)
	}
	ts := startServer(t, Config{MaxUploadBytes: limit})
	cl := dial(t, ts.addr)
	for name, msgs := range map[string][]*flight.FlightData{"zstd": compressed, "dict": dict} {
		err := putRaw(ctx, cl, msgs)
		if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "decodes to more than the server's limit of 100000 bytes") {
			t.Errorf("%s upload: %v; want RESOURCE_EXHAUSTED for its decoded size", name, err)
		}
	}
	checkNoLeftovers(t, ts.cfg.DataDir)
	ts2 := startServer(t, Config{MaxUploadBytes: 4 << 20})
	cl2 := dial(t, ts2.addr)
	for name, msgs := range map[string][]*flight.FlightData{"zstd": compressed, "dict": dict} {
		if err := putRaw(ctx, cl2, msgs); err != nil {
			t.Errorf("%s upload under a 4 MiB limit: %v", name, err)
		}
	}
}

// longDictionaryEdges is rows edges whose src is a dictionary of one value
// of valueLen bytes (and dst of another), every row pointing at it.
func longDictionaryEdges(rows, valueLen int, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: dt}, {Name: "dst", Type: dt}}, nil)
	cols := make([]arrow.Array, 2)
	for c := range cols {
		vb := array.NewStringBuilder(mem)
		vb.Append(strings.Repeat(string(rune('a'+c)), valueLen))
		values := vb.NewArray()
		vb.Release()
		ib := array.NewInt32Builder(mem)
		for range rows {
			ib.Append(0)
		}
		idx := ib.NewArray()
		ib.Release()
		cols[c] = array.NewDictionaryArray(dt, idx, values)
		idx.Release()
		values.Release()
	}
	rec := array.NewRecordBatch(schema, cols, int64(rows))
	cols[0].Release()
	cols[1].Release()
	return schema, []arrow.RecordBatch{rec}
}

// TestDictionaryOver2GiB uploads a dictionary column of one 1 MiB string
// repeated 2100 times: 2.2 GB once expanded, more than a utf8 column holds.
// Before, the server expanded it (6.9 GB of memory) and failed with a
// recovered "slice bounds out of range" panic; now it is refused with
// RESOURCE_EXHAUSTED before anything is expanded.
func TestDictionaryOver2GiB(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{MaxUploadBytes: 16 << 30})
	cl := dial(t, ts.addr)
	schema, recs := longDictionaryEdges(2100, 1<<20, memory.DefaultAllocator)
	defer releaseAll(recs)
	err := putRaw(ctx, cl, encodeUpload(t, "huge", schema, recs))
	if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "2147483647") || !strings.Contains(err.Error(), `"src"`) {
		t.Errorf("2.2 GB dictionary upload: %v; want RESOURCE_EXHAUSTED naming the column and the 2 GiB", err)
	}
	checkNoLeftovers(t, ts.cfg.DataDir)
}

// TestSessionTokens: a session token expires after --session-ttl, and a
// restarted server refuses the tokens of the one before. Before, the
// bearer token was a hash of the secret, valid forever and across
// restarts.
func TestSessionTokens(t *testing.T) {
	const token = "expiring"
	tokenFile := writeToken(t, token)
	dir := t.TempDir()
	ctx := context.Background()
	ts := startServer(t, Config{DataDir: dir, AuthTokenFile: tokenFile, SessionTTL: 300 * time.Millisecond})
	cl := dial(t, ts.addr)
	authed, err := cl.AuthenticateBasicToken(ctx, "carol", token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listGraphs(authed, cl); err != nil {
		t.Fatalf("fresh session: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := listGraphs(authed, cl); codeOf(err) != "Unauthenticated" || !strings.Contains(err.Error(), "expired") {
		t.Errorf("session past its TTL: %v; want UNAUTHENTICATED saying it expired", err)
	}
	ts.shutdown(t)

	ts2 := startServer(t, Config{DataDir: dir, AuthTokenFile: tokenFile})
	cl2 := dial(t, ts2.addr)
	old, err := cl2.AuthenticateBasicToken(ctx, "carol", token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listGraphs(old, cl2); err != nil {
		t.Fatalf("new session: %v", err)
	}
	ts2.shutdown(t)
	ts3 := startServer(t, Config{DataDir: dir, AuthTokenFile: tokenFile})
	if _, err := listGraphs(old, dial(t, ts3.addr)); codeOf(err) != "Unauthenticated" {
		t.Errorf("a session of the server before the restart: %v; want UNAUTHENTICATED", err)
	}
}

// TestMaxMessageBytesFraming: with --max-message-bytes 65536 results of
// every layout arrive, int and string ids alike. Before, batches were cut
// at 65536 bytes of buffers, and the message with its framing was refused
// ("trying to send message larger than max (65760 vs. 65536)").
func TestMaxMessageBytesFraming(t *testing.T) {
	ctx := context.Background()
	const limit = 65536
	ts := startServer(t, Config{MaxMessageBytes: limit})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "chain", chainCase(400))
	strs := chainCase(300)
	strs.StringIDs = true
	for i := range strs.Src {
		strs.Src[i] = strings.Repeat("v", i%50) + strs.Src[i]
		strs.Dst[i] = strings.Repeat("v", (i+1)%50) + strs.Dst[i]
	}
	uploadCase(t, ctx, cl, "strings", strs)
	for _, q := range []string{
		`{"graph": "chain"}`,
		`{"graph": "chain", "with_predecessors": true}`,
		`{"graph": "chain", "layout": "matrix"}`,
		`{"graph": "strings"}`,
		`{"graph": "strings", "layout": "stats"}`,
	} {
		stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte(q)})
		if err != nil {
			t.Fatal(err)
		}
		rows, msgs := int64(0), 0
		for {
			d, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			msgs++
			if size := len(d.DataHeader) + len(d.DataBody) + len(d.AppMetadata); size > limit {
				t.Errorf("%s: a message of %d bytes", q, size)
			}
		}
		_, recs, err := doGet(ctx, cl, q, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, r := range recs {
			rows += r.NumRows()
		}
		releaseAll(recs)
		// Every result but the stats (300 rows, under the limit in one
		// batch where the engine sends it so, as the GPU's does) is
		// larger than the limit, so it must come in several messages.
		least := 3
		if strings.Contains(q, `"stats"`) {
			least = 2
		}
		if rows == 0 || msgs < least {
			t.Errorf("%s: %d rows in %d messages; want at least %d", q, rows, msgs, least)
		}
	}
}

// waiting counts the queries waiting in the fair queue.
func (q *fairQueue) waitingCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, ws := range q.waiting {
		n += len(ws)
	}
	return n
}

// TestFairQueue: with one slot held by client A's first query, A's second
// query and then client B's first wait; when the slot frees, B's first
// runs before A's second. Before, the slot went first come, first served,
// so one client's stream of queries held the only slot and the others
// timed out.
func TestFairQueue(t *testing.T) {
	ts := startServer(t, Config{MaxConcurrent: 1, MaxBatchBytes: 1 << 10})
	clA, clB := dial(t, ts.addr), dial(t, ts.addr)
	ctx := context.Background()
	var order []string // the clients given the slot, in turn (under the queue's lock)
	ts.queue.mu.Lock()
	ts.queue.granted = func(client string) { order = append(order, client) }
	ts.queue.mu.Unlock()
	uploadCase(t, ctx, clA, "chain", chainCase(3000))
	uploadCase(t, ctx, clA, "small", smallCase("small", "1 2 3"))
	uploadCase(t, ctx, clA, "other", smallCase("other", "1 2 3"))

	slowCtx, cancelSlow := context.WithCancel(ctx)
	defer cancelSlow()
	stream, err := clA.DoGet(slowCtx, &flight.Ticket{Ticket: []byte(`{"graph": "chain", "engine": "cpu"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() { // A's first query holds the slot
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	done := make(chan error, 2)
	run := func(cl flight.Client, graph string) {
		_, recs, err := doGet(ctx, cl, `{"graph": "`+graph+`"}`, memory.DefaultAllocator)
		releaseAll(recs)
		done <- err
	}
	go run(clA, "small") // A's second
	waitFor(t, func() bool { return ts.queue.waitingCount() == 1 })
	go run(clB, "other") // B's first
	waitFor(t, func() bool { return ts.queue.waitingCount() == 2 })
	cancelSlow()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The slot went to A's first, then B's first, then A's second. (The
	// log's order does not say: a handler gives its slot up before the
	// server logs its request, and the next may log first.)
	ts.queue.mu.Lock()
	got := slices.Clone(order)
	ts.queue.mu.Unlock()
	if len(got) != 3 || got[1] == got[0] || got[2] != got[0] {
		t.Errorf("the slot went to clients %q; want A, B, A:\n%s", got, ts.logs.String())
	}
}

// TestFairQueueCancelWaiting: a waiting query that gives up leaves the
// queue, and a slot granted as it gives up passes on.
func TestFairQueueCancelWaiting(t *testing.T) {
	q := newFairQueue(1)
	ctx := context.Background()
	if err := q.acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- q.acquire(gone, "b") }()
	waitFor(t, func() bool { return q.waitingCount() == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if q.waitingCount() != 0 {
		t.Fatalf("the cancelled query still waits")
	}
	q.release("a")
	if err := q.acquire(ctx, "c"); err != nil || q.free != 0 {
		t.Fatalf("slot after release: %v, %d free", err, q.free)
	}
	q.release("c")
	if q.free != 1 || len(q.running) != 0 {
		t.Errorf("after every release: %d free, running %v", q.free, q.running)
	}
}

// TestQueryLimits: --max-query-pairs refuses, before running, a query that
// computes more pairs than allowed (in GetFlightInfo too), and
// --max-query-seconds stops a query that runs longer; both with
// RESOURCE_EXHAUSTED naming the limit. Before, neither limit existed.
func TestQueryLimits(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{MaxQueryPairs: 5000, MaxQuerySeconds: 0.3})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "hundred", chainCase(100))
	uploadCase(t, ctx, cl, "chain", chainCase(3000))
	for _, q := range []string{`{"graph": "hundred"}`, `{"graph": "chain", "sources": [0, 1]}`} {
		_, _, err := doGet(ctx, cl, q, memory.DefaultAllocator)
		if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "--max-query-pairs") {
			t.Errorf("DoGet %s: %v; want RESOURCE_EXHAUSTED naming --max-query-pairs", q, err)
		}
		_, err = cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(q)})
		if codeOf(err) != "ResourceExhausted" {
			t.Errorf("GetFlightInfo %s: %v", q, err)
		}
	}
	_, recs, err := doGet(ctx, cl, `{"graph": "hundred", "sources": [0, 1, 2]}`, memory.DefaultAllocator)
	releaseAll(recs)
	if err != nil {
		t.Errorf("a query under the limits: %v", err)
	}

	slow := startServer(t, Config{MaxQuerySeconds: 0.2})
	scl := dial(t, slow.addr)
	// 144 M pairs: past 0.2 s on any machine (3,000 vertices finished
	// within it on 32 cores).
	uploadCase(t, ctx, scl, "chain", chainCase(12000))
	start := time.Now()
	_, recs, err = doGet(ctx, scl, `{"graph": "chain", "engine": "cpu"}`, memory.DefaultAllocator)
	releaseAll(recs)
	if codeOf(err) != "ResourceExhausted" || !strings.Contains(err.Error(), "--max-query-seconds") {
		t.Errorf("a query past the time limit: %v; want RESOURCE_EXHAUSTED naming --max-query-seconds", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the query ran %v under a limit of 0.2 s", time.Since(start))
	}
	if _, recs, err := doGet(ctx, scl, `{"graph": "chain", "sources": [0]}`, memory.DefaultAllocator); err != nil {
		t.Errorf("the server after a stopped query: %v", err)
	} else {
		releaseAll(recs)
	}
}
