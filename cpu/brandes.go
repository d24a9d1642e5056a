package cpu

// The per-source passes of Brandes's betweenness (cpu/betweenness.go has
// the algorithm and the choices): a forward search that leaves the settled
// order, each vertex's distance and σ in a worker's scratch, and one
// backward pass per distance type that turns them into dependencies,
// added into a vertex vector or, for edge betweenness, an arc vector.
//
// The forward searches:
//   - brandesHops: BFS, the queue being the settled order itself;
//   - brandesBuckets: Dial's bucket queue (Dial 1969, "Algorithm 360")
//     for integer weights of at most maxDialWeight, the bound auto's
//     Dijkstra uses (auto.go), and its skip over empty buckets by a bitmap
//     of the non-empty ones: a ring of R buckets
//     (R a power of two above the largest weight), bucket d mod R holding
//     the vertices at tentative distance d, scanned in increasing d. An
//     arc weighs 1 to maxWeight < R, so every live entry lies within
//     maxWeight of the bucket scanned and the ring never wraps onto itself. Popping
//     costs O(1) where a heap costs O(log n): on R-MAT 14 with weights
//     1..100 the heap's pop was 42 % of the time, and the buckets halve
//     the pass (docs/benchmarks-history.md, "Betweenness on the CPU
//     engine against NetworKit").
//   - brandesHeap: Dijkstra with a binary heap and lazy deletion, for
//     float weights and wide integer ones.
// A vertex can enter a queue more than once (each time its tentative
// distance drops); an entry whose distance is no longer the vertex's is
// stale and skipped.

import (
	"math/bits"

	"github.com/pathctl/pathctl/graph"
)

// brandesOut is where a pass adds a source's dependencies: vertices (one
// per vertex, with endpoints counted as networkx's _accumulate_endpoints)
// or, when arcs is set, arcs (one per CSR arc: the dependency flowing
// through it, networkx's _accumulate_edges).
type brandesOut struct {
	vertices  []float64
	arcs      []float64
	endpoints bool
}

// brandesPass adds source s's dependencies into out, using ws as scratch.
type brandesPass func(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, out brandesOut)

// brandesScratch is one worker's buffers, reused from source to source:
// only the entries of the vertices a search reached are reset after it.
type brandesScratch struct {
	hops     []int32   // BFS distance, -1 unreached
	ints     []int64   // Dijkstra distance, integer weights; -1 unreached
	reals    []float64 // Dijkstra distance, float weights; -1 unreached
	sigma    []float64 // number of shortest paths from the source
	delta    []float64 // dependency of the source on the vertex
	order    []graph.VertexID
	heap     any                // []distEntry[D] of the pass's distance type
	buckets  [][]graph.VertexID // the bucket queue's ring
	nonEmpty []uint64           // a bit per bucket of the ring holding entries
}

func newBrandesScratch(n int) *brandesScratch {
	return &brandesScratch{sigma: make([]float64, n), delta: make([]float64, n), order: make([]graph.VertexID, 0, n)}
}

// unreached returns the distances of type D, all -1, making them on first use.
func unreached[D distance | ~int32](buf *[]D, n int) []D {
	if *buf == nil {
		*buf = make([]D, n)
		fill(*buf, -1)
	}
	return *buf
}

// finish adds the dependencies of the search just done into out and
// resets what it touched.
func finish[D distance | ~int32](ws *brandesScratch, dist []D, s graph.VertexID, out brandesOut) {
	order, delta, sigma := ws.order, ws.delta, ws.sigma
	if out.arcs == nil {
		part := out.vertices
		for _, v := range order[1:] { // order[0] is s
			part[v] += delta[v]
		}
		if out.endpoints {
			for _, v := range order[1:] {
				part[v]++
			}
			part[s] += float64(len(order) - 1)
		}
	}
	for _, v := range order {
		dist[v], sigma[v], delta[v] = -1, 0, 0
	}
}

