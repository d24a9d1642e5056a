package cpu

// Algorithm: "auto" — the project's own kernels for the fastest CPU path,
// one serial search per source with the sources of a block spread over the
// workers (no atomics, no per-source allocation: every buffer belongs to a
// worker and is reused).
//
//   - Negative weights: bellman-ford (bellmanford.go), the only correct one.
//   - Unweighted: breadth-first search with a FIFO queue, O(n + m).
//   - Integer weights in [0, 4096]: Dijkstra with Dial's cyclic bucket queue
//     of max weight + 1 buckets, O(m + longest distance) per source.
//   - Otherwise: Dijkstra with an indexed 4-ary min-heap of (distance,
//     vertex) entries and decrease-key, O((n + m) log n), memory bounded by n
//     entries.
//
// A cutoff (Request.Cutoff) stops each search once the distance it
// settles passes it: the cost falls with the radius. The seed kernels
// (dijkstra, delta, edge, bfs, bfs-level) skip every relaxation past it;
// bellman-ford, whose negative arcs may come back under it, is clipped
// after its search. Targets (Request.Targets) stop these searches once
// every one is settled (runner.isCol): the cost falls with the distance
// to the farthest; so does the k nearest (knearest.go) with the K-th's.
//
// Predecessors are set when a distance drops (pred[v] = the vertex being
// settled), as in textbook Dijkstra; ties keep the first vertex that
// reached the final distance.
//
// A search looks at its context every popsPerCheck pops (workspace.go), so
// that one large source stops soon after a cancellation; an interrupted
// search leaves its row unfinished and the workspace ready for the next.

import (
	"fmt"
	mbits "math/bits"

	"github.com/pathctl/pathctl/graph"
)

type autoChoice uint8

const (
	autoHeap autoChoice = iota
	autoDial
	autoBFS
	autoBellmanFord
)

// maxDialWeight bounds Dial's bucket array.
const maxDialWeight = 4096

func autoKernel(g *graph.CSR) (autoChoice, string) {
	switch {
	case g.HasNegative():
		return autoBellmanFord, fmt.Sprintf("auto: bellman-ford per source (negative weights down to %v)", g.MinWeight)
	case !g.Weighted:
		return autoBFS, "auto: breadth-first search with a queue per source (unweighted graph, int32 hop counts)"
	case !g.Type.IsFloat() && g.MaxWeight <= maxDialWeight:
		return autoDial, fmt.Sprintf("auto: Dijkstra with a cyclic bucket queue (Dial) per source (%s weights in [%v, %v])", g.Type, g.MinWeight, g.MaxWeight)
	}
	return autoHeap, fmt.Sprintf("auto: Dijkstra with an indexed 4-ary heap per source (%s weights in [%v, %v])", g.Type, g.MinWeight, g.MaxWeight)
}

func solveQueueBFS(ws *workspace[int32], src graph.VertexID, dist []int32, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[int32]()
	ns := ws.near // the k nearest (knearest.go): dist is all Infinity already
	if ns == nil {
		fill(dist, inf)
	}
	if pred != nil {
		fill(pred, -1)
	}
	queue := grow(&ws.front, r.n)
	offsets, targets := r.offsets, r.targets
	queue[0], dist[src] = src, 0
	head, tail := 0, 1
	left := r.numCols // targets not yet reached (a BFS settles a vertex when it reaches it)
	if ns != nil {
		ns.settle(src, 0)
	}
	if left > 0 && r.isCol[src] {
		if left--; left == 0 {
			return nil
		}
	}
	for head < tail {
		if head%popsPerCheck == popsPerCheck-1 {
			if err := ws.ctx.Err(); err != nil {
				return err
			}
		}
		u := queue[head]
		head++
		du := dist[u] + 1
		if du > r.cut {
			break // the queue is in hop order: nothing later is within the cutoff
		}
		for _, v := range targets[offsets[u]:offsets[u+1]] {
			if dist[v] == inf {
				dist[v] = du
				if pred != nil {
					pred[v] = u
				}
				queue[tail] = v
				tail++
				if ns != nil && ns.settle(v, du) {
					return nil
				}
				if left > 0 && r.isCol[v] {
					if left--; left == 0 {
						return nil
					}
				}
			}
		}
	}
	return nil
}

