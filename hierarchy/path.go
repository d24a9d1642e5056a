package hierarchy

// One pair with its path: the bidirectional upward search of Distance
// with a parent arc per vertex, then the meeting vertex's two halves
// unpacked from shortcuts. A shortcut x→y bypassing m stands for the arcs
// x→m and m→y, both of the hierarchy (m ranks below x and y: the arc
// from the higher end is a downward arc stored at m, the other an upward
// one), so the unpacking looks each up among m's arcs and recurses until
// only arcs of the graph are left. It checks that the two halves add up
// to the shortcut, so that a damaged index gives an error, not a wrong
// path.

import (
	"github.com/pathctl/pathctl/graph"
)

// noParent marks a vertex without a parent arc (a search's start).
const noParent = -1

// Path returns the distance from s to t and a shortest path as the
// vertices from s to t (just s when s == t); Infinity and a nil path when t
// is unreachable. It settles the two upward search spaces, as Distance,
// and unpacks the path in time linear in its arcs times the degrees of the
// vertices bypassed. It fails for s or t out of range, and for a hierarchy
// whose shortcuts do not add up (a damaged index).
func (q *Query) Path(s, t graph.VertexID) (int64, []graph.VertexID, error) {
	h := q.h
	if err := h.checkVertex(s); err != nil {
		return 0, nil, err
	}
	if err := h.checkVertex(t); err != nil {
		return 0, nil, err
	}
	if q.fwdParent == nil {
		q.fwdParent, q.bwdParent = make([]int64, h.n), make([]int64, h.n)
	}
	rs, rt := h.rank[s], h.rank[t]
	best, meet := int64(Infinity), int32(-1)
	q.fwd[rs], q.bwd[rt] = 0, 0
	q.fwdParent[rs], q.bwdParent[rt] = noParent, noParent
	q.fwdTouched = append(q.fwdTouched[:0], rs)
	q.bwdTouched = append(q.bwdTouched[:0], rt)
	q.fwdHeap = append(q.fwdHeap[:0], heapItem{0, rs})
	q.bwdHeap = append(q.bwdHeap[:0], heapItem{0, rt})
	if rs == rt {
		best, meet = 0, rs
	}
	fwd := pathSearch{ahead: &h.up, stall: &h.down, dist: q.fwd, other: q.bwd, parent: q.fwdParent, heap: &q.fwdHeap, touched: &q.fwdTouched}
	bwd := pathSearch{ahead: &h.down, stall: &h.up, dist: q.bwd, other: q.fwd, parent: q.bwdParent, heap: &q.bwdHeap, touched: &q.bwdTouched}
	for {
		fwdOpen := len(q.fwdHeap) > 0 && q.fwdHeap[0].d < best
		bwdOpen := len(q.bwdHeap) > 0 && q.bwdHeap[0].d < best
		if !fwdOpen && !bwdOpen {
			break
		}
		if fwdOpen && (!bwdOpen || q.fwdHeap[0].d <= q.bwdHeap[0].d) {
			fwd.step(&best, &meet)
		} else {
			bwd.step(&best, &meet)
		}
	}
	defer q.clearTouched()
	if best == Infinity {
		return Infinity, nil, nil
	}
	// The ranks from s up to the meeting vertex, then down to t.
	up := []int32{meet}
	for r := meet; q.fwdParent[r] != noParent; {
		r = h.up.tailOf(q.fwdParent[r])
		up = append(up, r)
	}
	path := make([]graph.VertexID, 0, 2*len(up))
	path = append(path, h.order[up[len(up)-1]])
	for i := len(up) - 1; i > 0; i-- {
		var err error
		if path, err = unpack(h, up[i], up[i-1], h.up.w[q.fwdParent[up[i-1]]], path); err != nil {
			return 0, nil, err
		}
	}
	for r := meet; q.bwdParent[r] != noParent; {
		k := q.bwdParent[r]
		next := h.down.tailOf(k)
		var err error
		if path, err = unpack(h, r, next, h.down.w[k], path); err != nil {
			return 0, nil, err
		}
		r = next
	}
	return best, path, nil
}

// pathSearch is one direction of Path's search.
type pathSearch struct {
	ahead, stall *arcs
	dist, other  []int64
	parent       []int64 // the arc (index into ahead) that set dist
	heap         *distHeap
	touched      *[]int32
}

// step settles one vertex as Query.step does, and records parent arcs and
// the meeting vertex of the best distance.
func (p *pathSearch) step(best *int64, meet *int32) {
	it := p.heap.pop()
	u := it.v
	if it.d > p.dist[u] {
		return
	}
	if o := p.other[u]; o != Infinity && it.d+o < *best {
		*best, *meet = it.d+o, u
	}
	for k := p.stall.off[u]; k < p.stall.off[u+1]; k++ {
		if dx := p.dist[p.stall.head[k]]; dx != Infinity && dx+p.stall.w[k] < it.d {
			return
		}
	}
	for k := p.ahead.off[u]; k < p.ahead.off[u+1]; k++ {
		x := p.ahead.head[k]
		if d := it.d + p.ahead.w[k]; d < p.dist[x] {
			if p.dist[x] == Infinity {
				*p.touched = append(*p.touched, x)
			}
			p.dist[x], p.parent[x] = d, k
			p.heap.push(heapItem{d, x})
		}
	}
}

// tailOf is the rank that stores arc k (the arcs are by rank, so a binary
// search over the offsets).
func (a *arcs) tailOf(k int64) int32 {
	lo, hi := 0, len(a.off)-1 // off[lo] <= k < off[hi]
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if a.off[mid] <= k {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int32(lo)
}

// arcOf looks up h's arc from rank x to rank y, in the graph's
// direction: its weight and bypassed rank.
func arcOf(h *Hierarchy, x, y int32) (w int64, mid int32, ok bool) {
	half, at, head := &h.up, x, y
	if x > y {
		half, at, head = &h.down, y, x
	}
	for k := half.off[at]; k < half.off[at+1]; k++ {
		if half.head[k] == head {
			return half.w[k], half.mid[k], true
		}
	}
	return 0, 0, false
}

// unpack appends to path the vertices after rank x on h's arc x→y of
// weight w, shortcuts replaced by the arcs they stand for.
func unpack(h *Hierarchy, x, y int32, w int64, path []graph.VertexID) ([]graph.VertexID, error) {
	type hop struct {
		x, y int32
		w    int64
	}
	stack := []hop{{x, y, w}}
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		aw, mid, ok := arcOf(h, a.x, a.y)
		if !ok || aw != a.w {
			return nil, corrupt("no arc of weight %d from rank %d to rank %d on a shortcut's path", a.w, a.x, a.y)
		}
		if mid < 0 {
			if len(path) > 2*h.n {
				return nil, corrupt("the shortcut from rank %d to rank %d unpacks into more than %d vertices", x, y, 2*h.n)
			}
			path = append(path, h.order[a.y])
			continue
		}
		w1, _, ok1 := arcOf(h, a.x, mid)
		w2, _, ok2 := arcOf(h, mid, a.y)
		if !ok1 || !ok2 || mid >= min(a.x, a.y) || w1 > a.w || w2 != a.w-w1 {
			return nil, corrupt("the shortcut from rank %d to rank %d does not add up through rank %d", a.x, a.y, mid)
		}
		stack = append(stack, hop{mid, a.y, w2}, hop{a.x, mid, w1}) // x→mid first
	}
	return path, nil
}
