package cpu

// Betweenness centrality, Brandes 2001 ("A faster algorithm for betweenness
// centrality", J. Math. Sociology 25(2)), one search per source:
//
//  1. Forward pass: BFS (hops) or Dijkstra with a binary heap and lazy
//     deletion (weights), giving each reached vertex its distance d and
//     σ, the number of shortest paths from the source (float64: counts
//     overflow every integer type on grids), and the order in which the
//     vertices were settled. σ(v) is the sum of σ(u) over the tight arcs
//     u → v (d(u) + w = d(v)). Integer weights are summed in int64 and
//     compare exactly; float weights (float32 widened, which is exact) are
//     summed in float64 and compared exactly, as networkx compares its
//     Python floats, so ties are counted as networkx counts them.
//  2. Backward pass, in the reverse of the settled order (decreasing
//     distance): δ(v) = σ(v) · Σ over tight arcs v → w of (1 + δ(w)) / σ(w).
//     Walking v's out-arcs again instead of keeping predecessor lists
//     costs a second look at the arcs and saves a list per vertex; every
//     tight successor w lies farther than v, so δ(w) is final.
//
// Zero weights are refused by the caller (pipeline/betweenness.go): an arc
// of weight 0 joins two vertices at one distance, and σ then depends on the
// order in which equal distances are settled (networkx's own answer changes
// with its adjacency order). With positive weights every tight predecessor
// of v is settled before v, so σ(v) is final when v is settled.
//
// Sources run in blocks of betweennessBlock, spread over the workers; each
// worker has its own scratch and a partial-sum vector per block, and the
// blocks' partial sums are added into the total in block order. The sum is
// therefore the same, bit for bit, whatever the number of threads.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

// betweennessBlock is the number of sources whose dependencies one partial
// vector sums before it is added to the total: the unit of the ordered sum.
// Adding a partial vector costs n additions against some n + m steps per
// source, so 16 sources keep the additions under a tenth of the work.
const betweennessBlock = 16

// BetweennessOptions choose what Engine.Betweenness counts.
type BetweennessOptions struct {
	// Endpoints counts the source and the target of every shortest path as
	// lying on it (networkx's endpoints=True).
	Endpoints bool
	// Hops counts arcs whatever the weights (a BFS per source).
	Hops bool
	// Progress, when set, is called with the number of sources done each
	// time a block of them has been added to the sum, from the goroutine
	// that called Betweenness.
	Progress func(done int)
}

// Betweenness returns, for every vertex v, the sum over the sources s of
// Brandes's dependency δ_s(v) = Σ_t σ_st(v) / σ_st (with opt.Endpoints, plus
// 1 for every t ≠ s that s reaches, and for s itself the number of vertices
// it reaches): networkx's betweenness before its rescaling. On an undirected
// CSR (both arcs of every edge) each unordered pair is counted from both
// ends, as networkx counts it.
//
// It runs in O(|sources| · (n + m)) for hops and O(|sources| · (n + m) log n)
// for weights, on e.Threads() workers with O(threads · n) memory. Negative
// or zero weights give an error (zero weights: see the file's comment); so
// does a cancelled ctx.
func (e *Engine) Betweenness(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions) ([]float64, error) {
	n := csr.NumVertices
	for _, s := range sources {
		if s < 0 || int(s) >= n {
			return nil, fmt.Errorf("cpu: betweenness: source %d out of range [0, %d)", s, n)
		}
	}
	hops := opt.Hops || !csr.Weighted
	if !hops {
		if from, to, w, ok := nonPositiveArc(csr); ok {
			return nil, fmt.Errorf("cpu: betweenness needs positive weights: arc %d -> %d weighs %v", from, to, w)
		}
	}
	var pass brandesPass
	switch w := csr.Weights.(type) {
	case nil:
		pass = brandesHops
	case []int32:
		pass = pickPass(hops, brandesWeighted[int32, int64](w))
	case []int64:
		pass = pickPass(hops, brandesWeighted[int64, int64](w))
	case []float32:
		pass = pickPass(hops, brandesWeighted[float32, float64](w))
	case []float64:
		pass = pickPass(hops, brandesWeighted[float64, float64](w))
	default:
		return nil, fmt.Errorf("cpu: betweenness: weights of type %T", csr.Weights)
	}
	return sumBlocks(ctx, csr, sources, opt, pass, e.threads)
}