func solveDial[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[D]()
	ns := ws.near // the k nearest (knearest.go): dist is all Infinity already
	if ns == nil {
		fill(dist, inf)
	}
	if pred != nil {
		fill(pred, -1)
	}
	nb := int64(r.maxW) + 1
	buckets := grow(&ws.buckets, int(nb))
	for i := range buckets {
		buckets[i] = buckets[i][:0]
	}
	// nonEmpty marks the slots holding entries, so that the walk jumps to
	// the next one 64 slots at a time instead of visiting every empty slot
	// (long paths of heavy arcs would otherwise cost max weight per vertex).
	nonEmpty := grow(&ws.bits, int((nb+63)/64))
	clear(nonEmpty)
	dist[src] = 0
	buckets[0] = append(buckets[0], src)
	nonEmpty[0] = 1
	pending := 1
	offsets, targets, weights := r.offsets, r.targets, r.weights
	cur := D(0)
	left := r.numCols // targets not yet settled
	poll := newCtxPoll(ws.ctx)
	for pending > 0 && cur <= r.cut {
		slot := int64(cur) % nb
		if skip := nextSet(nonEmpty, slot, nb); skip > 0 {
			cur += D(skip)
			slot = int64(cur) % nb
			if cur > r.cut {
				break // the next distance is past the cutoff
			}
		}
		// Zero-weight arcs append to the slot being scanned: re-read it.
		for i := 0; i < len(buckets[slot]); i++ {
			if err := poll.err(); err != nil {
				return err // the next search empties the buckets
			}
			u := buckets[slot][i]
			pending--
			if dist[u] != cur {
				continue // a stale entry: u settled at a smaller distance
			}
			if ns != nil && ns.settle(u, cur) {
				return nil // the next search empties the buckets
			}
			if left > 0 && r.isCol[u] {
				if left--; left == 0 {
					return nil // the next search empties the buckets
				}
			}
			lo, hi := offsets[u], offsets[u+1]
			arcW := weights[lo:hi]
			for j, v := range targets[lo:hi] {
				if nd := addPositive(cur, arcW[j], inf); nd < dist[v] {
					dist[v] = nd
					if pred != nil {
						pred[v] = u
					}
					b := int64(nd) % nb
					buckets[b] = append(buckets[b], v)
					nonEmpty[b/64] |= 1 << (b % 64)
					pending++
				}
			}
		}
		buckets[slot] = buckets[slot][:0]
		nonEmpty[slot/64] &^= 1 << (slot % 64)
		cur++
	}
	return nil
}

// nextSet returns how many slots after from (cyclically, among nb) the
// first marked slot lies; 0 when from itself is marked. Some slot is marked.
func nextSet(bits []uint64, from, nb int64) int64 {
	word, bit := from/64, from%64
	if w := bits[word] >> bit; w != 0 {
		if at := from + int64(mbits.TrailingZeros64(w)); at < nb {
			return at - from
		}
	}
	for step := int64(1); step <= int64(len(bits)); step++ {
		i := (word + step) % int64(len(bits))
		if bits[i] != 0 {
			at := i*64 + int64(mbits.TrailingZeros64(bits[i]))
			if at >= from {
				return at - from
			}
			return at + nb - from
		}
	}
	return 0
}

// heapEntry is a vertex in the heap with its key.
type heapEntry[D graph.Number] struct {
	d D
	v graph.VertexID
}

func solveHeapDijkstra[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[D]()
	ns := ws.near // the k nearest (knearest.go): dist is all Infinity already
	if ns == nil {
		fill(dist, inf)
	}
	if pred != nil {
		fill(pred, -1)
	}
	if len(ws.pos) != r.n {
		// pos[v] is v's index in the heap, -1 outside; every search leaves
		// it all -1, so it is filled once per workspace.
		ws.pos = make([]int32, r.n)
		fill(ws.pos, -1)
	}
	pos := ws.pos
	offsets, targets, weights := r.offsets, r.targets, r.weights
	h := ws.heap[:0]
	dist[src] = 0
	h = append(h, heapEntry[D]{0, src})
	pos[src] = 0
	left := r.numCols // targets not yet settled
	poll := newCtxPoll(ws.ctx)
	for len(h) > 0 {
		if err := poll.err(); err != nil {
			for _, e := range h { // leave pos all -1 for the next search
				pos[e.v] = -1
			}
			ws.heap = h[:0]
			return err
		}
		top := h[0]
		if top.d > r.cut {
			// Every vertex left lies beyond the cutoff: clear the heap's
			// positions for the next search and stop.
			for _, e := range h {
				pos[e.v] = -1
			}
			h = h[:0]
			break
		}
		u := top.v
		pos[u] = -1
		last := h[len(h)-1]
		h = h[:len(h)-1]
		if len(h) > 0 {
			siftDown(h, pos, 0, last)
		}
		stop := ns != nil && ns.settle(u, top.d)
		if left > 0 && r.isCol[u] {
			left--
			stop = stop || left == 0
		}
		if stop {
			for _, e := range h { // leave pos all -1 for the next search
				pos[e.v] = -1
			}
			h = h[:0]
			break
		}
		lo, hi := offsets[u], offsets[u+1]
		arcW := weights[lo:hi]
		for j, v := range targets[lo:hi] {
			nd := addPositive(top.d, arcW[j], inf)
			if nd >= dist[v] {
				continue
			}
			dist[v] = nd
			if pred != nil {
				pred[v] = u
			}
			i := pos[v]
			if i < 0 {
				h = append(h, heapEntry[D]{})
				i = int32(len(h) - 1)
			}
			siftUp(h, pos, i, heapEntry[D]{nd, v})
		}
	}
	ws.heap = h
	return nil
}

// siftUp places e at index i or above, moving larger parents down.
func siftUp[D graph.Number](h []heapEntry[D], pos []int32, i int32, e heapEntry[D]) {
	for i > 0 {
		parent := (i - 1) / 4
		if h[parent].d <= e.d {
			break
		}
		h[i] = h[parent]
		pos[h[i].v] = i
		i = parent
	}
	h[i] = e
	pos[e.v] = i
}

// siftDown places e at index i or below, moving the smallest child up.
func siftDown[D graph.Number](h []heapEntry[D], pos []int32, i int32, e heapEntry[D]) {
	n := int32(len(h))
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		end := min(first+4, n)
		for c := first + 1; c < end; c++ {
			if h[c].d < h[best].d {
				best = c
			}
		}
		if h[best].d >= e.d {
			break
		}
		h[i] = h[best]
		pos[h[i].v] = i
		i = best
	}
	h[i] = e
	pos[e.v] = i
}
