package hierarchy

// Queries on the CPU.
//
//   - Distance: the bidirectional upward search of CH (Geisberger et al.
//     2008) with stall-on-demand: a vertex whose tentative distance a
//     higher neighbour beats is not expanded.
//   - DistancesFrom: PHAST (Delling, Goldberg, Nowatzyk, Werneck, "PHAST:
//     Hardware-accelerated shortest path trees", IPDPS 2011 / JPDC 2013):
//     a Dijkstra from s in the upward graph, then one sweep over the ranks
//     from the highest down, d(v) = min(d(v), d(u) + w(u, v)) over the
//     downward arcs u→v into v, whose tails u were swept before v.
//   - Nearest: the nearest of many sources, one upward phase from every
//     source at once (a DP in rising rank), then one downward sweep, as
//     PHAST does for one source. Each vertex carries a (distance, source) label, the smaller
//     distance first and among equal ones the smaller source id; adding an
//     arc's weight keeps the order, so the upward search and the sweep take
//     the least label of every up-down path, which is the nearest source
//     of the graph's distances (for each source the least up-down path is
//     its distance). O(n + arcs), whatever the number of sources.

import (
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// Query is the workspace of queries on one hierarchy: O(n) memory, reused
// by every call. A Query is not safe for concurrent use; give each
// goroutine its own.
type Query struct {
	h          *Hierarchy
	fwd, bwd   []int64 // tentative distances by rank, Infinity when untouched
	fwdTouched []int32
	bwdTouched []int32
	fwdHeap    distHeap
	bwdHeap    distHeap
	// The arcs that set fwd and bwd, for Path (allocated by its first
	// call).
	fwdParent, bwdParent []int64
}

// NewQuery returns a workspace for queries on h.
func (h *Hierarchy) NewQuery() *Query {
	q := &Query{h: h, fwd: make([]int64, h.n), bwd: make([]int64, h.n)}
	for i := range q.fwd {
		q.fwd[i], q.bwd[i] = Infinity, Infinity
	}
	return q
}

func (h *Hierarchy) checkVertex(v graph.VertexID) error {
	if v < 0 || int(v) >= h.n {
		return fmt.Errorf("hierarchy: vertex %d out of range [0, %d)", v, h.n)
	}
	return nil
}

// DistancesFrom fills dst (length NumVertices) with the distances from s
// by PHAST: an upward search, then a sweep over every vertex and every
// downward arc once, O(n + m⁺) with m⁺ the hierarchy's arcs. Unreachable
// vertices hold Infinity. Distances are in units of 2^-FractionBits (see
// Float). It fails for s out of range or a dst of another length.
func (q *Query) DistancesFrom(s graph.VertexID, dst []int64) error {
	h := q.h
	if err := h.checkVertex(s); err != nil {
		return err
	}
	if len(dst) != h.n {
		return fmt.Errorf("hierarchy: %d distances for %d vertices", len(dst), h.n)
	}
	// 1. The upward search from s; q.fwd holds Infinity everywhere.
	dist := q.fwd
	q.upward(h.rank[s])
	q.fwdTouched = q.fwdTouched[:0]
	// 2. The downward sweep, from the highest rank down; then q.fwd is
	// reset to Infinity.
	off, head, w, order := h.down.off, h.down.head, h.down.w, h.order
	for r := h.n - 1; r >= 0; r-- {
		d := dist[r]
		for k := off[r]; k < off[r+1]; k++ {
			if du := dist[head[k]]; du != Infinity && du+w[k] < d {
				d = du + w[k]
			}
		}
		dist[r] = d
		dst[order[r]] = d
	}
	for r := range dist {
		dist[r] = Infinity
	}
	return nil
}

// upward runs a plain Dijkstra from rank s in the upward graph into q.fwd.
func (q *Query) upward(s int32) {
	h := q.h
	dist := q.fwd
	dist[s] = 0
	q.fwdHeap = append(q.fwdHeap[:0], heapItem{0, s})
	for len(q.fwdHeap) > 0 {
		it := q.fwdHeap.pop()
		u := it.v
		if it.d > dist[u] {
			continue
		}
		for k := h.up.off[u]; k < h.up.off[u+1]; k++ {
			x := h.up.head[k]
			if d := it.d + h.up.w[k]; d < dist[x] {
				dist[x] = d
				q.fwdHeap.push(heapItem{d, x})
			}
		}
	}
}

// DistancesFrom is Query.DistancesFrom on a workspace of its own.
func (h *Hierarchy) DistancesFrom(s graph.VertexID, dst []int64) error {
	return h.NewQuery().DistancesFrom(s, dst)
}

// Distance returns the distance from s to t, Infinity when t is
// unreachable, by the bidirectional upward search with stall-on-demand.
// It settles only vertices of the two upward search spaces (hundreds on
// road networks). It fails for s or t out of range.
func (q *Query) Distance(s, t graph.VertexID) (int64, error) {
	h := q.h
	if err := h.checkVertex(s); err != nil {
		return 0, err
	}
	if err := h.checkVertex(t); err != nil {
		return 0, err
	}
	rs, rt := h.rank[s], h.rank[t]
	best := int64(Infinity)
	q.fwd[rs], q.bwd[rt] = 0, 0
	q.fwdTouched = append(q.fwdTouched[:0], rs)
	q.bwdTouched = append(q.bwdTouched[:0], rt)
	q.fwdHeap = append(q.fwdHeap[:0], heapItem{0, rs})
	q.bwdHeap = append(q.bwdHeap[:0], heapItem{0, rt})
	if rs == rt {
		best = 0
	}
	for {
		fwdOpen := len(q.fwdHeap) > 0 && q.fwdHeap[0].d < best
		bwdOpen := len(q.bwdHeap) > 0 && q.bwdHeap[0].d < best
		if !fwdOpen && !bwdOpen {
			break
		}
		if fwdOpen && (!bwdOpen || q.fwdHeap[0].d <= q.bwdHeap[0].d) {
			best = q.step(&h.up, &h.down, q.fwd, q.bwd, &q.fwdHeap, &q.fwdTouched, best)
		} else {
			best = q.step(&h.down, &h.up, q.bwd, q.fwd, &q.bwdHeap, &q.bwdTouched, best)
		}
	}
	q.clearTouched()
	return best, nil
}

// step settles one vertex of a search that follows the arcs of ahead,
// stalls on the arcs of stall (the arcs into the vertex from higher ranks,
// in the search's direction), and meets the other search's distances in
// other. It returns the improved best meeting distance.
func (q *Query) step(ahead, stall *arcs, dist, other []int64, heap *distHeap, touched *[]int32, best int64) int64 {
	it := heap.pop()
	u := it.v
	if it.d > dist[u] {
		return best
	}
	if o := other[u]; o != Infinity && it.d+o < best {
		best = it.d + o
	}
	for k := stall.off[u]; k < stall.off[u+1]; k++ {
		if dx := dist[stall.head[k]]; dx != Infinity && dx+stall.w[k] < it.d {
			return best // stalled: a higher vertex reaches u by a shorter path
		}
	}
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
	return best
}

func (q *Query) clearTouched() {
	for _, r := range q.fwdTouched {
		q.fwd[r] = Infinity
	}
	for _, r := range q.bwdTouched {
		q.bwd[r] = Infinity
	}
	q.fwdTouched, q.bwdTouched = q.fwdTouched[:0], q.bwdTouched[:0]
}

// Distance is Query.Distance on a workspace of its own (O(n) to allocate:
// reuse a Query for many pairs).
func (h *Hierarchy) Distance(s, t graph.VertexID) (int64, error) {
	return h.NewQuery().Distance(s, t)
}

// PathOf is Query.Path on a workspace of its own.
func (h *Hierarchy) PathOf(s, t graph.VertexID) (int64, []graph.VertexID, error) {
	return h.NewQuery().Path(s, t)
}

// Nearest fills dist and source (each of length NumVertices) with every
// vertex's distance to the nearest of sources and that source, ties to
// the smaller source id; Infinity and -1 where no source reaches.
// Distances are in units of 2^-FractionBits (see Float). It fails for a
// source out of range or buffers of another length.
func (h *Hierarchy) Nearest(sources []graph.VertexID, dist []int64, source []graph.VertexID) error {
	if len(dist) != h.n || len(source) != h.n {
		return fmt.Errorf("hierarchy: %d distances and %d sources for %d vertices", len(dist), len(source), h.n)
	}
	for _, s := range sources {
		if err := h.checkVertex(s); err != nil {
			return err
		}
	}
	// By rank: the label of each vertex, distance and source side by
	// side (one cache line per arc's tail in the sweep).
	type label struct {
		d    int64
		from graph.VertexID
	}
	at := make([]label, h.n)
	for r := range at {
		at[r] = label{Infinity, -1}
	}
	less := func(a, b label) bool { return a.d < b.d || (a.d == b.d && a.from < b.from) }
	// 1. The upward phase from every source at once, a DP in rising rank
	// (every arc climbs, so a vertex's label is final when its turn
	// comes): O(n) plus the arcs of the vertices reached.
	for _, s := range sources {
		if r := h.rank[s]; less(label{0, s}, at[r]) {
			at[r] = label{0, s}
		}
	}
	for u := range int32(h.n) {
		lu := at[u]
		if lu.d == Infinity {
			continue
		}
		for k := h.up.off[u]; k < h.up.off[u+1]; k++ {
			if x, c := h.up.head[k], (label{lu.d + h.up.w[k], lu.from}); less(c, at[x]) {
				at[x] = c
			}
		}
	}
	// 2. The downward sweep, from the highest rank down: the tails of the
	// arcs into r rank higher, swept before r.
	off, head, w := h.down.off, h.down.head, h.down.w
	for r := h.n - 1; r >= 0; r-- {
		best := at[r]
		for k := off[r]; k < off[r+1]; k++ {
			if lx := at[head[k]]; lx.d != Infinity {
				if c := (label{lx.d + w[k], lx.from}); less(c, best) {
					best = c
				}
			}
		}
		at[r] = best
		v := h.order[r]
		dist[v], source[v] = best.d, best.from
	}
	return nil
}
