package flight

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pathctl/pathctl/arrowio"
)

// matrixRecords makes a matrix layout result of rows × n int32 distances
// (every cell set, no nulls), in batches of 1024 rows, as the pipeline
// emits them, without running an engine.
func matrixRecords(rows, n int) (*arrow.Schema, []arrow.RecordBatch) {
	meta := arrow.NewMetadata([]string{arrowio.MetaLayout}, []string{"matrix"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "source", Type: arrow.PrimitiveTypes.Int64},
		{Name: "distance", Type: arrow.FixedSizeListOf(int32(n), arrow.PrimitiveTypes.Int32)},
	}, &meta)
	var recs []arrow.RecordBatch
	for lo := 0; lo < rows; lo += 1024 {
		hi := min(lo+1024, rows)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		src := b.Field(0).(*array.Int64Builder)
		list := b.Field(1).(*array.FixedSizeListBuilder)
		vals := list.ValueBuilder().(*array.Int32Builder)
		row := make([]int32, n)
		for s := lo; s < hi; s++ {
			src.Append(int64(s))
			list.Append(true)
			for v := range row {
				row[v] = int32((s*31 + v) % 1000)
			}
			vals.AppendValues(row, nil)
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return schema, recs
}

// BenchmarkTransport measures the Flight transport alone over loopback: a
// replay server sends a 4096 × 4096 int32 matrix (64 MiB of distances)
// cut as DoGet cuts it, and an arrow-go client reads every message;
// "default" is gRPC's default options on both ends and arrow-go's
// flight.Writer, "options" adds serverTransportOptions and
// ClientTransportOptions, "server" is the server's own (those options and
// its result writer with flightCodec), "server-16MiB" the same with
// batches of 16 MiB instead of 3 MiB. cpu-s/GB is the CPU
// time of both ends (one process) per GB, steadier than GB/s on a loaded
// machine.
func BenchmarkTransport(b *testing.B) {
	schema, recs := matrixRecords(4096, 4096)
	defer releaseAll(recs)
	codec, err := newFlightCodec()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		server      []grpc.ServerOption
		client      []grpc.DialOption
		batch       int64
		arrowWriter bool
	}{
		{"default", nil, nil, DefaultMaxBatchBytes, true},
		{"options", serverTransportOptions(), ClientTransportOptions(), DefaultMaxBatchBytes, true},
		{"server", append(serverTransportOptions(), grpc.ForceServerCodecV2(codec)), ClientTransportOptions(), DefaultMaxBatchBytes, false},
		{"server-16MiB", append(serverTransportOptions(), grpc.ForceServerCodecV2(codec)), ClientTransportOptions(), 16 << 20, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			rs := &replayServer{schema: schema, recs: recs, batch: c.batch, arrowWriter: c.arrowWriter}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := grpc.NewServer(append(c.server, grpc.MaxRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxSendMsgSize(DefaultMaxMessageBytes))...)
			flight.RegisterFlightServiceServer(srv, rs)
			go srv.Serve(lis)
			defer srv.Stop()
			rc, err := flight.NewClientWithMiddleware(lis.Addr().String(), nil, nil, append(c.client,
				grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes)))...)
			if err != nil {
				b.Fatal(err)
			}
			defer rc.Close()
			receive(b, rc, "warm-up")
			var body int64
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuSeconds()
			for range b.N {
				body = receive(b, rc, "matrix")
			}
			elapsed, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
			b.SetBytes(body)
			gb := float64(body) * float64(b.N) / 1e9
			b.ReportMetric(gb/elapsed, "GB/s")
			b.ReportMetric(cpu/gb, "cpu-s/GB")
		})
	}
}

// cpuSeconds is the user and system CPU time of this process so far: on a
// loaded machine the transport's CPU cost per byte is steadier than its
// wall-clock rate.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