// pickPass is brandesHops for hops, else weighted.
func pickPass(hops bool, weighted brandesPass) brandesPass {
	if hops {
		return brandesHops
	}
	return weighted
}

// nonPositiveArc finds an arc of weight 0 or less.
func nonPositiveArc(csr *graph.CSR) (from, to graph.VertexID, weight float64, found bool) {
	find := func(k int) (graph.VertexID, graph.VertexID) {
		u := graph.VertexID(0)
		for csr.Offsets[u+1] <= int64(k) {
			u++
		}
		return u, csr.Targets[k]
	}
	check := func(k int, w float64) bool {
		if !(w > 0) {
			from, to = find(k)
			weight, found = w, true
		}
		return found
	}
	switch w := csr.Weights.(type) {
	case []int32:
		for k, x := range w {
			if x <= 0 && check(k, float64(x)) {
				return
			}
		}
	case []int64:
		for k, x := range w {
			if x <= 0 && check(k, float64(x)) {
				return
			}
		}
	case []float32:
		for k, x := range w {
			if !(x > 0) && check(k, float64(x)) {
				return
			}
		}
	case []float64:
		for k, x := range w {
			if !(x > 0) && check(k, x) {
				return
			}
		}
	}
	return
}

// brandesPass adds source s's dependencies into part, using ws as scratch.
type brandesPass func(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, endpoints bool, part []float64)

// brandesScratch is one worker's buffers, reused from source to source:
// only the entries of the vertices a search reached are reset after it.
type brandesScratch struct {
	hops  []int32   // BFS distance, -1 unreached
	ints  []int64   // Dijkstra distance, integer weights; -1 unreached
	reals []float64 // Dijkstra distance, float weights; -1 unreached
	sigma []float64 // number of shortest paths from the source
	delta []float64 // dependency of the source on the vertex
	order []graph.VertexID
	heap  any // []distEntry[D] of the pass's distance type
}

func newBrandesScratch(n int) *brandesScratch {
	return &brandesScratch{sigma: make([]float64, n), delta: make([]float64, n), order: make([]graph.VertexID, 0, n)}
}

// unreachedHops gives ws its BFS distances, all unreached.
func (ws *brandesScratch) unreachedHops(n int) []int32 {
	if ws.hops == nil {
		ws.hops = make([]int32, n)
		fill(ws.hops, -1)
	}
	return ws.hops
}