// brandesHops is the pass over hop counts.
func brandesHops(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, out brandesOut) {
	dist, sigma, delta := unreached(&ws.hops, csr.NumVertices), ws.sigma, ws.delta
	order := append(ws.order[:0], s)
	dist[s], sigma[s] = 0, 1
	for head := 0; head < len(order); head++ {
		u := order[head]
		next, su := dist[u]+1, sigma[u]
		for _, v := range csr.Targets[csr.Offsets[u]:csr.Offsets[u+1]] {
			switch dist[v] {
			case -1:
				dist[v], sigma[v] = next, su
				order = append(order, v)
			case next:
				sigma[v] += su
			}
		}
	}
	ws.order = order
	// Backward: dependencies in decreasing distance.
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		lo, hi := csr.Offsets[v], csr.Offsets[v+1]
		next, sum := dist[v]+1, 0.0
		if out.arcs == nil {
			for _, w := range csr.Targets[lo:hi] {
				if dist[w] == next {
					sum += (1 + delta[w]) / sigma[w]
				}
			}
		} else {
			sv := sigma[v]
			for k := lo; k < hi; k++ {
				if w := csr.Targets[k]; dist[w] == next {
					c := (1 + delta[w]) / sigma[w]
					sum += c
					out.arcs[k] += sv * c
				}
			}
		}
		delta[v] = sigma[v] * sum
	}
	finish(ws, dist, s, out)
}

// distance is the type Dijkstra sums weights in: int64 for integer
// weights, float64 for float ones.
type distance interface{ ~int64 | ~float64 }

// brandesHeap is the pass over weights w (of type W) summed in D, with a
// binary heap.
func brandesHeap[W graph.Number, D distance](w []W) brandesPass {
	return func(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, out brandesOut) {
		dist := weightedDistances[D](ws, csr.NumVertices)
		sigma := ws.sigma
		order := ws.order[:0]
		entries, _ := ws.heap.([]distEntry[D])
		h := minDistHeap[D]{entries: entries[:0]}
		dist[s], sigma[s] = 0, 1
		h.push(0, s)
		// Settle in distance order, counting paths over tight arcs.
		for len(h.entries) > 0 {
			d, u := h.pop()
			if d != dist[u] {
				continue // stale
			}
			order = append(order, u)
			su := sigma[u]
			for k := csr.Offsets[u]; k < csr.Offsets[u+1]; k++ {
				v := csr.Targets[k]
				nd := d + D(w[k])
				switch dv := dist[v]; {
				case dv < 0 || nd < dv:
					dist[v], sigma[v] = nd, su
					h.push(nd, v)
				case nd == dv:
					sigma[v] += su
				}
			}
		}
		ws.order, ws.heap = order, h.entries
		weightedBackward(ws, csr, w, dist, out)
		finish(ws, dist, s, out)
	}
}

