package gpu

import (
	"context"
	"sync"
	"testing"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// fakeMemoryEngine is an Engine over a fake driver that only allocates,
// frees, uploads (copying nothing) and reports free memory: total minus
// what is allocated. Enough for Prepare and Close, which launch nothing;
// no device needed.
func fakeMemoryEngine(t *testing.T, total int64) *Engine {
	t.Helper()
	var mu sync.Mutex
	held := map[uint64]int64{}
	next := uint64(1 << 20)
	used := int64(0)
	d := &driver{}
	d.cuMemAlloc_v2 = func(p *uint64, size uint64) Result {
		mu.Lock()
		defer mu.Unlock()
		if used+int64(size) > total {
			return ResultOutOfMemory
		}
		*p, next = next, next+(size+255)&^255
		held[*p] = int64(size)
		used += int64(size)
		return Success
	}
	d.cuMemFree_v2 = func(p uint64) Result {
		mu.Lock()
		defer mu.Unlock()
		size, ok := held[p]
		if !ok {
			return ResultInvalidValue
		}
		delete(held, p)
		used -= size
		return Success
	}
	d.cuMemcpyHtoD_v2 = func(uint64, unsafe.Pointer, uint64) Result { return Success }
	d.cuMemGetInfo_v2 = func(free, all *uint64) Result {
		mu.Lock()
		defer mu.Unlock()
		*free, *all = uint64(total-used), uint64(total)
		return Success
	}
	dv := &device{d: d, work: make(chan func())}
	go func() {
		for f := range dv.work {
			f()
		}
	}()
	t.Cleanup(func() { close(dv.work) })
	return &Engine{dev: dv, runners: map[*Runner]struct{}{}}
}

// TestCutoffArcsInTheBudget checks the device memory a batched runner
// under a cutoff takes beside its per-source buffers: Prepare uploads the
// arcs in rising weight that the cutoff rounds walk (m × (4 + the
// distance's size) bytes) with the CSR, before it returns, so the free
// memory the pipeline's budget reads after Prepare (DeviceBudget,
// DefaultBudget) has them out already; a runner without a cutoff, or with
// the in-kernel cutoff switched off, takes the CSR alone; Close frees
// both.
func TestCutoffArcsInTheBudget(t *testing.T) {
	rng := newSeed(t)
	const total = 1 << 30
	n := 500
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 4 * n, Kind: testgraphs.Int, MaxWeight: 20})
	off := defaultBatchedConfig()
	off.KernelCutoff = false
	for _, typ := range []graph.DistType{graph.DistInt32, graph.DistInt64, graph.DistFloat32, graph.DistFloat64} {
		g, err := graph.Build(edges, graph.BuildOptions{DistType: typ})
		if err != nil {
			t.Fatal(err)
		}
		m := g.NumEdges()
		csr := 8*int64(n+1) + 4*m + int64(typ.Size())*m
		sorted := m * int64(4+typ.Size())
		for _, tc := range []struct {
			what string
			req  graph.Request
			cfg  batchedConfig
			want int64
		}{
			{"cutoff", graph.Request{Algorithm: Batched, Cutoff: 10, HasCutoff: true}, defaultBatchedConfig(), csr + sorted},
			{"cutoff with predecessors", graph.Request{Algorithm: Batched, Cutoff: 10, HasCutoff: true, WithPredecessors: true}, defaultBatchedConfig(), csr + sorted},
			{"no cutoff", graph.Request{Algorithm: Batched}, defaultBatchedConfig(), csr},
			{"in-kernel cutoff off", graph.Request{Algorithm: Batched, Cutoff: 10, HasCutoff: true}, off, csr},
			{"dijkstra under a cutoff", graph.Request{Algorithm: graph.Dijkstra, Cutoff: 10, HasCutoff: true}, defaultBatchedConfig(), csr},
		} {
			e := fakeMemoryEngine(t, total)
			r, err := e.prepare(context.Background(), g, tc.req, tc.cfg)
			if err != nil {
				t.Fatalf("%s, %s: %v", typ, tc.what, err)
			}
			free, err := e.FreeMemory()
			if err != nil {
				t.Fatal(err)
			}
			if live := e.LiveBytes(); live != tc.want || free != total-tc.want {
				t.Errorf("%s, %s: %d device bytes after Prepare (%d free), want %d (%d free)", typ, tc.what, live, free, tc.want, total-tc.want)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("%s, %s: Close: %v", typ, tc.what, err)
			}
			if live := e.LiveBytes(); live != 0 {
				t.Errorf("%s, %s: %d device bytes after Close", typ, tc.what, live)
			}
		}
	}
}
