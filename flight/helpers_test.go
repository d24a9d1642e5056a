package flight

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/internal/syncbuf"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// testServer is a Server running in the test's process.
type testServer struct {
	*Server
	addr   string
	cancel context.CancelFunc
	done   chan error
	logs   *syncbuf.Buffer
	stop   sync.Once
}

// startServer serves cfg on a loopback port; the server stops at cleanup.
// A zero DataDir gets a fresh temporary directory.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	logs := &syncbuf.Buffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: s, addr: s.Addr().String(), cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { ts.done <- s.Serve(ctx) }()
	t.Cleanup(func() { ts.shutdown(t) })
	return ts
}

// shutdown cancels Serve and waits for it.
func (ts *testServer) shutdown(t testing.TB) {
	ts.stop.Do(func() {
		ts.cancel()
		select {
		case err := <-ts.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after cancel")
		}
	})
}

// dial connects a Flight client; extra options (TLS) replace the insecure
// default when given.
func dial(t testing.TB, addr string, opts ...grpc.DialOption) flight.Client {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	c, err := flight.NewClientWithMiddleware(addr, nil, nil, opts...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// edgeRecords turns a test case into an edge table of batches of at most
// batch rows: int64 or string ids in src and dst, a weight column of the
// case's kind.
func edgeRecords(c testgraphs.Case, batch int, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch) {
	idType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if c.StringIDs {
		idType = arrow.BinaryTypes.String
	}
	fields := []arrow.Field{{Name: "src", Type: idType}, {Name: "dst", Type: idType}}
	switch c.Kind {
	case testgraphs.Int:
		fields = append(fields, arrow.Field{Name: "weight", Type: arrow.PrimitiveTypes.Int64})
	case testgraphs.Float32:
		fields = append(fields, arrow.Field{Name: "weight", Type: arrow.PrimitiveTypes.Float32})
	case testgraphs.Float64:
		fields = append(fields, arrow.Field{Name: "weight", Type: arrow.PrimitiveTypes.Float64})
	}
	schema := arrow.NewSchema(fields, nil)
	var recs []arrow.RecordBatch
	for lo := 0; lo < len(c.Src); lo += batch {
		hi := min(lo+batch, len(c.Src))
		b := array.NewRecordBuilder(mem, schema)
		for i := lo; i < hi; i++ {
			for col, id := range []string{c.Src[i], c.Dst[i]} {
				if c.StringIDs {
					b.Field(col).(*array.StringBuilder).Append(id)
				} else {
					v, _ := strconv.ParseInt(id, 10, 64)
					b.Field(col).(*array.Int64Builder).Append(v)
				}
			}
			switch c.Kind {
			case testgraphs.Int:
				b.Field(2).(*array.Int64Builder).Append(int64(c.Weights[i]))
			case testgraphs.Float32:
				b.Field(2).(*array.Float32Builder).Append(float32(c.Weights[i]))
			case testgraphs.Float64:
				b.Field(2).(*array.Float64Builder).Append(c.Weights[i])
			}
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return schema, recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// upload sends schema and recs with DoPut; meta, when set, rides on the
// first batch. It returns
// the PutResult's metadata.
func upload(ctx context.Context, c flight.Client, desc *flight.FlightDescriptor, meta []byte, schema *arrow.Schema, recs []arrow.RecordBatch) (GraphMeta, error) {
	var out GraphMeta
	stream, err := c.DoPut(ctx)
	if err != nil {
		return out, err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(desc)
	for i, r := range recs {
		if i == 0 && meta != nil {
			err = w.WriteWithAppMetadata(r, meta)
		} else {
			err = w.Write(r)
		}
		if err != nil {
			break
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	// A server that refused the upload early may have closed the stream:
	// its status comes from Recv below.
	stream.CloseSend()
	var res *flight.PutResult
	for {
		r, rerr := stream.Recv()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return out, rerr
		}
		res = r
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return out, err
	}
	if res == nil {
		return out, errors.New("no PutResult")
	}
	return out, json.Unmarshal(res.AppMetadata, &out)
}

func pathDesc(name string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"graphs", name}}
}

// uploadCase uploads test case c as graph name with its options.
func uploadCase(t testing.TB, ctx context.Context, cl flight.Client, name string, c testgraphs.Case) GraphMeta {
	t.Helper()
	schema, recs := edgeRecords(c, 2, memory.DefaultAllocator)
	defer releaseAll(recs)
	var meta []byte
	if c.Undirected {
		meta = []byte(`{"undirected": true}`)
	}
	m, err := upload(ctx, cl, pathDesc(name), meta, schema, recs)
	if err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	return m
}

// doGet runs a query and returns the result's schema and batches (the
// caller releases them).
func doGet(ctx context.Context, c flight.Client, query string, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch, error) {
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: []byte(query)})
	if err != nil {
		return nil, nil, err
	}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem))
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var recs []arrow.RecordBatch
	for rdr.Next() {
		r := rdr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	if err := rdr.Err(); err != nil {
		releaseAll(recs)
		return nil, nil, err
	}
	return rdr.Schema(), recs, nil
}

// tableOf makes a table of recs (which it does not release).
func tableOf(schema *arrow.Schema, recs []arrow.RecordBatch) arrow.Table {
	return array.NewTableFromRecords(schema, recs)
}

// checkNoLeftovers fails if tmp/ holds anything or data/ holds files no
// sidecar names (a table, or its hierarchy).
func checkNoLeftovers(t testing.TB, dir string) {
	t.Helper()
	tmps, _ := os.ReadDir(dir + "/" + tmpDir)
	for _, e := range tmps {
		t.Errorf("left in tmp/: %s", e.Name())
	}
	sidecars, _ := os.ReadDir(dir + "/" + graphsDir)
	named := map[string]bool{}
	for _, e := range sidecars {
		m, err := readSidecar(dir + "/" + graphsDir + "/" + e.Name())
		if err != nil {
			t.Errorf("sidecar %s: %v", e.Name(), err)
		}
		named[m.Data] = true
		named[indexFile(m.Data)] = true // its hierarchy, where built
	}
	data, _ := os.ReadDir(dir + "/" + dataDir)
	for _, e := range data {
		if !named[e.Name()] {
			t.Errorf("data file no graph names: %s", e.Name())
		}
	}
}

// codeOf names the gRPC code of err ("OK" for nil).
func codeOf(err error) string { return status.Code(err).String() }
