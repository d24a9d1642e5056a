package flight

import (
	"sync"
	"time"

	"google.golang.org/grpc"
)

// sendWatch notices a result stream whose reader stopped reading: gRPC's
// flow control then holds SendMsg until the reader reads again, which a
// stalled or malicious client never does. Each send arms a timer of the
// idle timeout; a send that outlasts it closes stalled, and DoGet ends
// the stream, which fails the send. An idle timeout of 0 watches nothing.
type sendWatch struct {
	idle    time.Duration
	stalled chan struct{}
	once    sync.Once
}

func newSendWatch(idle time.Duration) *sendWatch {
	return &sendWatch{idle: idle, stalled: make(chan struct{})}
}

// wrap returns stream with its sends watched.
func (w *sendWatch) wrap(stream grpc.ServerStream) grpc.ServerStream {
	if w.idle <= 0 {
		return stream
	}
	return &watchedStream{ServerStream: stream, watch: w}
}

func (w *sendWatch) stall() { w.once.Do(func() { close(w.stalled) }) }

type watchedStream struct {
	grpc.ServerStream
	watch *sendWatch
}

func (s *watchedStream) SendMsg(m any) error {
	t := time.AfterFunc(s.watch.idle, s.watch.stall)
	defer t.Stop()
	return s.ServerStream.SendMsg(m)
}
