package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/pipeline"
)

// rowCount is the rows of recs.
func rowCount(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

// TestHugeKTicket sends tickets whose k no graph has: the server answers
// each as it answers k = n-1 (it allocated sources × k cells before, and
// k = 2^62 ended the process), and keeps serving.
func TestHugeKTicket(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "g", randomCase(3, 4, 4, false))
	_, want, err := doGet(ctx, cl, `{"graph":"g","sources":[1],"k":3}`, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(want)
	for _, k := range []string{"4611686018427387904", "2147483648", "9223372036854775807"} {
		_, got, err := doGet(ctx, cl, `{"graph":"g","sources":[1],"k":`+k+`}`, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("k %s: %v", k, err)
		}
		if rowCount(got) != rowCount(want) {
			t.Errorf("k %s: %d rows, want %d (those of k = 3)", k, rowCount(got), rowCount(want))
		}
		releaseAll(got)
	}
	if _, _, err := doGet(ctx, cl, `{"graph":"g","sources":[1],"k":92233720368547758070}`, memory.DefaultAllocator); status.Code(err) != codes.InvalidArgument {
		t.Errorf("k past int64: %v, want InvalidArgument", err)
	}
}

// TestRepeatedTargetsCounted asks for one target 200,000 times under a
// pairs limit of 16: the answer has a column per target, so the limit
// counts them (it counted the graph's 4 vertices, and 800,000 rows came
// back).
func TestRepeatedTargetsCounted(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{MaxQueryPairs: 16})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "g", randomCase(3, 4, 4, false))
	targets := strings.TrimSuffix(strings.Repeat("3,", 200000), ",")
	_, recs, err := doGet(ctx, cl, `{"graph":"g","sources":[0,1,2,3],"targets":[`+targets+`]}`, memory.DefaultAllocator)
	releaseAll(recs)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "200000 targets") {
		t.Fatalf("200,000 targets under a limit of 16 pairs: %v", err)
	}
	_, recs, err = doGet(ctx, cl, `{"graph":"g","sources":[0,1],"targets":[3,3]}`, memory.DefaultAllocator)
	releaseAll(recs)
	if err != nil {
		t.Errorf("4 pairs under a limit of 16: %v", err)
	}
}

// TestLongInputEchoed sends a 100 KB source id, graph name and algorithm:
// each is refused with its cause in a message short enough for the
// client's metadata limit (the whole id in the message came back as
// "Received RST_STREAM"), and the server keeps serving.
func TestLongInputEchoed(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "g", randomCase(3, 4, 4, false))
	long := strings.Repeat("7", 100000)
	for _, c := range []struct{ ticket, code, words string }{
		{`{"graph":"g","sources":["` + long + `"]}`, "InvalidArgument", "source \"7777"},
		{`{"graph":"` + long + `","sources":[1]}`, "InvalidArgument", "graph name of 100000 bytes"},
		{`{"graph":"g","algorithm":"` + long + `"}`, "InvalidArgument", "algorithm \"7777"},
		{`{"graph":"g","targets":["` + long + `"]}`, "InvalidArgument", "target"},
		{`{"graph":"g","` + long + `":1}`, "InvalidArgument", "7777"},
	} {
		_, recs, err := doGet(ctx, cl, c.ticket, memory.DefaultAllocator)
		releaseAll(recs)
		msg := status.Convert(err).Message()
		if codeOf(err) != c.code || len(msg) > 1024 || !strings.Contains(msg, c.words) {
			t.Errorf("ticket of %d bytes: %s %d bytes %.300q; want %s naming the %s", len(c.ticket), codeOf(err), len(msg), msg, c.code, c.words)
		}
	}
	if _, recs, err := doGet(ctx, cl, `{"graph":"g","sources":[1]}`, memory.DefaultAllocator); err != nil {
		t.Errorf("a query after the long ones: %v", err)
	} else {
		releaseAll(recs)
	}
}

// TestQueryPanicFailsOneQuery runs a query whose run panics in a goroutine
// of its own (as the pipeline's producer did on a huge k): that query
// fails with INTERNAL naming the panic, the log has its stack, and the
// next query is served.
func TestQueryPanicFailsOneQuery(t *testing.T) {
	ctx := context.Background()
	run := func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		if k := q.Options().K; k == 2 {
			var cells []int
			_ = cells[k]
		}
		return q.Run(ctx, emit)
	}
	ts := startServer(t, Config{run: run})
	cl := dial(t, ts.addr)
	uploadCase(t, ctx, cl, "g", randomCase(3, 4, 4, false))
	_, recs, err := doGet(ctx, cl, `{"graph":"g","sources":[1],"k":2}`, memory.DefaultAllocator)
	releaseAll(recs)
	if codeOf(err) != "Internal" || !strings.Contains(err.Error(), "index out of range [2]") {
		t.Fatalf("a panicking query: %v", err)
	}
	if !strings.Contains(ts.logs.String(), "the query panicked") || !strings.Contains(ts.logs.String(), "goroutine") {
		t.Errorf("the log does not hold the panic's stack:\n%s", ts.logs.String())
	}
	_, recs, err = doGet(ctx, cl, `{"graph":"g","sources":[1],"k":1}`, memory.DefaultAllocator)
	releaseAll(recs)
	if err != nil {
		t.Errorf("the query after the panic: %v", err)
	}
}

