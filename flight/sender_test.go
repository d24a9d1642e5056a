package flight

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/proto"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestFramePrefixIsProto checks that a message framed by flightCodec is
// byte for byte what proto.Marshal makes of the same FlightData, with and
// without a header or a body, across varint length boundaries.
func TestFramePrefixIsProto(t *testing.T) {
	codec, err := newFlightCodec()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ header, body int }{{0, 0}, {40, 0}, {0, 8}, {200, 127}, {200, 128}, {1 << 14, 1<<21 + 3}} {
		header := bytes.Repeat([]byte{0xa5}, c.header)
		body := bytes.Repeat([]byte{0x3c}, c.body)
		want, err := proto.Marshal(&flight.FlightData{DataHeader: header, DataBody: body})
		if err != nil {
			t.Fatal(err)
		}
		msg := &outgoingData{prefix: framePrefix(header, len(body))}
		if len(body) > 0 {
			buf := bodyBuffers.Get(len(body))
			copy(*buf, body)
			msg.body = memBuffer(buf)
		}
		got, err := codec.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Materialize(), want) {
			t.Errorf("header %d, body %d bytes: framed message differs from proto.Marshal's", c.header, c.body)
		}
		var back flight.FlightData
		if err := codec.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.DataHeader, header) || !bytes.Equal(back.DataBody, body) {
			t.Errorf("header %d, body %d bytes: decoded message differs", c.header, c.body)
		}
		got.Free()
	}
}

// TestBodyPool checks the pool's sizes: the length asked for, a capacity
// of the power of two above, and buffers handed back reused.
func TestBodyPool(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1000, 1 << 20, 1<<20 + 1} {
		b := bodyBuffers.Get(n)
		if len(*b) != n || cap(*b) < n || cap(*b)&(cap(*b)-1) != 0 || cap(*b) >= 2*n && n > 1 {
			t.Errorf("Get(%d): len %d, cap %d", n, len(*b), cap(*b))
		}
		bodyBuffers.Put(b)
	}
	foreign := make([]byte, 3)
	bodyBuffers.Put(&foreign) // not a power of two: dropped, no panic
}

// TestDoGetLogsEngineAndSendTime checks the request line of a DoGet: the
// bytes sent, the engine's time and the sending time.
func TestDoGetLogsEngineAndSendTime(t *testing.T) {
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	uploadCase(t, ctx, cl, "g", c)
	_, recs, err := doGet(ctx, cl, `{"graph": "g", "layout": "matrix"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(recs)
	ts.shutdown(t)
	var line string
	for _, l := range strings.Split(ts.logs.String(), "\n") {
		if strings.Contains(l, "method=DoGet") {
			line = l
		}
	}
	for _, want := range []string{"engine_time=", "send_time=", "code=OK"} {
		if !strings.Contains(line, want) {
			t.Errorf("DoGet log line %q lacks %s", line, want)
		}
	}
	if strings.Contains(line, "bytes=0 ") {
		t.Errorf("DoGet log line %q counts no bytes", line)
	}
}
