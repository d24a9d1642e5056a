package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// randomCase is a random graph on ids 0..n-1 (a path through all of them
// plus m random edges) with integer or float64 weights in [1, 100].
func randomCase(seed uint64, n, m int, float bool) testgraphs.Case {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := testgraphs.Case{Name: fmt.Sprintf("random-%d", seed), Kind: testgraphs.Int}
	if float {
		c.Kind = testgraphs.Float64
	}
	weight := func() float64 {
		if float {
			return 1 + 99*rng.Float64()
		}
		return float64(1 + rng.IntN(100))
	}
	for i := range n - 1 {
		c.Src, c.Dst, c.Weights = append(c.Src, fmt.Sprint(i)), append(c.Dst, fmt.Sprint(i+1)), append(c.Weights, weight())
	}
	for range m {
		c.Src, c.Dst, c.Weights = append(c.Src, fmt.Sprint(rng.IntN(n))), append(c.Dst, fmt.Sprint(rng.IntN(n))), append(c.Weights, weight())
	}
	return c
}

// TestRandomAgainstReference checks matrix results, sliced into many
// messages, against the serial Dijkstra of internal/ref.
func TestRandomAgainstReference(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := testgraphs.Seed(t)
	ts := startServer(t, Config{Allocator: mem, MaxBatchBytes: 4 << 10})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	for _, float := range []bool{false, true} {
		for _, undirected := range []bool{false, true} {
			c := randomCase(seed, 300, 1200, float)
			c.Undirected = undirected
			name := fmt.Sprintf("r-%v-%v", float, undirected)
			uploadCase(t, ctx, cl, name, c)
			g, err := c.CSR()
			if err != nil {
				t.Fatal(err)
			}
			_, recs, err := doGet(ctx, cl, fmt.Sprintf(`{"graph": %q, "layout": "matrix", "algorithm": "dijkstra"}`, name), mem)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if len(recs) < 10 {
				t.Errorf("seed %d: %d batches; the result was not sliced", seed, len(recs))
			}
			rows := 0
			for _, r := range recs {
				src := stringsOf(r.Column(0))
				lists := r.Column(1).(*array.FixedSizeList)
				for i := range src {
					s := c.Index()[src[i]]
					lo, hi := lists.ValueOffsets(i)
					got := floatsOf(t, array.NewSlice(lists.ListValues(), lo, hi))
					var want []float64
					if float {
						d, _ := ref.Dijkstra[float64](g, s)
						want = convertBack(d)
					} else {
						d, _ := ref.Dijkstra[int32](g, s)
						want = convertBack(d)
					}
					for v := range want {
						if got[v] != want[v] && math.Abs(got[v]-want[v]) > 1e-9*want[v] {
							t.Fatalf("seed %d, %s: d(%d, %d) = %v, want %v", seed, name, s, v, got[v], want[v])
						}
					}
					rows++
				}
			}
			if rows != 300 {
				t.Errorf("seed %d: %d rows", seed, rows)
			}
			releaseAll(recs)
		}
	}
	ts.shutdown(t)
}

func convertBack[D graph.Number](d []D) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		if x == graph.Infinity[D]() {
			out[i] = math.Inf(1)
		} else {
			out[i] = float64(x)
		}
	}
	return out
}

// TestLoad runs 16 clients × 50 mixed requests against one server and
// checks that every answer is right, that nothing fails, and that
// goroutines and heap come back near where they started.
func TestLoad(t *testing.T) {
	const clients, perClient = 16, 50
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem, MaxConcurrent: 2})
	ctx := context.Background()
	setup := dial(t, ts.addr)
	for i, c := range []testgraphs.Case{randomCase(1, 100, 400, false), randomCase(2, 80, 300, true), chainCase(100)} {
		uploadCase(t, ctx, setup, fmt.Sprintf("g%d", i), c)
	}
	queries := []string{
		`{"graph": "g0"}`,
		`{"graph": "g0", "layout": "stats"}`,
		`{"graph": "g1", "layout": "matrix", "sources": ["3", 4, "5"]}`,
		`{"graph": "g1", "algorithm": "bellman-ford", "with_predecessors": true, "sources": [0]}`,
		`{"graph": "g2", "algorithm": "bfs", "layout": "stats"}`,
		`{"graph": "g2", "algorithm": "delta", "sources": ["50"]}`,
	}
	want := map[string]arrow.Table{}
	for _, q := range queries {
		schema, recs, err := doGet(ctx, setup, q, mem)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want[q] = tableOf(schema, recs)
		releaseAll(recs)
	}
	defer func() {
		for _, tbl := range want {
			tbl.Release()
		}
	}()
	conns := make([]flight.Client, clients)
	for i := range conns {
		conns[i] = dial(t, ts.addr)
		// Connect now: the connection's own goroutines are not the load's.
		if _, err := listGraphs(ctx, conns[i]); err != nil {
			t.Fatal(err)
		}
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutinesBefore := runtime.NumGoroutine()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for ci, cl := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(ci), 1))
			for r := range perClient {
				switch k := rng.IntN(10); {
				case k < 7:
					q := queries[rng.IntN(len(queries))]
					schema, recs, err := doGet(ctx, cl, q, mem)
					if err != nil {
						fail("client %d request %d %s: %v", ci, r, q, err)
						continue
					}
					got := tableOf(schema, recs)
					if !array.TableEqual(got, want[q]) {
						fail("client %d request %d %s: a different answer", ci, r, q)
					}
					got.Release()
					releaseAll(recs)
				case k < 8:
					names, err := listGraphs(ctx, cl)
					if err != nil || len(names) != 3 {
						fail("client %d list: %v %v", ci, names, err)
					}
				case k < 9:
					info, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(queries[0])})
					if err != nil || len(info.Endpoint) != 1 {
						fail("client %d info: %v", ci, err)
					}
				default:
					body, err := doAction(ctx, cl, ActionInfo, "")
					if err != nil || !json.Valid(body) {
						fail("client %d action: %s %v", ci, body, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, f := range failures {
		t.Error(f)
	}
	if elapsed > 60*time.Second {
		t.Errorf("%d requests took %v", clients*perClient, elapsed)
	}

	// Goroutines and heap settle back near the start once the calls end.
	var after runtime.MemStats
	var goroutinesAfter int
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		runtime.ReadMemStats(&after)
		goroutinesAfter = runtime.NumGoroutine()
		if goroutinesAfter <= goroutinesBefore+2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d clients × %d requests in %v (%.0f requests/s); goroutines %d -> %d; heap %.1f MiB -> %.1f MiB; Arrow memory in use after: %d bytes",
		clients, perClient, elapsed.Round(time.Millisecond), float64(clients*perClient)/elapsed.Seconds(),
		goroutinesBefore, goroutinesAfter, float64(before.HeapAlloc)/(1<<20), float64(after.HeapAlloc)/(1<<20), mem.CurrentAlloc())
	if goroutinesAfter > goroutinesBefore+2 {
		t.Errorf("goroutines %d after the load, %d before", goroutinesAfter, goroutinesBefore)
	}
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 16<<20 {
		t.Errorf("heap grew by %d bytes", grow)
	}
	for _, c := range conns {
		c.Close()
	}
	ts.shutdown(t)
}
