package flight

import (
	"context"
	"log/slog"
	"path"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// callInfo collects what the log line of one request reports. Handlers
// fill it; the interceptor logs it when the call ends.
type callInfo struct {
	graph     atomic.Pointer[string]
	algorithm atomic.Pointer[string]
	engine    atomic.Pointer[string]
	rows      atomic.Int64
	bytes     atomic.Int64
	// run and send are a DoGet's time in the pipeline's run and, within
	// it, in sending batches; run − send is what the stream waited for
	// the engine (both 0 for other calls).
	run, send atomic.Int64
}

// The setters clip what a client sent (a 100 KB graph name), so that a
// log line stays a line.
func (c *callInfo) setGraph(name string)     { name = clip(name); c.graph.Store(&name) }
func (c *callInfo) setAlgorithm(name string) { name = clip(name); c.algorithm.Store(&name) }
func (c *callInfo) setEngine(name string)    { name = clip(name); c.engine.Store(&name) }

func load(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return ""
}

type callInfoKey struct{}

// callInfoFrom returns the callInfo of ctx, or a scratch one.
func callInfoFrom(ctx context.Context) *callInfo {
	if c, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		return c
	}
	return &callInfo{}
}

// countingStream counts the Flight data bytes that pass either way.
type countingStream struct {
	grpc.ServerStream
	ctx  context.Context
	info *callInfo
}

func (s *countingStream) Context() context.Context { return s.ctx }

func (s *countingStream) SendMsg(m any) error {
	switch d := m.(type) {
	case *flight.FlightData:
		s.info.bytes.Add(dataSize(d))
	case *outgoingData:
		s.info.bytes.Add(d.size)
	}
	return s.ServerStream.SendMsg(m)
}

func (s *countingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if d, ok := m.(*flight.FlightData); ok && err == nil {
		s.info.bytes.Add(dataSize(d))
	}
	return err
}

func dataSize(d *flight.FlightData) int64 {
	return int64(len(d.DataHeader) + len(d.DataBody) + len(d.AppMetadata))
}

// logStream logs one line per streaming call and turns a panic into an
// INTERNAL status, so that one bad request cannot stop the server; the
// status message is clipped (clipStatus), so that one that echoes a long
// input still reaches the client.
func logStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		ci := &callInfo{}
		ctx := context.WithValue(ss.Context(), callInfoKey{}, ci)
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				log.Error("flight: handler panicked", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "flight: internal error: %v", p)
			}
			err = clipStatus(err)
			logCall(log, ctx, info.FullMethod, ci, start, err)
		}()
		return handler(srv, &countingStream{ServerStream: ss, ctx: ctx, info: ci})
	}
}

// logUnary is logStream for unary calls.
func logUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		ci := &callInfo{}
		ctx = context.WithValue(ctx, callInfoKey{}, ci)
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				log.Error("flight: handler panicked", "method", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "flight: internal error: %v", p)
			}
			err = clipStatus(err)
			logCall(log, ctx, info.FullMethod, ci, start, err)
		}()
		return handler(ctx, req)
	}
}

func logCall(log *slog.Logger, ctx context.Context, method string, ci *callInfo, start time.Time, err error) {
	attrs := []any{
		"method", path.Base(method),
		"graph", load(&ci.graph),
		"algorithm", load(&ci.algorithm),
		"engine", load(&ci.engine),
		"rows", ci.rows.Load(),
		"bytes", ci.bytes.Load(),
		"time", time.Since(start).Round(time.Microsecond).String(),
		"code", status.Code(err).String(),
	}
	if run := time.Duration(ci.run.Load()); run > 0 {
		send := time.Duration(ci.send.Load())
		attrs = append(attrs, "engine_time", (run - send).Round(time.Microsecond).String(),
			"send_time", send.Round(time.Microsecond).String())
	}
	if p, ok := peer.FromContext(ctx); ok {
		attrs = append(attrs, "peer", p.Addr.String())
	}
	if err != nil {
		attrs = append(attrs, "err", status.Convert(err).Message())
		log.Warn("flight request", attrs...)
		return
	}
	log.Info("flight request", attrs...)
}