// TestStalledReaderLetsOthersRun starts a large query, reads one message
// of it and stops reading; with one computation slot, a second client's
// small query is served once the first is past --idle-timeout (it waited
// for its own deadline before: the stalled send held the slot).
func TestStalledReaderLetsOthersRun(t *testing.T) {
	if testing.Short() {
		t.Skip("computes all pairs of 2,000 vertices; the race run has -short")
	}
	ctx := context.Background()
	for _, cfg := range []Config{
		{MaxConcurrent: 1, IdleTimeout: 300 * time.Millisecond},
		{MaxConcurrent: 1, IdleTimeout: time.Hour, MaxQuerySeconds: 0.5},
	} {
		t.Run(fmt.Sprintf("idle=%v,max-query-seconds=%v", cfg.IdleTimeout, cfg.MaxQuerySeconds), func(t *testing.T) {
			ts := startServer(t, cfg)
			cl := dial(t, ts.addr)
			uploadCase(t, ctx, cl, "big", randomCase(4, 2000, 8000, false))
			uploadCase(t, ctx, cl, "small", randomCase(3, 4, 4, false))
			stalled, cancel := context.WithCancel(ctx)
			defer cancel()
			a, err := cl.DoGet(stalled, &flight.Ticket{Ticket: []byte(`{"graph":"big"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Recv(); err != nil {
				t.Fatalf("the large query's first message: %v", err)
			}
			// A reads no more.
			bctx, bcancel := context.WithTimeout(ctx, 20*time.Second)
			defer bcancel()
			start := time.Now()
			_, recs, err := doGet(bctx, cl, `{"graph":"small","sources":[1]}`, memory.DefaultAllocator)
			releaseAll(recs)
			if err != nil {
				t.Fatalf("the small query behind a stalled reader: %v after %v", err, time.Since(start))
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the small query took %v behind a stalled reader", took)
			}
		})
	}
}

// FuzzQueryRanges runs tickets whose numbers are drawn from their whole
// range (k, cutoff, delta, the count of targets and sources) on a graph
// of 6 vertices: each is refused or answered, never a panic, and an
// answer has at most a row per source and target column.
func FuzzQueryRanges(f *testing.F) {
	ctx := context.Background()
	ts := startServer(f, Config{MaxQueryPairs: 1 << 16})
	cl := dial(f, ts.addr)
	uploadCase(f, ctx, cl, "g", randomCase(9, 6, 10, false))
	f.Add(int64(4611686018427387904), 1.0, 0.0, uint16(3), uint8(2), "pairs")
	f.Add(int64(-1), -1.0, -1e308, uint16(0), uint8(0), "matrix")
	f.Add(int64(0), 1e308, 5e-324, uint16(60000), uint8(255), "stats")
	f.Fuzz(func(t *testing.T, k int64, cutoff, delta float64, targets uint16, sources uint8, layout string) {
		q := map[string]any{"graph": "g", "layout": layout}
		if k != 0 {
			q["k"] = k
		}
		if cutoff == cutoff && !math.IsInf(cutoff, 0) { // JSON has no NaN or Inf
			q["cutoff"] = cutoff
		}
		if delta == delta && !math.IsInf(delta, 0) && delta != 0 {
			q["delta"] = delta
		}
		if targets > 0 {
			ids := make([]int, targets)
			for i := range ids {
				ids[i] = i % 7 // 6 is not a vertex
			}
			q["targets"] = ids
		}
		if sources > 0 {
			ids := make([]int, sources)
			for i := range ids {
				ids[i] = i % 6
			}
			q["sources"] = ids
		}
		ticket, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		_, pq, err := ts.prepareQuery(ctx, ticket)
		if err != nil {
			return
		}
		var rows int64
		_, err = pq.Run(ctx, func(r arrow.RecordBatch) error { rows += r.NumRows(); return nil })
		width := int64(max(int(targets), 6))
		if err == nil && rows > int64(max(int(sources), 6))*width {
			t.Fatalf("ticket %s: %d rows", ticket, rows)
		}
	})
}
