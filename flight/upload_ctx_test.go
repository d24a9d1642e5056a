package flight

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recordedData collects copies of the messages a flight record writer
// sends (it reuses one message).
type recordedData struct{ msgs []*flight.FlightData }

func (r *recordedData) Send(d *flight.FlightData) error {
	r.msgs = append(r.msgs, &flight.FlightData{
		FlightDescriptor: d.FlightDescriptor,
		DataHeader:       append([]byte(nil), d.DataHeader...),
		DataBody:         append([]byte(nil), d.DataBody...),
		AppMetadata:      append([]byte(nil), d.AppMetadata...),
	})
	return nil
}

// replayPut is a DoPut stream whose messages are all at hand, as those
// gRPC has buffered when a client goes away: its context is cancelled
// once cancelAt messages have been received, and it counts what the
// server takes after that.
type replayPut struct {
	flight.FlightService_DoPutServer
	ctx      context.Context
	cancel   context.CancelFunc
	msgs     []*flight.FlightData
	cancelAt int
	received int
}

func (p *replayPut) Context() context.Context { return p.ctx }

func (p *replayPut) Recv() (*flight.FlightData, error) {
	if p.received == p.cancelAt {
		p.cancel()
	}
	if p.received == len(p.msgs) {
		return nil, io.EOF
	}
	p.received++
	return p.msgs[p.received-1], nil
}

func (p *replayPut) Send(*flight.PutResult) error { return nil }

// TestUploadStopsWhenTheClientGoesAway: the read of an upload checks the
// call's context between batches, so the messages still at hand when the
// client goes away are not read. Before, all 200 were read and decoded.
func TestUploadStopsWhenTheClientGoesAway(t *testing.T) {
	ts := startServer(t, Config{})
	c := smallCase("g")
	for i := range 200 {
		c.Src, c.Dst, c.Weights = append(c.Src, fmt.Sprint(i)), append(c.Dst, fmt.Sprint(i+1)), append(c.Weights, 1)
	}
	schema, recs := edgeRecords(c, 1, memory.DefaultAllocator)
	defer releaseAll(recs)
	var sent recordedData
	w := flight.NewRecordWriter(&sent, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc("gone"))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cancelAt = 5
	put := &replayPut{ctx: ctx, cancel: cancel, msgs: sent.msgs, cancelAt: cancelAt}
	err := ts.DoPut(put)
	if status.Code(err) != codes.Canceled {
		t.Errorf("DoPut: %v; want Canceled", err)
	}
	if put.received > cancelAt+2 {
		t.Errorf("the server read %d of %d messages, %d after the client went away", put.received, len(put.msgs), put.received-cancelAt)
	}
	if len(ts.store.list()) != 0 {
		t.Errorf("stored %v", ts.store.list())
	}
	ts.shutdown(t)
	checkNoLeftovers(t, ts.cfg.DataDir)
}
