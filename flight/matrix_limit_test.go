package flight

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// matrixQuery asks for chain graph's matrix.
const matrixQuery = `{"graph": "chain", "layout": "matrix"}`

// rowNeed is the message size rowFits asks of one row of q's result, read
// from a server without a small limit.
func rowNeed(t *testing.T, ctx context.Context, cl flight.Client, q string) int64 {
	t.Helper()
	res, err := cl.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(q)})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := flight.DeserializeSchema(res.GetSchema(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return minRowBytes(schema) + schemaFraming(schema)
}

// matrixRows reads q's matrix as rows of distances (nil for unreachable),
// checking that no message passes limit.
func matrixRows(t *testing.T, ctx context.Context, cl flight.Client, q string, limit int) [][]any {
	t.Helper()
	stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte(q)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		d, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if size := len(d.DataHeader) + len(d.DataBody) + len(d.AppMetadata); size > limit {
			t.Errorf("a message of %d bytes; the limit is %d", size, limit)
		}
	}
	_, recs, err := doGet(ctx, cl, q, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	var rows [][]any
	for _, r := range recs {
		lists := r.Column(1).(*array.FixedSizeList)
		for i := range int(r.NumRows()) {
			row := array.NewSlice(lists, int64(i), int64(i+1)).(*array.FixedSizeList)
			vals := row.ListValues()
			lo, hi := row.ValueOffsets(0)
			out := make([]any, 0, hi-lo)
			for j := lo; j < hi; j++ {
				if vals.IsNull(int(j)) {
					out = append(out, nil)
				} else {
					out = append(out, vals.GetOneForMarshal(int(j)))
				}
			}
			rows = append(rows, out)
			row.Release()
		}
	}
	return rows
}

// TestMatrixRowLimit: a matrix row that cannot fit one message of
// --max-message-bytes is refused up front, by GetFlightInfo and DoGet,
// with a status that names the flag, the row's size and the pairs layout;
// at exactly the size the check asks for, every row arrives, each message
// within the limit, and the matrix equals the one of a server without a
// small limit. Before, such a row was sent alone and failed in gRPC.
func TestMatrixRowLimit(t *testing.T) {
	ctx := context.Background()
	const n = 1000
	ref := startServer(t, Config{})
	rcl := dial(t, ref.addr)
	uploadCase(t, ctx, rcl, "chain", chainCase(n))
	need := rowNeed(t, ctx, rcl, matrixQuery)
	if need < n*4 {
		t.Fatalf("a row of %d distances needs %d bytes by rowFits", n, need)
	}
	want := matrixRows(t, ctx, rcl, matrixQuery, DefaultMaxMessageBytes)
	if len(want) != n || len(want[0]) != n || want[0][n-1] == nil || want[n-1][0] != nil {
		t.Fatalf("reference matrix: %d rows; row 0 ends %v, row %d starts %v", len(want), want[0][n-1], n-1, want[n-1][0])
	}

	t.Run("refused", func(t *testing.T) {
		ts := startServer(t, Config{MaxMessageBytes: int(need - 1)})
		cl := dial(t, ts.addr)
		uploadCase(t, ctx, cl, "chain", chainCase(n))
		check := func(what string, err error) {
			t.Helper()
			msg := fmt.Sprint(err)
			if codeOf(err) != "ResourceExhausted" || !strings.Contains(msg, "--max-message-bytes") ||
				!strings.Contains(msg, fmt.Sprint(need-1)) || !strings.Contains(msg, fmt.Sprintf("takes %d bytes", need)) ||
				!strings.Contains(msg, `"pairs"`) || !strings.Contains(msg, fmt.Sprintf("%d distances", n)) {
				t.Errorf("%s: %v; want RESOURCE_EXHAUSTED naming the limit, the row's size and the pairs layout", what, err)
			}
		}
		_, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(matrixQuery)})
		check("GetFlightInfo", err)
		_, recs, err := doGet(ctx, cl, matrixQuery, memory.DefaultAllocator)
		releaseAll(recs)
		check("DoGet", err)
		// The pairs layout of the same graph passes the same limit.
		_, recs, err = doGet(ctx, cl, `{"graph": "chain", "layout": "pairs"}`, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("pairs: %v", err)
		}
		rows := int64(0)
		for _, r := range recs {
			rows += r.NumRows()
		}
		releaseAll(recs)
		if rows != n*(n+1)/2 {
			t.Errorf("pairs: %d rows; want %d", rows, n*(n+1)/2)
		}
	})

	t.Run("just fits", func(t *testing.T) {
		ts := startServer(t, Config{MaxMessageBytes: int(need)})
		cl := dial(t, ts.addr)
		uploadCase(t, ctx, cl, "chain", chainCase(n))
		if _, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(matrixQuery)}); err != nil {
			t.Fatalf("GetFlightInfo: %v", err)
		}
		got := matrixRows(t, ctx, cl, matrixQuery, int(need))
		if len(got) != len(want) {
			t.Fatalf("%d rows; want %d", len(got), len(want))
		}
		for i := range want {
			if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
				t.Fatalf("row %d differs from the reference", i)
			}
		}
	})

	t.Run("long id", func(t *testing.T) {
		// A string id is not in the up-front check: the row that carries
		// a long one is refused when it is sent, with the same status.
		c := chainCase(n)
		c.StringIDs = true
		c.Src[0] = strings.Repeat("v", 4096)
		ts := startServer(t, Config{MaxMessageBytes: int(need + 1024)})
		cl := dial(t, ts.addr)
		uploadCase(t, ctx, cl, "chain", c)
		_, recs, err := doGet(ctx, cl, matrixQuery, memory.DefaultAllocator)
		releaseAll(recs)
		if msg := fmt.Sprint(err); codeOf(err) != "ResourceExhausted" || !strings.Contains(msg, "--max-message-bytes") {
			t.Errorf("DoGet: %v; want RESOURCE_EXHAUSTED naming --max-message-bytes", err)
		}
	})
}