// brandesHops is the pass over hop counts: the BFS queue is the settled
// order itself.
func brandesHops(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, endpoints bool, part []float64) {
	dist, sigma, delta := ws.unreachedHops(csr.NumVertices), ws.sigma, ws.delta
	order := append(ws.order[:0], s)
	dist[s], sigma[s] = 0, 1
	for head := 0; head < len(order); head++ {
		u := order[head]
		next := dist[u] + 1
		for _, v := range csr.Targets[csr.Offsets[u]:csr.Offsets[u+1]] {
			switch dist[v] {
			case -1:
				dist[v], sigma[v] = next, sigma[u]
				order = append(order, v)
			case next:
				sigma[v] += sigma[u]
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		next, sum := dist[v]+1, 0.0
		for _, w := range csr.Targets[csr.Offsets[v]:csr.Offsets[v+1]] {
			if dist[w] == next {
				sum += (1 + delta[w]) / sigma[w]
			}
		}
		delta[v] = sigma[v] * sum
	}
	accumulate(order, s, delta, endpoints, part)
	for _, v := range order {
		dist[v], sigma[v], delta[v] = -1, 0, 0
	}
	ws.order = order
}

// accumulate adds a search's dependencies into part (networkx's
// _accumulate_basic and _accumulate_endpoints).
func accumulate(order []graph.VertexID, s graph.VertexID, delta []float64, endpoints bool, part []float64) {
	for _, v := range order[1:] { // order[0] is s
		part[v] += delta[v]
		if endpoints {
			part[v]++
		}
	}
	if endpoints {
		part[s] += float64(len(order) - 1)
	}
}

// distance is the type Dijkstra sums weights in: int64 for integer
// weights, float64 for float ones.
type distance interface{ ~int64 | ~float64 }

// brandesWeighted is the pass over weights w (of type W), summed in D.
func brandesWeighted[W graph.Number, D distance](w []W) brandesPass {
	return func(ws *brandesScratch, csr *graph.CSR, s graph.VertexID, endpoints bool, part []float64) {
		n := csr.NumVertices
		var dist []D
		switch any(D(0)).(type) {
		case int64:
			if ws.ints == nil {
				ws.ints = make([]int64, n)
				fill(ws.ints, -1)
			}
			dist = any(ws.ints).([]D)
		default:
			if ws.reals == nil {
				ws.reals = make([]float64, n)
				fill(ws.reals, -1)
			}
			dist = any(ws.reals).([]D)
		}
		sigma, delta := ws.sigma, ws.delta
		order := ws.order[:0]
		entries, _ := ws.heap.([]distEntry[D])
		h := minDistHeap[D]{entries: entries[:0]}
		dist[s], sigma[s] = 0, 1
		h.push(0, s)
		// 1. Forward: settle in distance order, counting paths over tight arcs.
		for len(h.entries) > 0 {
			d, u := h.pop()
			if d != dist[u] {
				continue // a stale entry: u was reached by a shorter path since
			}
			order = append(order, u)
			for k := csr.Offsets[u]; k < csr.Offsets[u+1]; k++ {
				v := csr.Targets[k]
				nd := d + D(w[k])
				switch dv := dist[v]; {
				case dv < 0 || nd < dv:
					dist[v], sigma[v] = nd, sigma[u]
					h.push(nd, v)
				case nd == dv:
					sigma[v] += sigma[u]
				}
			}
		}
		// 2. Backward: dependencies in decreasing distance.
		for i := len(order) - 1; i >= 0; i-- {
			v := order[i]
			dv, sum := dist[v], 0.0
			for k := csr.Offsets[v]; k < csr.Offsets[v+1]; k++ {
				if t := csr.Targets[k]; dist[t] == dv+D(w[k]) {
					sum += (1 + delta[t]) / sigma[t]
				}
			}
			delta[v] = sigma[v] * sum
		}
		accumulate(order, s, delta, endpoints, part)
		for _, v := range order {
			dist[v], sigma[v], delta[v] = -1, 0, 0
		}
		ws.order, ws.heap = order, h.entries
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

// sumBlocks runs pass for every source on threads workers, block by block,
// and adds the blocks' partial sums into the total in block order,
// reporting each to opt.Progress.
func sumBlocks(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions, pass brandesPass, threads int) ([]float64, error) {
	n, endpoints := csr.NumVertices, opt.Endpoints
	total := make([]float64, n)
	blocks := (len(sources) + betweennessBlock - 1) / betweennessBlock
	if blocks == 0 {
		return total, nil
	}
	threads = max(1, min(threads, blocks))
	// 2·threads partial vectors: a worker starts a block only with a free
	// one, so a slow block holds back at most that many finished ones.
	free := make(chan []float64, 2*threads)
	for range 2 * threads {
		free <- make([]float64, n)
	}
	type finished struct {
		block int
		part  []float64
	}
	done := make(chan finished, 2*threads)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := newBrandesScratch(n)
			for {
				part := <-free
				b := int(next.Add(1) - 1)
				if b >= blocks || ctx.Err() != nil {
					free <- part
					return
				}
				clear(part)
				for _, s := range sources[b*betweennessBlock : min((b+1)*betweennessBlock, len(sources))] {
					if ctx.Err() != nil {
						free <- part // the block is not complete: the sum stops short of it
						return
					}
					pass(ws, csr, s, endpoints, part)
				}
				done <- finished{b, part}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	waiting := make(map[int][]float64, 2*threads)
	want := 0
	for f := range done {
		waiting[f.block] = f.part
		for part, ok := waiting[want]; ok; part, ok = waiting[want] {
			for v, x := range part {
				total[v] += x
			}
			delete(waiting, want)
			free <- part
			want++
			if opt.Progress != nil {
				opt.Progress(min(want*betweennessBlock, len(sources)))
			}
		}
	}
	if want < blocks {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cpu: betweenness: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("cpu: betweenness: %d of %d source blocks done", want, blocks)
	}
	return total, nil
}
