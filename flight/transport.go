package flight

import "google.golang.org/grpc"

// Transport tuning of the gRPC connections that carry Flight streams,
// measured in docs/benchmarks-history.md ("Flight transport"). gRPC's defaults suit
// many small messages: 32 KiB buffers mean a write system call for every
// two HTTP/2 frames of 16 KiB, and flow-control windows that start at
// 64 KiB and grow only as the bandwidth-delay estimator learns. A Flight
// result is a few large messages, so the buffers are larger and the
// windows start wide.
const (
	// transportBuffer is the size of a connection's write and read
	// buffers: how much is written or read in one system call.
	transportBuffer = 1 << 20
	// streamWindow and connWindow are the HTTP/2 flow-control windows a
	// receiver grants at the start of a stream and of a connection; the
	// sender may have that much in flight unacknowledged. Set, they are
	// static (gRPC's estimator stops resizing them).
	streamWindow = 16 << 20
	connWindow   = 32 << 20
)

// serverTransportOptions are the server's buffers, and the windows it
// grants to uploads (DoPut).
func serverTransportOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.WriteBufferSize(transportBuffer),
		grpc.ReadBufferSize(transportBuffer),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
	}
}

// ClientTransportOptions are the dial options of a Go client that reads
// large results (DoGet) fast: the buffers and the windows it grants to
// the server's streams. The Python package passes the same values to
// pyarrow (python/pathctl/client.py).
func ClientTransportOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithWriteBufferSize(transportBuffer),
		grpc.WithReadBufferSize(transportBuffer),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
	}
}
