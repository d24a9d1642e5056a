package flight

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// loadOverheadBytes is what the process holds beyond --max-memory in
// TestHostileLoad: the Go runtime's heap goal above the live bytes
// (GOGC=100 lets garbage reach the live size), the loaded graphs of the
// cache (bounded apart, by --cache-bytes), gRPC's buffers per connection
// and the clients of the test itself, which run in the same process. The
// "Running pathctl serve safely" in docs/serve.md gives the same figure.
const loadOverheadBytes = 1 << 30

// rssBytes is the resident set of this process (VmRSS), 0 where /proc
// does not say.
func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestHostileLoad runs 50 clients for 30 s against a server with a budget
// of 2 GiB: well-behaved clients upload graphs and run queries (each
// checked against the answer of a quiet server), others start a large
// query and stop reading, or send one batch of an upload and stop
// sending. The server stays up, its memory stays under the budget plus
// loadOverheadBytes, and every well-behaved request is served within its
// deadline (an upload refused for --max-uploads tries again within it).
func TestHostileLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 30 s of load; the race run has -short")
	}
	const (
		clients  = 50
		duration = 30 * time.Second
		budget   = 2 << 30
		deadline = 20 * time.Second
	)
	ts := startServer(t, Config{MaxMemory: budget, MaxConcurrent: 2, MaxUploads: 8, IdleTimeout: 2 * time.Second})
	ctx := context.Background()
	setup := dial(t, ts.addr)
	small := randomCase(1, 200, 800, false)
	uploadCase(t, ctx, setup, "small", small)
	uploadCase(t, ctx, setup, "big", randomCase(2, 2000, 8000, false))
	queries := []string{
		`{"graph": "small", "sources": [0, 5, 9]}`,
		`{"graph": "small", "layout": "stats"}`,
		`{"graph": "small", "sources": [3], "k": 1000000000}`,
		`{"graph": "small", "sources": [1], "targets": [2, 2, 3], "with_paths": true}`,
	}
	want := map[string]int64{}
	for _, q := range queries {
		_, recs, err := doGet(ctx, setup, q, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want[q] = rowCount(recs)
		releaseAll(recs)
	}
	uploadSchema, uploadRecs := edgeRecords(randomCase(3, 5000, 40000, false), 4096, memory.DefaultAllocator)
	defer releaseAll(uploadRecs)

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := rssBytes(); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	var served, stalledReads, stalledUploads atomic.Int64
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	for ci := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := dial(t, ts.addr)
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			for r := 0; time.Now().Before(end); r++ {
				rctx, cancel := context.WithTimeout(ctx, deadline)
				switch k := rng.IntN(10); {
				case k < 5: // a query
					q := queries[rng.IntN(len(queries))]
					_, recs, err := doGet(rctx, cl, q, memory.DefaultAllocator)
					switch {
					case err != nil:
						fail("client %d request %d %s: %v", ci, r, q, err)
					case rowCount(recs) != want[q]:
						fail("client %d request %d %s: %d rows, want %d", ci, r, q, rowCount(recs), want[q])
					default:
						served.Add(1)
					}
					releaseAll(recs)
				case k < 7: // an upload, again while --max-uploads refuses it
					name := fmt.Sprintf("up%d", ci)
					for {
						_, err := upload(rctx, cl, pathDesc(name), nil, uploadSchema, uploadRecs)
						if status.Code(err) == codes.ResourceExhausted && rctx.Err() == nil {
							time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
							continue
						}
						if err != nil {
							fail("client %d upload %d: %v", ci, r, err)
						} else {
							served.Add(1)
						}
						break
					}
				case k < 8: // a large query, one message read
					if a, err := cl.DoGet(rctx, &flight.Ticket{Ticket: []byte(`{"graph":"big"}`)}); err == nil {
						_, _ = a.Recv()
						stalledReads.Add(1)
						select {
						case <-rctx.Done():
						case <-time.After(5 * time.Second):
						}
					}
				default: // one batch of an upload, then nothing
					if s, err := cl.DoPut(rctx); err == nil {
						w := flight.NewRecordWriter(s, ipc.WithSchema(uploadSchema))
						w.SetFlightDescriptor(pathDesc(fmt.Sprintf("stalled%d", ci)))
						if w.Write(uploadRecs[0]) == nil {
							stalledUploads.Add(1)
						}
						select {
						case <-rctx.Done():
						case <-time.After(5 * time.Second):
						}
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	for _, f := range failures {
		t.Error(f)
	}
	if served.Load() == 0 || stalledReads.Load() == 0 || stalledUploads.Load() == 0 {
		t.Errorf("served %d, stalled readers %d, stalled uploads %d: want some of each", served.Load(), stalledReads.Load(), stalledUploads.Load())
	}
	if p := peak.Load(); p > budget+loadOverheadBytes {
		t.Errorf("peak RSS %d MiB, above the budget of %d MiB and the overhead of %d MiB", p>>20, budget>>20, loadOverheadBytes>>20)
	}
	if _, recs, err := doGet(ctx, setup, queries[0], memory.DefaultAllocator); err != nil {
		t.Errorf("after the load: %v", err)
	} else {
		releaseAll(recs)
	}
	t.Logf("served %d well-behaved requests beside %d stalled readers and %d stalled uploads; peak RSS %d MiB",
		served.Load(), stalledReads.Load(), stalledUploads.Load(), peak.Load()>>20)
}
