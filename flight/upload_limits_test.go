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
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stalledUpload is an upload that sent its schema and first batch and
// waits to send the rest.
type stalledUpload struct {
	stream flight.FlightService_DoPutClient
	w      *flight.Writer
}

// stallUpload starts an upload of recs to name, sends its first batch and
// waits until the server has opened its temporary file.
func stallUpload(t *testing.T, ts *testServer, cl flight.Client, name string, schema *arrow.Schema, recs []arrow.RecordBatch) *stalledUpload {
	t.Helper()
	before := tmpFiles(ts)
	// A deadline, so that a server that never answers fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	stream, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc(name))
	if err := w.Write(recs[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return tmpFiles(ts) > before })
	return &stalledUpload{stream, w}
}

// finish sends the rest of recs and returns the upload's status.
func (u *stalledUpload) finish(recs []arrow.RecordBatch) error {
	for _, r := range recs[1:] {
		if err := u.w.Write(r); err != nil {
			break
		}
	}
	u.w.Close()
	u.stream.CloseSend()
	for {
		if _, err := u.stream.Recv(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func tmpFiles(ts *testServer) int {
	es, _ := os.ReadDir(filepath.Join(ts.cfg.DataDir, tmpDir))
	return len(es)
}

// TestUploadsPastMaxUploads: with --max-uploads 1 and one upload in
// progress, a second DoPut is refused at once with RESOURCE_EXHAUSTED
// naming the flag; once the first ends, the next upload goes through.
// Before, every DoPut opened a temporary file of its own, without bound.
func TestUploadsPastMaxUploads(t *testing.T) {
	ts := startServer(t, Config{MaxUploads: 1})
	cl := dial(t, ts.addr)
	schema, recs := edgeRecords(chainCase(21), 5, memory.DefaultAllocator)
	defer releaseAll(recs)
	first := stallUpload(t, ts, cl, "first", schema, recs)

	start := time.Now()
	_, err := upload(context.Background(), cl, pathDesc("second"), nil, schema, recs)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-uploads") {
		t.Fatalf("second upload beside one in progress: %v; want RESOURCE_EXHAUSTED naming --max-uploads", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v; want it at once", d)
	}
	if err := first.finish(recs); err != nil {
		t.Fatalf("first upload: %v", err)
	}
	if _, err := upload(context.Background(), cl, pathDesc("second"), nil, schema, recs); err != nil {
		t.Errorf("upload after the first ended: %v", err)
	}
	if names, _ := listGraphs(context.Background(), cl); strings.Join(names, ",") != "first,second" {
		t.Errorf("graphs %v; want first,second", names)
	}
}

// TestIdleUploadIsCancelled: an upload that sends nothing for
// --idle-timeout is cancelled with a status naming the flag, its
// temporary file is removed, and its slot is free again.
func TestIdleUploadIsCancelled(t *testing.T) {
	ts := startServer(t, Config{MaxUploads: 1, IdleTimeout: 300 * time.Millisecond})
	cl := dial(t, ts.addr)
	schema, recs := edgeRecords(chainCase(21), 5, memory.DefaultAllocator)
	defer releaseAll(recs)
	idle := stallUpload(t, ts, cl, "idle", schema, recs)
	start := time.Now()
	_, err := idle.stream.Recv() // the server's answer, without sending more
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "--idle-timeout") {
		t.Fatalf("idle upload: %v; want DEADLINE_EXCEEDED naming --idle-timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancelled after %v; want about 300ms", d)
	}
	if n := tmpFiles(ts); n != 0 {
		t.Errorf("%d temporary files left after the idle upload was cancelled", n)
	}
	if _, err := upload(context.Background(), cl, pathDesc("next"), nil, schema, recs); err != nil {
		t.Errorf("upload after the idle one: %v", err)
	}
	if names, _ := listGraphs(context.Background(), cl); strings.Join(names, ",") != "next" {
		t.Errorf("graphs %v; want next", names)
	}
	ts.shutdown(t)
	checkNoLeftovers(t, ts.cfg.DataDir)
}

// TestUploadsPastMaxMemory: an upload whose reservation passes the whole
// --max-memory fails at once with RESOURCE_EXHAUSTED; one that fits alone
// but not beside another waits until the other ends, then succeeds; the
// server goes on serving and holds nothing once they are done. Before,
// concurrent uploads each under --max-upload-bytes together took more
// memory than the machine had.
func TestUploadsPastMaxMemory(t *testing.T) {
	const budget = 1 << 20
	ts := startServer(t, Config{MaxMemory: budget})
	cl := dial(t, ts.addr)
	ctx := context.Background()

	// 6000 int64 rows reserve about 2·144 KB + 56·6000 = 624 KB: one fits,
	// two do not.
	schema, recs := edgeRecords(chainCase(6001), 6000, memory.DefaultAllocator)
	defer releaseAll(recs)
	bigSchema, big := edgeRecords(chainCase(20001), 5000, memory.DefaultAllocator)
	defer releaseAll(big)

	_, err := upload(ctx, cl, pathDesc("big"), nil, bigSchema, big)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("upload past the whole budget: %v; want RESOURCE_EXHAUSTED naming --max-memory", err)
	}

	// A holds its reservation, stalled; B waits for it.
	a := stallUpload(t, ts, cl, "a", schema, recs)
	waitFor(t, func() bool { return ts.budget.inUse() > budget/2 })
	bDone := make(chan error, 1)
	go func() {
		_, err := upload(ctx, cl, pathDesc("b"), nil, schema, recs)
		bDone <- err
	}()
	waitFor(t, func() bool { return ts.budget.waiting() == 1 })
	select {
	case err := <-bDone:
		t.Fatalf("upload b returned %v while a held the memory it needs", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := a.finish(recs); err != nil { // a's one batch is sent: only the end
		t.Fatalf("upload a: %v", err)
	}
	select {
	case err := <-bDone:
		if err != nil {
			t.Errorf("upload b after a ended: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("upload b still waits after a ended")
	}
	if names, _ := listGraphs(ctx, cl); strings.Join(names, ",") != "a,b" {
		t.Errorf("graphs %v; want a,b", names)
	}
	if held := ts.budget.inUse(); held != 0 {
		t.Errorf("%d bytes still reserved after every upload ended", held)
	}
	ts.shutdown(t)
	checkNoLeftovers(t, ts.cfg.DataDir)
}

// recordMessages is what a flight writer sends for schema and recs, the
// descriptor on the first message.
func recordMessages(t *testing.T, desc *flight.FlightDescriptor, schema *arrow.Schema, recs []arrow.RecordBatch) []*flight.FlightData {
	t.Helper()
	var sent recordedData
	w := flight.NewRecordWriter(&sent, ipc.WithSchema(schema))
	w.SetFlightDescriptor(desc)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return sent.msgs
}

// putMessages sends msgs as one DoPut and returns the stored graph's
// metadata or the upload's status.
func putMessages(ctx context.Context, cl flight.Client, msgs []*flight.FlightData) (GraphMeta, error) {
	var out GraphMeta
	stream, err := cl.DoPut(ctx)
	if err != nil {
		return out, err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // refused: the status comes from Recv
		}
	}
	stream.CloseSend()
	var res *flight.PutResult
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		res = r
	}
	if res == nil {
		return out, errors.New("no PutResult")
	}
	return out, json.Unmarshal(res.AppMetadata, &out)
}

// TestUploadMetadataOnlyMessages: FlightData messages that carry app
// metadata and no IPC message (pyarrow's write_metadata) are accepted
// before, between and after the batches; options sent in one before the
// first batch are taken, and a later one that would set other options is
// refused rather than ignored. Before, each failed the upload with
// "index out of range [3] with length 0".
func TestUploadMetadataOnlyMessages(t *testing.T) {
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	schema, recs := edgeRecords(chainCase(7), 2, memory.DefaultAllocator)
	defer releaseAll(recs)
	meta := func(s string) *flight.FlightData { return &flight.FlightData{AppMetadata: []byte(s)} }
	undirected := `{"undirected": true}`

	type sequence struct {
		name string
		// build gives the messages from those of the writer: the schema
		// (with the descriptor) and three batches.
		build    func(m []*flight.FlightData) []*flight.FlightData
		directed bool
		refused  codes.Code
	}
	for _, sq := range []sequence{
		{"options-before-first-batch", func(m []*flight.FlightData) []*flight.FlightData {
			return []*flight.FlightData{m[0], meta(undirected), m[1], m[2], m[3]}
		}, false, codes.OK},
		{"between-and-after-batches", func(m []*flight.FlightData) []*flight.FlightData {
			return []*flight.FlightData{m[0], meta(undirected), m[1], meta(undirected), m[2], m[3], meta(undirected)}
		}, false, codes.OK},
		{"empty-after-batches", func(m []*flight.FlightData) []*flight.FlightData {
			return []*flight.FlightData{m[0], m[1], m[2], m[3], {}, meta(`{}`)}
		}, true, codes.OK},
		{"descriptor-alone-first", func(m []*flight.FlightData) []*flight.FlightData {
			first := &flight.FlightData{FlightDescriptor: m[0].FlightDescriptor, AppMetadata: []byte(undirected)}
			schemaMsg := &flight.FlightData{DataHeader: m[0].DataHeader, DataBody: m[0].DataBody}
			return []*flight.FlightData{first, schemaMsg, m[1], m[2], m[3]}
		}, false, codes.OK},
		{"options-too-late", func(m []*flight.FlightData) []*flight.FlightData {
			return []*flight.FlightData{m[0], m[1], meta(undirected), m[2], m[3]}
		}, true, codes.InvalidArgument},
	} {
		t.Run(sq.name, func(t *testing.T) {
			name := "g-" + sq.name
			msgs := sq.build(recordMessages(t, pathDesc(name), schema, recs))
			got, err := putMessages(ctx, cl, msgs)
			if sq.refused != codes.OK {
				if status.Code(err) != sq.refused {
					t.Fatalf("upload: %v; want %v", err, sq.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("upload: %v", err)
			}
			if got.Edges != 6 || got.Directed != sq.directed {
				t.Errorf("stored %d edges, directed %v; want 6, %v", got.Edges, got.Directed, sq.directed)
			}
		})
	}
}

// TestUploadManyEmptyMessages: an upload of 100,000 messages that carry
// nothing is refused with INVALID_ARGUMENT once it passes
// maxEmptyMessages in a row, and the server goes on serving. Before, it
// failed with "index out of range [3] with length 0" after reading all of
// them.
func TestUploadManyEmptyMessages(t *testing.T) {
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	schema, recs := edgeRecords(chainCase(7), 2, memory.DefaultAllocator)
	defer releaseAll(recs)
	m := recordMessages(t, pathDesc("empties"), schema, recs)
	msgs := []*flight.FlightData{m[0], m[1]}
	for range 100000 {
		msgs = append(msgs, &flight.FlightData{})
	}
	msgs = append(msgs, m[2:]...)
	_, err := putMessages(ctx, cl, msgs)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "carry no data") {
		t.Fatalf("100,000 empty messages: %v; want INVALID_ARGUMENT about messages that carry no data", err)
	}
	// As many as the bound, between batches, are accepted.
	msgs = []*flight.FlightData{m[0], m[1]}
	for range maxEmptyMessages - 1 {
		msgs = append(msgs, &flight.FlightData{})
	}
	msgs = append(msgs, recordMessages(t, pathDesc("some-empties"), schema, recs)[2:]...)
	msgs[0] = recordMessages(t, pathDesc("some-empties"), schema, recs)[0]
	if _, err := putMessages(ctx, cl, msgs); err != nil {
		t.Errorf("upload with %d empty messages: %v", maxEmptyMessages-1, err)
	}
	if names, _ := listGraphs(ctx, cl); strings.Join(names, ",") != "some-empties" {
		t.Errorf("graphs %v; want some-empties", names)
	}
}
