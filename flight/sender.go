package flight

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// The result stream of DoGet with one copy of each batch's body before
// gRPC's own. arrow-go's flight.Writer serializes a message's body into a
// buffer it reuses, and the proto codec then copies it into a buffer it
// zeroes first: two copies and a clear per byte, beside the copy into the
// connection's write buffer. Here the body is serialized once into a
// pooled buffer that gRPC owns until the message is on the wire, and the
// FlightData message is framed around it without copying (outgoingData,
// flightCodec).

// batchWriter writes record batches as IPC messages: *ipc.Writer.
type batchWriter interface {
	Write(rec arrow.RecordBatch) error
}

// newResultWriter returns an IPC writer of schema's batches to a DoGet
// stream; Close it to send the schema of an empty result.
func newResultWriter(stream grpc.ServerStream, opts ...ipc.Option) *ipc.Writer {
	return ipc.NewWriterWithPayloadWriter(&streamPayloadWriter{stream: stream}, opts...)
}

// streamPayloadWriter sends each IPC payload as one FlightData message.
type streamPayloadWriter struct {
	stream grpc.ServerStream
}

func (w *streamPayloadWriter) Start() error { return nil }
func (w *streamPayloadWriter) Close() error { return nil }

// WritePayload copies the payload's body into a pooled buffer, which gRPC
// returns to the pool once the message is written, and sends it.
func (w *streamPayloadWriter) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	var header []byte
	if meta != nil {
		header = meta.Bytes()
		defer meta.Release()
	}
	var size byteCounter
	if err := p.SerializeBody(&size); err != nil {
		return err
	}
	msg := &outgoingData{}
	if size > 0 {
		buf := bodyBuffers.Get(int(size))
		body := appender((*buf)[:0])
		if err := p.SerializeBody(&body); err != nil {
			bodyBuffers.Put(buf)
			return err
		}
		*buf = body
		msg.body = memBuffer(buf)
	}
	// The header is small; it is framed (copied) before SendMsg returns.
	msg.prefix = framePrefix(header, int(size))
	msg.size = int64(len(header)) + int64(size)
	return w.stream.SendMsg(msg)
}

// outgoingData is a FlightData message framed for the wire: the encoded
// fields up to the body's bytes, then the body.
type outgoingData struct {
	prefix []byte
	body   mem.Buffer // nil when the message has no body
	// size is the bytes of the header and the body, as the request log
	// counts a FlightData's.
	size int64
}

// Field numbers of FlightData (Flight.proto).
const (
	fieldDataHeader protowire.Number = 2
	fieldDataBody   protowire.Number = 1000
)

// framePrefix encodes data_header and the tag and length of data_body (of
// bodyLen bytes; none when 0), as proto.Marshal of a FlightData holding
// them would.
func framePrefix(header []byte, bodyLen int) []byte {
	n := 0
	if len(header) > 0 {
		n += protowire.SizeTag(fieldDataHeader) + protowire.SizeBytes(len(header))
	}
	if bodyLen > 0 {
		n += protowire.SizeTag(fieldDataBody) + protowire.SizeVarint(uint64(bodyLen))
	}
	b := make([]byte, 0, n)
	if len(header) > 0 {
		b = protowire.AppendTag(b, fieldDataHeader, protowire.BytesType)
		b = protowire.AppendBytes(b, header)
	}
	if bodyLen > 0 {
		b = protowire.AppendTag(b, fieldDataBody, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(bodyLen))
	}
	return b
}

// flightCodec is the server's codec: gRPC's proto codec, except that an
// outgoingData goes out as its prefix and body, uncopied.
type flightCodec struct {
	proto encoding.CodecV2
}

func newFlightCodec() (*flightCodec, error) {
	c := encoding.GetCodecV2("proto")
	if c == nil {
		return nil, fmt.Errorf("flight: gRPC has no proto codec")
	}
	return &flightCodec{proto: c}, nil
}

func (c *flightCodec) Name() string { return c.proto.Name() }

func (c *flightCodec) Marshal(v any) (mem.BufferSlice, error) {
	d, ok := v.(*outgoingData)
	if !ok {
		return c.proto.Marshal(v)
	}
	out := mem.BufferSlice{mem.SliceBuffer(d.prefix)}
	if d.body != nil {
		out = append(out, d.body)
	}
	return out, nil
}

func (c *flightCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.proto.Unmarshal(data, v)
}

// byteCounter counts the bytes written to it.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// appender appends what is written to it.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// bodyPool recycles message bodies by capacity class (powers of two):
// unlike gRPC's default pool it does not zero a buffer it hands out again,
// since every byte of a body is written before it is sent.
type bodyPool struct {
	classes [40]sync.Pool
}

var bodyBuffers = &bodyPool{}

// Get returns a buffer of length n, of capacity the power of two at or
// above n.
func (p *bodyPool) Get(n int) *[]byte {
	class := bits.Len(uint(max(n, 1) - 1))
	if b, ok := p.classes[class].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<class)
	return &b
}

// Put returns a buffer Get handed out.
func (p *bodyPool) Put(b *[]byte) {
	c := cap(*b)
	if c == 0 || c&(c-1) != 0 {
		return // not one of ours
	}
	p.classes[bits.Len(uint(c-1))].Put(b)
}

// memBuffer wraps a buffer of bodyBuffers for gRPC, which returns it to
// the pool once the message is written.
func memBuffer(b *[]byte) mem.Buffer { return mem.NewBuffer(b, bodyBuffers) }
