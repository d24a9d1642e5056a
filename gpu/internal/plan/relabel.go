package plan

import (
	"runtime"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// The relabellings (Config.Relabel) renumber the vertices of the graph the
// GPU runner uploads for the batched kernel. A group's working distances
// are vertex-major, one row of up to 32 lanes per vertex, and the kernel
// takes the vertices of its frontier 32 consecutive ids at a time: in an
// order that keeps neighbours together, the rows one warp reads for the
// arcs of its chunk, and the frontier words it sets, lie in fewer lines of
// memory and are read again sooner, while the hubs, whose rows most arcs
// read, can be kept together at the front. Issue 18 measures them
// (bench/locality.sh).

// relabelHubFactor makes a vertex a hub of RelabelHubs when its out-degree
// is at least this many times the mean. Not measured.
const relabelHubFactor = 4

// Relabelling returns the new number of every vertex of g under kind
// (perm[old] = new, a permutation), or nil for RelabelNone. rank is
// BFSRank(g), computed when nil.
func Relabelling(g *graph.CSR, kind Relabel, rank []int32) []int32 {
	n := g.NumVertices
	if kind == RelabelNone {
		return nil
	}
	if rank == nil && kind != RelabelRCM {
		rank = BFSRank(g)
	}
	switch kind {
	case RelabelBFS:
		return slices.Clone(rank)
	case RelabelRCM:
		return rcmOrder(g)
	}
	byRankOrder := make([]int32, n) // the vertices in rank order
	for v, r := range rank {
		byRankOrder[r] = int32(v)
	}
	var order []int32 // the vertices in their new order
	switch kind {
	case RelabelDegree:
		idx := byDegree(g, byRankOrder, true)
		order = make([]int32, n)
		for i, j := range idx {
			order[i] = byRankOrder[j]
		}
	case RelabelHubs:
		mean := float64(g.NumEdges()) / float64(max(n, 1))
		var hubs, rest []int32
		for _, v := range byRankOrder {
			if float64(g.OutDegree(graph.VertexID(v))) >= relabelHubFactor*mean && mean > 0 {
				hubs = append(hubs, v)
			} else {
				rest = append(rest, v)
			}
		}
		idx := byDegree(g, hubs, true)
		order = make([]int32, 0, n)
		for _, j := range idx {
			order = append(order, hubs[j])
		}
		order = append(order, rest...)
	default:
		return nil
	}
	perm := make([]int32, n)
	for i, v := range order {
		perm[v] = int32(i)
	}
	return perm
}

// rcmOrder is reverse Cuthill–McKee over g's out-arcs: each component in
// turn from its unnumbered vertex of least out-degree, breadth-first, the
// unnumbered neighbours of a vertex taken by rising out-degree (ties by
// id), the whole order reversed at the end.
func rcmOrder(g *graph.CSR) []int32 {
	n := g.NumVertices
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	starts := byDegree(g, all, false) // candidate starts, least degree first
	done := make([]bool, n)
	order := make([]int32, 0, n)
	var nbrs []int32
	deg := func(v int32) int64 { return g.Offsets[v+1] - g.Offsets[v] }
	for _, s := range starts {
		if done[s] {
			continue
		}
		done[s] = true
		head := len(order)
		order = append(order, s)
		for ; head < len(order); head++ {
			u := order[head]
			nbrs = nbrs[:0]
			for _, v := range g.Targets[g.Offsets[u]:g.Offsets[u+1]] {
				if !done[v] {
					done[v] = true
					nbrs = append(nbrs, v)
				}
			}
			slices.SortFunc(nbrs, func(a, b int32) int {
				if da, db := deg(a), deg(b); da != db {
					return int(da - db)
				}
				return int(a - b)
			})
			order = append(order, nbrs...)
		}
	}
	perm := make([]int32, n)
	for i, v := range order {
		perm[v] = int32(n - 1 - i)
	}
	return perm
}

// Permute returns g with every vertex v renumbered perm[v] (a permutation
// of the vertices): row perm[v] of the result holds v's arcs, their
// targets renumbered and sorted, each weight with its arc. The result
// shares nothing with g; rows are copied on every core.
func Permute(g *graph.CSR, perm []int32) *graph.CSR {
	n := g.NumVertices
	inv := make([]int32, n)
	for v, p := range perm {
		inv[p] = int32(v)
	}
	out := *g
	out.Offsets = make([]int64, n+1)
	for i, v := range inv {
		out.Offsets[i+1] = out.Offsets[i] + g.Offsets[v+1] - g.Offsets[v]
	}
	out.Targets = make([]graph.VertexID, len(g.Targets))
	var copyWeights func(dst, src int64)
	switch w := g.Weights.(type) {
	case []int32:
		nw := make([]int32, len(w))
		out.Weights, copyWeights = nw, func(d, s int64) { nw[d] = w[s] }
	case []int64:
		nw := make([]int64, len(w))
		out.Weights, copyWeights = nw, func(d, s int64) { nw[d] = w[s] }
	case []float32:
		nw := make([]float32, len(w))
		out.Weights, copyWeights = nw, func(d, s int64) { nw[d] = w[s] }
	case []float64:
		nw := make([]float64, len(w))
		out.Weights, copyWeights = nw, func(d, s int64) { nw[d] = w[s] }
	}
	rows := func(lo, hi int) {
		var arcs []uint64 // the new target above the arc's place in its row
		for i := lo; i < hi; i++ {
			v := inv[i]
			first := g.Offsets[v]
			arcs = arcs[:0]
			for e := first; e < g.Offsets[v+1]; e++ {
				arcs = append(arcs, uint64(perm[g.Targets[e]])<<32|uint64(e-first))
			}
			slices.Sort(arcs)
			at := out.Offsets[i]
			for j, a := range arcs {
				out.Targets[at+int64(j)] = graph.VertexID(a >> 32)
				if copyWeights != nil {
					copyWeights(at+int64(j), first+int64(uint32(a)))
				}
			}
		}
	}
	// Chunks of about equal arcs, several per core.
	chunks := 4 * runtime.GOMAXPROCS(0)
	m := out.Offsets[n]
	var wg sync.WaitGroup
	lo := 0
	for c := 1; c <= chunks && lo < n; c++ {
		hi := n
		if c < chunks {
			want := m * int64(c) / int64(chunks)
			hi, _ = slices.BinarySearch(out.Offsets, want)
			hi = min(max(hi, lo+1), n)
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			rows(lo, hi)
		}(lo, hi)
		lo = hi
	}
	wg.Wait()
	return &out
}