// brandesBuckets is the pass over integer weights w of at most maxWeight
// (1 ≤ maxWeight ≤ maxDialWeight), with the bucket queue.
func brandesBuckets[W ~int32 | ~int64](w []W, maxWeight int64) brandesPass {
	// The ring's length is a power of two above maxWeight, so that the
	// bucket of a distance is a mask, not a division.
	ring := int64(1) << bits.Len64(uint64(maxWeight))
	mask := ring - 1
	return func(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, out brandesOut) {
		dist := weightedDistances[int64](ws, csr.NumVertices)
		sigma := ws.sigma
		order := ws.order[:0]
		if int64(len(ws.buckets)) != ring {
			ws.buckets = make([][]graph.VertexID, ring)
			ws.nonEmpty = make([]uint64, (ring+63)/64)
		}
		buckets, nonEmpty := ws.buckets, ws.nonEmpty
		dist[s], sigma[s] = 0, 1
		buckets[0] = append(buckets[0], s)
		nonEmpty[0] = 1
		live := 1 // entries queued, stale ones included
		for d := int64(0); live > 0; d++ {
			// Jump over empty buckets 64 at a time (auto.go's nextSet):
			// long paths of heavy arcs would otherwise cost a step per
			// unit of distance.
			d += nextSet(nonEmpty, d&mask, ring)
			b := d & mask
			// An arc weighs at least 1: nothing joins this bucket while it
			// is scanned.
			for _, u := range buckets[b] {
				if dist[u] != d {
					continue // stale
				}
				order = append(order, u)
				su := sigma[u]
				for k := csr.Offsets[u]; k < csr.Offsets[u+1]; k++ {
					v := csr.Targets[k]
					nd := d + int64(w[k])
					switch dv := dist[v]; {
					case dv < 0 || nd < dv:
						dist[v], sigma[v] = nd, su
						nb := nd & mask
						buckets[nb] = append(buckets[nb], v)
						nonEmpty[nb/64] |= 1 << (nb % 64)
						live++
					case nd == dv:
						sigma[v] += su
					}
				}
			}
			live -= len(buckets[b])
			buckets[b] = buckets[b][:0]
			nonEmpty[b/64] &^= 1 << (b % 64)
		}
		ws.order = order
		weightedBackward(ws, csr, w, dist, out)
		finish(ws, dist, s, out)
	}
}

// weightedDistances returns ws's Dijkstra distances of type D.
func weightedDistances[D distance](ws *brandesScratch, n int) []D {
	if _, ok := any(D(0)).(int64); ok {
		return any(unreached(&ws.ints, n)).([]D)
	}
	return any(unreached(&ws.reals, n)).([]D)
}

// weightedBackward computes the dependencies of the search in ws, in the
// reverse of its settled order (decreasing distance): every tight
// successor t of v (dist[t] = dist[v] + w) lies farther than v, so δ(t) is
// final when v is reached.
func weightedBackward[W graph.Number, D distance](ws *brandesScratch, csr *graph.CSR, w []W, dist []D, out brandesOut) {
	order, sigma, delta := ws.order, ws.sigma, ws.delta
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		lo, hi := csr.Offsets[v], csr.Offsets[v+1]
		dv, sum := dist[v], 0.0
		if out.arcs == nil {
			for k := lo; k < hi; k++ {
				if t := csr.Targets[k]; dist[t] == dv+D(w[k]) {
					sum += (1 + delta[t]) / sigma[t]
				}
			}
		} else {
			sv := sigma[v]
			for k := lo; k < hi; k++ {
				if t := csr.Targets[k]; dist[t] == dv+D(w[k]) {
					c := (1 + delta[t]) / sigma[t]
					sum += c
					out.arcs[k] += sv * c
				}
			}
		}
		delta[v] = sigma[v] * sum
	}
}

// minDistHeap is a binary min-heap of (distance, vertex) with lazy
// deletion, over the scratch's entries.
type minDistHeap[D distance] struct {
	entries []distEntry[D]
}

type distEntry[D distance] struct {
	d D
	v graph.VertexID
}

func (h *minDistHeap[D]) push(d D, v graph.VertexID) {
	h.entries = append(h.entries, distEntry[D]{d, v})
	i := len(h.entries) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.entries[p].d <= d {
			break
		}
		h.entries[i] = h.entries[p]
		i = p
	}
	h.entries[i] = distEntry[D]{d, v}
}

func (h *minDistHeap[D]) pop() (D, graph.VertexID) {
	top := h.entries[0]
	last := h.entries[len(h.entries)-1]
	h.entries = h.entries[:len(h.entries)-1]
	if m := len(h.entries); m > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= m {
				break
			}
			if c+1 < m && h.entries[c+1].d < h.entries[c].d {
				c++
			}
			if h.entries[c].d >= last.d {
				break
			}
			h.entries[i] = h.entries[c]
			i = c
		}
		h.entries[i] = last
	}
	return top.d, top.v
}
