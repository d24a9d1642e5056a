package flight

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func cmdDesc(cmd string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd)}
}

// recordsBytes is what recs' buffers take (pyarrow's Table.nbytes).
func recordsBytes(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		for _, c := range r.Columns() {
			for _, b := range c.Data().Buffers() {
				if b != nil {
					n += int64(b.Len())
				}
			}
		}
	}
	return n
}

// TestDeclaredUploadsTakeTurns: uploads that say their size ("expect")
// reserve it whole before their batches are read, so that several that
// do not fit in --max-memory side by side wait their turn and all
// succeed, the server holding nothing after them; a declared size past
// the whole budget, or past --max-upload-bytes, is refused at once, and a
// negative one is an invalid argument. Without it, concurrent uploads
// grew together until the youngest was refused.
func TestDeclaredUploadsTakeTurns(t *testing.T) {
	const budget = 1 << 20
	ts := startServer(t, Config{MaxMemory: budget, MaxUploadBytes: 4 << 20})
	cl := dial(t, ts.addr)
	ctx := context.Background()

	// 6000 int64 rows reserve about 2·144 KB + 56·6000 = 624 KB: one fits
	// the budget, two do not.
	schema, recs := edgeRecords(chainCase(6001), 500, memory.DefaultAllocator)
	defer releaseAll(recs)
	expect := fmt.Sprintf(`"expect": {"rows": 6000, "bytes": %d}`, recordsBytes(recs))

	const uploads = 5
	errs := make([]error, uploads)
	var wg sync.WaitGroup
	for i := range uploads {
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = upload(ctx, cl, cmdDesc(fmt.Sprintf(`{"graph": "g%d", %s}`, i, expect)), nil, schema, recs)
			} else { // the options on the first batch, with a path descriptor
				_, errs[i] = upload(ctx, cl, pathDesc(fmt.Sprintf("g%d", i)), []byte("{"+expect+"}"), schema, recs)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("upload g%d of %d at once, each saying its size: %v", i, uploads, err)
		}
	}
	if names, _ := listGraphs(ctx, cl); len(names) != uploads {
		t.Errorf("graphs %v; want %d", names, uploads)
	}
	if held := ts.budget.inUse(); held != 0 {
		t.Errorf("%d bytes still reserved after every upload ended", held)
	}

	for _, tc := range []struct {
		cmd  string
		code codes.Code
		want string
	}{
		{`{"graph": "big", "expect": {"rows": 1, "bytes": 3000000}}`, codes.ResourceExhausted, "--max-memory"},
		{`{"graph": "big", "expect": {"rows": 100000, "bytes": 0}}`, codes.ResourceExhausted, "--max-memory"},
		{`{"graph": "big", "expect": {"rows": 1, "bytes": 5000000}}`, codes.ResourceExhausted, "--max-upload-bytes"},
		{`{"graph": "big", "expect": {"rows": -1, "bytes": 10}}`, codes.InvalidArgument, "want counts of 0 or more"},
		{`{"graph": "big", "expect": {"row": 1}}`, codes.InvalidArgument, "row"},
	} {
		_, err := upload(ctx, cl, cmdDesc(tc.cmd), nil, schema, recs)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("upload %s: %v; want %s naming %q", tc.cmd, err, tc.code, tc.want)
		}
	}
	if names, _ := listGraphs(ctx, cl); len(names) != uploads {
		t.Errorf("graphs %v after the refused uploads; want the %d stored before", names, uploads)
	}
	ts.shutdown(t)
	checkNoLeftovers(t, ts.cfg.DataDir)
}
