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
	for _, v := range sources {
		if err := h.checkVertex(v); err != nil {
			return nil, err
		}
	}
	buckets, err := h.NewBuckets(targets, 0)
	if err != nil {
		return nil, err
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(sources)))
	queries := make([]*Query, workers)
	for i := range queries {
		queries[i] = h.NewQuery()
	}
	width := len(targets)
	out := make([]int64, len(sources)*width)
	parallel(workers, len(sources), func(worker, i int) {
		queries[worker].scanBuckets(buckets, h.rank[sources[i]], out[i*width:(i+1)*width])
	})
	return out, nil
}

// Buckets is the target half of many-to-many: the backward upward search
// of every target, as entries (target, d(u, target)) in the bucket of
// each vertex u the search settles. Built once, it serves any number of
// sources (Query.DistancesTo), each for the cost of one upward search and
// its bucket scans. It is read-only and safe for concurrent use.
type Buckets struct {
	h      *Hierarchy
	width  int
	off    []int64 // bucket of rank r: [off[r], off[r+1])
	target []int32 // index into the targets
	dist   []int64
}

// NewBuckets runs the backward searches of targets on workers goroutines
// (0: runtime.GOMAXPROCS(0)) and returns their buckets: memory O(n +
// |T|·σ) for σ vertices in a backward search space. It fails for a target
// out of range.
func (h *Hierarchy) NewBuckets(targets []graph.VertexID, workers int) (*Buckets, error) {
	for _, v := range targets {
		if err := h.checkVertex(v); err != nil {
			return nil, err
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(targets)))
	// 1. Backward searches from the targets fill per-worker entries.
	type entry struct {
		at     int32 // rank whose bucket holds the entry
		target int32
		d      int64
	}
	found := make([][]entry, workers)
	queries := make([]*Query, workers)
	for i := range queries {
		queries[i] = h.NewQuery()
	}
	parallel(workers, len(targets), func(worker, j int) {
		q := queries[worker]
		q.search(&h.down, &h.up, q.bwd, &q.bwdHeap, &q.bwdTouched, h.rank[targets[j]], func(u int32, d int64) {
			found[worker] = append(found[worker], entry{u, int32(j), d})
		})
	})

	// 2. Buckets by rank: a counting sort of the entries.
	b := &Buckets{h: h, width: len(targets), off: make([]int64, h.n+1)}
	for _, list := range found {
		for _, e := range list {
			b.off[e.at+1]++
		}
	}
	for r := range h.n {
		b.off[r+1] += b.off[r]
	}
	b.target = make([]int32, b.off[h.n])
	b.dist = make([]int64, b.off[h.n])
	next := make([]int64, h.n)
	copy(next, b.off[:h.n])
	for _, list := range found {
		for _, e := range list {
			k := next[e.at]
			b.target[k], b.dist[k] = e.target, e.d
			next[e.at]++
		}
	}
	return b, nil
}

// Width is the number of targets.
func (b *Buckets) Width() int { return b.width }

// DistancesTo fills row (length b.Width()) with the distances from s to
// each of b's targets, Infinity when unreachable: one upward search from
// s that scans the buckets of the vertices it settles. It fails for s out
// of range, a row of another length or buckets of another hierarchy.
func (q *Query) DistancesTo(b *Buckets, s graph.VertexID, row []int64) error {
	if b.h != q.h {
		return fmt.Errorf("hierarchy: buckets of another hierarchy")
	}
	if err := q.h.checkVertex(s); err != nil {
		return err
	}
	if len(row) != b.width {
		return fmt.Errorf("hierarchy: %d distances for %d targets", len(row), b.width)
	}
	q.scanBuckets(b, q.h.rank[s], row)
	return nil
}

// scanBuckets is DistancesTo from rank s.
func (q *Query) scanBuckets(b *Buckets, s int32, row []int64) {
	for j := range row {
		row[j] = Infinity
	}
	h := q.h
	q.search(&h.up, &h.down, q.fwd, &q.fwdHeap, &q.fwdTouched, s, func(u int32, d int64) {
		for k := b.off[u]; k < b.off[u+1]; k++ {
			if t := d + b.dist[k]; t < row[b.target[k]] {
				row[b.target[k]] = t
			}
		}
	})
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
