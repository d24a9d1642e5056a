package cpu

// Betweenness centrality, Brandes 2001 ("A faster algorithm for betweenness
// centrality", J. Math. Sociology 25(2)), one search per source; the
// passes are in brandes.go:
//
//  1. Forward pass: BFS (hops), Dijkstra with a bucket queue (integer
//     weights up to maxDialWeight) or with a binary heap (other
//     weights), giving each reached vertex its distance d and σ, the
//     number of shortest paths from the source (float64: counts overflow
//     every integer type on grids), and the order in which the vertices
//     were settled. σ(v) is the sum of σ(u) over the tight arcs u → v
//     (d(u) + w = d(v)), added as each u is settled. Integer weights are
//     summed in int64 and compare exactly; float weights (float32 widened,
//     which is exact) are summed in float64 and compared exactly, as
//     networkx compares its Python floats, so ties are counted as networkx
//     counts them.
//  2. Backward pass, in the reverse of the settled order (decreasing
//     distance): δ(v) = σ(v) · Σ over tight arcs v → w of (1 + δ(w)) / σ(w).
//     Walking v's out-arcs again instead of keeping predecessor lists
//     costs a second look at the arcs and saves a list per vertex; every
//     tight successor w lies farther than v, so δ(w) is final. Edge
//     betweenness adds σ(v) · (1 + δ(w)) / σ(w) to the arc v → w in the
//     same loop.
//
// Zero weights are refused by the caller (pipeline/betweenness.go): an arc
// of weight 0 joins two vertices at one distance, and σ then depends on the
// order in which equal distances are settled (networkx's own answer changes
// with its adjacency order). With positive weights every tight predecessor
// of v is settled before v, so σ(v) is final when v is settled.
//
// Sources run in blocks of betweennessBlock, spread over the workers; each
// worker has its own scratch and a partial-sum vector per block (its own
// allocation: no two workers write one cache line), and the blocks'
// partial sums are added into the total in block order. The sum is
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
// It runs in O(|sources| · (n + m)) for hops and small integer weights
// (the bucket queue: plus the largest distance) and O(|sources| · (n + m)
// log n) for other weights, on e.Threads() workers with O(threads · n)
// memory. Negative or zero weights give an error (zero weights: see the
// file's comment); so does a cancelled ctx.
func (e *Engine) Betweenness(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions) ([]float64, error) {
	pass, err := choosePass(csr, sources, opt)
	if err != nil {
		return nil, err
	}
	return sumBlocks(ctx, csr, sources, opt, false, pass, e.threads)
}

// EdgeBetweenness returns, for every arc of csr (in CSR order), the sum
// over the sources s of the dependency of s flowing through it: Σ_t σ_st(a)
// / σ_st, σ_st(a) counting the shortest s–t paths over arc a. That is
// networkx's edge_betweenness_centrality before its rescaling; on an
// undirected CSR an edge's value is the sum of its two arcs'.
// opt.Endpoints is ignored (networkx has no such option for edges). Costs
// as Betweenness, with O(threads · m) memory.
func (e *Engine) EdgeBetweenness(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions) ([]float64, error) {
	opt.Endpoints = false
	pass, err := choosePass(csr, sources, opt)
	if err != nil {
		return nil, err
	}
	return sumBlocks(ctx, csr, sources, opt, true, pass, e.threads)
}

// choosePass checks the sources and weights and picks the search.
func choosePass(csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions) (brandesPass, error) {
	n := csr.NumVertices
	for _, s := range sources {
		if s < 0 || int(s) >= n {
			return nil, fmt.Errorf("cpu: betweenness: source %d out of range [0, %d)", s, n)
		}
	}
	if opt.Hops || !csr.Weighted {
		return brandesHops, nil
	}
	if from, to, w, ok := nonPositiveArc(csr); ok {
		return nil, fmt.Errorf("cpu: betweenness needs positive weights: arc %d -> %d weighs %v", from, to, w)
	}
	small := csr.MaxWeight >= 1 && csr.MaxWeight <= maxDialWeight
	switch w := csr.Weights.(type) {
	case nil:
		return brandesHops, nil
	case []int32:
		if small {
			return brandesBuckets(w, int64(csr.MaxWeight)), nil
		}
		return brandesHeap[int32, int64](w), nil
	case []int64:
		if small {
			return brandesBuckets(w, int64(csr.MaxWeight)), nil
		}
		return brandesHeap[int64, int64](w), nil
	case []float32:
		return brandesHeap[float32, float64](w), nil
	case []float64:
		return brandesHeap[float64, float64](w), nil
	}
	return nil, fmt.Errorf("cpu: betweenness: weights of type %T", csr.Weights)
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

// sumBlocks runs pass for every source on threads workers, block by block,
// and adds the blocks' partial sums into the total in block order,
// reporting each to opt.Progress.
func sumBlocks(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, opt BetweennessOptions, arcs bool, pass brandesPass, threads int) ([]float64, error) {
	n, size := csr.NumVertices, csr.NumVertices
	if arcs {
		size = len(csr.Targets)
	}
	total := make([]float64, size)
	blocks := (len(sources) + betweennessBlock - 1) / betweennessBlock
	if blocks == 0 {
		return total, nil
	}
	threads = max(1, min(threads, blocks))
	// 2·threads partial vectors: a worker starts a block only with a free
	// one, so a slow block holds back at most that many finished ones.
	free := make(chan []float64, 2*threads)
	for range 2 * threads {
		free <- make([]float64, size)
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
				out := brandesOut{vertices: part, endpoints: opt.Endpoints}
				if arcs {
					out = brandesOut{arcs: part}
				}
				for _, s := range sources[b*betweennessBlock : min((b+1)*betweennessBlock, len(sources))] {
					if ctx.Err() != nil {
						free <- part // the block is not complete: the sum stops short of it
						return
					}
					pass(ws, csr, s, out)
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
