package flight

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"net"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// benchScale is the R-MAT scale of the matrix benchmarks: 2^11 vertices,
// a 2048 × 2048 matrix of int64 distances (32 MiB of body per DoGet).
const benchScale = 11

// uploadRMAT uploads an R-MAT graph of scale, weights 1..100, as graph
// name, in batches of 64 Ki edges.
func uploadRMAT(b testing.TB, ctx context.Context, cl flight.Client, name string, scale int) {
	b.Helper()
	e, err := gen.RMAT(scale, 16, 1, gen.WithWeights(1, 100))
	if err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	var recs []arrow.RecordBatch
	for lo := 0; lo < e.Len(); lo += 1 << 16 {
		hi := min(lo+1<<16, e.Len())
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		rb.Field(0).(*array.Int64Builder).AppendValues(e.Src[lo:hi], nil)
		rb.Field(1).(*array.Int64Builder).AppendValues(e.Dst[lo:hi], nil)
		rb.Field(2).(*array.Int64Builder).AppendValues(e.Weights[lo:hi], nil)
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	defer releaseAll(recs)
	if _, err := upload(ctx, cl, pathDesc(name), []byte(`{"undirected": true}`), schema, recs); err != nil {
		b.Fatal(err)
	}
}

// replayServer answers every DoGet with the same batches, sent as the
// server's DoGet sends them (sendSliced at the default batch size), so
// that a benchmark sees the transport without the engine.
type replayServer struct {
	flight.BaseFlightServer
	schema *arrow.Schema
	recs   []arrow.RecordBatch
	// batch is the size above which batches are sliced; 0 means
	// DefaultMaxBatchBytes.
	batch int64
	// arrowWriter sends through arrow-go's flight.Writer and the proto
	// codec instead of the server's result writer.
	arrowWriter bool
}

func (r *replayServer) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	var w interface {
		batchWriter
		Close() error
	}
	if r.arrowWriter {
		w = flight.NewRecordWriter(stream, ipc.WithSchema(r.schema))
	} else {
		w = newResultWriter(stream, ipc.WithSchema(r.schema))
	}
	defer w.Close()
	batch := r.batch
	if batch == 0 {
		batch = DefaultMaxBatchBytes
	}
	for _, rec := range r.recs {
		if err := sendSliced(w, rec, batch, DefaultMaxMessageBytes); err != nil {
			return err
		}
	}
	return w.Close()
}

// receive reads a DoGet stream to its end and returns its IPC body bytes.
func receive(b *testing.B, cl flight.Client, q string) int64 {
	stream, err := cl.DoGet(context.Background(), &flight.Ticket{Ticket: []byte(q)})
	if err != nil {
		b.Fatal(err)
	}
	var body int64
	for {
		d, err := stream.Recv()
		if err == io.EOF {
			return body
		}
		if err != nil {
			b.Fatal(err)
		}
		body += int64(len(d.DataBody))
	}
}

// BenchmarkDoGetMatrix measures DoGet of an R-MAT matrix over loopback:
// "flight" reads every message of the stream (bytes/s is the IPC body
// received); "engine" runs the same query in process with no transport,
// so the gap between the two is what Flight costs. GB/s is reported for
// both.
func BenchmarkDoGetMatrix(b *testing.B) {
	ctx := context.Background()
	ts := startServer(&testing.T{}, Config{})
	defer ts.shutdown(b)
	cl, err := flight.NewClientWithMiddleware(ts.addr, nil, nil, append(ClientTransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes)))...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	uploadRMAT(b, ctx, cl, "rmat", benchScale)
	const q = `{"graph": "rmat", "layout": "matrix"}`

	b.Run("flight", func(b *testing.B) {
		var body, rows int64
		start := time.Now()
		for range b.N {
			body, rows = 0, 0
			stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte(q)})
			if err != nil {
				b.Fatal(err)
			}
			for {
				d, err := stream.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				body += int64(len(d.DataBody))
			}
		}
		elapsed := time.Since(start).Seconds()
		meta, _ := ts.store.get("rmat")
		g, err := ts.graphFor(meta)
		if err != nil {
			b.Fatal(err)
		}
		rows = int64(g.NumVertices())
		b.SetBytes(body)
		b.ReportMetric(float64(body)*float64(b.N)/elapsed/1e9, "GB/s")
		b.ReportMetric(float64(rows)*float64(b.N)/elapsed, "rows/s")
	})

	b.Run("transport", func(b *testing.B) {
		meta, _ := ts.store.get("rmat")
		g, err := ts.graphFor(meta)
		if err != nil {
			b.Fatal(err)
		}
		opt := pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}}
		pq, err := pipeline.Prepare(g, opt)
		if err != nil {
			b.Fatal(err)
		}
		rs := &replayServer{schema: pq.Schema()}
		if _, err := pq.Run(ctx, func(rec arrow.RecordBatch) error {
			rec.Retain()
			rs.recs = append(rs.recs, rec)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		defer releaseAll(rs.recs)
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		codec, err := newFlightCodec()
		if err != nil {
			b.Fatal(err)
		}
		srv := grpc.NewServer(append(serverTransportOptions(), grpc.ForceServerCodecV2(codec),
			grpc.MaxRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxSendMsgSize(DefaultMaxMessageBytes))...)
		flight.RegisterFlightServiceServer(srv, rs)
		go srv.Serve(lis)
		defer srv.Stop()
		rc, err := flight.NewClientWithMiddleware(lis.Addr().String(), nil, nil, append(ClientTransportOptions(),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes)))...)
		if err != nil {
			b.Fatal(err)
		}
		defer rc.Close()
		var body int64
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			body = receive(b, rc, q)
		}
		elapsed := time.Since(start).Seconds()
		b.SetBytes(body)
		b.ReportMetric(float64(body)*float64(b.N)/elapsed/1e9, "GB/s")
		b.ReportMetric(float64(g.NumVertices())*float64(b.N)/elapsed, "rows/s")
	})

	b.Run("engine", func(b *testing.B) {
		meta, _ := ts.store.get("rmat")
		g, err := ts.graphFor(meta)
		if err != nil {
			b.Fatal(err)
		}
		opt := pipeline.Options{Query: pipeline.Query{Layout: arrowio.LayoutMatrix}}
		pq, err := pipeline.Prepare(g, opt)
		if err != nil {
			b.Fatal(err)
		}
		var body int64
		start := time.Now()
		for range b.N {
			body = 0
			if _, err := pq.Run(ctx, func(rec arrow.RecordBatch) error {
				body += recordBytes(rec)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		elapsed := time.Since(start).Seconds()
		b.SetBytes(body)
		b.ReportMetric(float64(body)*float64(b.N)/elapsed/1e9, "GB/s")
	})
}
