package hierarchy

// Many-to-many: the bucket algorithm of Knopp, Sanders, Schultes, Schulz,
// Wagner, "Computing Many-to-Many Shortest Paths Using Highway
// Hierarchies", ALENEX 2007, on the contraction hierarchy. A backward
// upward search from every target t leaves (t, d(u, t)) in the bucket of
// each vertex u it settles; a forward upward search from every source s
// then scans the buckets of the vertices it settles, d(s, t) = min over u
// of d(s, u) + d(u, t). Both searches stall on demand, and stalled
// vertices neither fill nor scan buckets (their distance is not a
// shortest one, so no shortest up-down path has its top there).

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

// Table returns the distances from every source to every target,
// row-major: entry i·len(targets)+j is d(sources[i], targets[j]), Infinity
// when unreachable. Repeated sources or targets are fine. It runs the
// searches on every core; time O((|S| + |T|)·c + Σ bucket scans), with c
// the cost of one upward search, and memory O(n·workers + |T|·σ) for σ
// vertices in a backward search space. It fails for a vertex out of range.
func (h *Hierarchy) Table(sources, targets []graph.VertexID) ([]int64, error) {
	if err := checkTable(len(sources), len(targets)); err != nil {
		return nil, err
	}
	for _, list := range [][]graph.VertexID{sources, targets} {
		for _, v := range list {
			if err := h.checkVertex(v); err != nil {
				return nil, err
			}
		}
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), max(len(sources), len(targets))))
	queries := make([]*Query, workers)
	for i := range queries {
		queries[i] = h.NewQuery()
	}

	// 1. Backward searches from the targets fill per-worker entries.
	type entry struct {
		at     int32 // rank whose bucket holds the entry
		target int32
		d      int64
	}
	found := make([][]entry, workers)
	parallel(workers, len(targets), func(worker, j int) {
		q := queries[worker]
		q.search(&h.down, &h.up, q.bwd, &q.bwdHeap, &q.bwdTouched, h.rank[targets[j]], func(u int32, d int64) {
			found[worker] = append(found[worker], entry{u, int32(j), d})
		})
	})

	// 2. Buckets by rank: a counting sort of the entries.
	bucketOff := make([]int64, h.n+1)
	for _, list := range found {
		for _, e := range list {
			bucketOff[e.at+1]++
		}
	}
	for r := range h.n {
		bucketOff[r+1] += bucketOff[r]
	}
	bucketTarget := make([]int32, bucketOff[h.n])
	bucketDist := make([]int64, bucketOff[h.n])
	next := make([]int64, h.n)
	copy(next, bucketOff[:h.n])
	for _, list := range found {
		for _, e := range list {
			k := next[e.at]
			bucketTarget[k], bucketDist[k] = e.target, e.d
			next[e.at]++
		}
	}
	found, next = nil, nil

	// 3. Forward searches from the sources scan the buckets.
	width := len(targets)
	out := make([]int64, len(sources)*width)
	for i := range out {
		out[i] = Infinity
	}
	parallel(workers, len(sources), func(worker, i int) {
		q := queries[worker]
		row := out[i*width : (i+1)*width]
		q.search(&h.up, &h.down, q.fwd, &q.fwdHeap, &q.fwdTouched, h.rank[sources[i]], func(u int32, d int64) {
			for k := bucketOff[u]; k < bucketOff[u+1]; k++ {
				if s := d + bucketDist[k]; s < row[bucketTarget[k]] {
					row[bucketTarget[k]] = s
				}
			}
		})
	})
	return out, nil
}

// search runs a whole upward search from rank s along the arcs of ahead,
// stalling on those of stall (see step), and calls visit for every vertex
// it settles without stalling. dist, heap and touched are one direction's
// workspace; dist is reset to Infinity before it returns.
func (q *Query) search(ahead, stall *arcs, dist []int64, heap *distHeap, touched *[]int32, s int32, visit func(u int32, d int64)) {
	dist[s] = 0
	*touched = append((*touched)[:0], s)
	*heap = append((*heap)[:0], heapItem{0, s})
scan:
	for len(*heap) > 0 {
		it := heap.pop()
		u := it.v
		if it.d > dist[u] {
			continue
		}
		for k := stall.off[u]; k < stall.off[u+1]; k++ {
			if dx := dist[stall.head[k]]; dx != Infinity && dx+stall.w[k] < it.d {
				continue scan
			}
		}
		visit(u, it.d)
		for k := ahead.off[u]; k < ahead.off[u+1]; k++ {
			x := ahead.head[k]
			if d := it.d + ahead.w[k]; d < dist[x] {
				if dist[x] == Infinity {
					*touched = append(*touched, x)
				}
				dist[x] = d
				heap.push(heapItem{d, x})
			}
		}
	}
	for _, r := range *touched {
		dist[r] = Infinity
	}
	*touched = (*touched)[:0]
}

// parallel calls work(worker, i) for every i in [0, count) on workers
// goroutines, each i once.
func parallel(workers, count int, work func(worker, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				work(w, i)
			}
		}()
	}
	wg.Wait()
}

// checkTable is a guard for callers that size tables: the entry count
// must fit in an int.
func checkTable(sources, targets int) error {
	if targets > 0 && sources > int(^uint(0)>>1)/targets {
		return fmt.Errorf("hierarchy: a %d × %d table is too large", sources, targets)
	}
	return nil
}
