package plan

import (
	"runtime"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// clusterMaxVisit bounds the vertices one cluster's search queues, and
// clusterMaxArcs the arcs it reads: late clusters, whose neighbourhoods are
// mostly taken, fall back to rank order instead of searching far. Not
// measured against other bounds; the clusters as a whole are in
// docs/benchmarks-history.md, "What changed, and what was tried".
const (
	clusterMaxVisit = 4096
	clusterMaxArcs  = 16384
)

// orderSources puts the kernel sources ks (computed into rows) in
// cfg.Order: sorted by breadth-first rank, then clustered, in chunks on
// every core when parallel.
func orderSources(g *graph.CSR, rank, ks, rows []int32, cfg *Config, parallel bool) ([]int32, []int32) {
	if cfg.Order == OrderBlock || len(ks) <= BatchWidth {
		return slices.Clone(ks), slices.Clone(rows)
	}
	if cfg.Order == OrderID {
		rank = nil // the vertex ids themselves
	}
	idx := byRank(rank, ks)
	if cfg.Order == OrderCluster {
		idx = clusterSources(g, ks, idx, cfg.ClusterChunk, parallel)
	}
	sources, out := make([]int32, len(ks)), make([]int32, len(ks))
	for i, j := range idx {
		sources[i], out[i] = ks[j], rows[j]
	}
	return sources, out
}

// byRank returns the positions of ks in increasing rank of their vertex
// (rank is a permutation of the vertices; nil ranks by vertex id), equal
// vertices in their order in ks: a counting sort, linear where a
// comparison sort of R-MAT 16's sources took a sixth of the host's plan.
func byRank(rank, ks []int32) []int32 {
	if rank == nil {
		size := int32(0)
		for _, v := range ks {
			size = max(size, v+1)
		}
		rank = make([]int32, size) // the identity up to the largest id
		for i := range rank {
			rank[i] = int32(i)
		}
	}
	start := make([]int32, len(rank)+1) // first output position of each rank
	for _, v := range ks {
		start[rank[v]+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	idx := make([]int32, len(ks))
	for i, v := range ks {
		r := rank[v]
		idx[start[r]] = int32(i)
		start[r]++
	}
	return idx
}

// byDegree returns the positions of the vertices vs by out-degree,
// decreasing when desc, equal degrees in their order in vs: a counting
// sort, linear where comparison sorts took a fifth of the host's plan.
func byDegree(g *graph.CSR, vs []int32, desc bool) []int32 {
	key := func(v int32) int64 { return g.Offsets[v+1] - g.Offsets[v] }
	top := int64(0)
	for _, v := range vs {
		top = max(top, key(v))
	}
	if desc {
		key = func(v int32) int64 { return top - (g.Offsets[v+1] - g.Offsets[v]) }
	}
	start := make([]int32, top+2)
	for _, v := range vs {
		start[key(v)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	idx := make([]int32, len(vs))
	for i, v := range vs {
		k := key(v)
		idx[start[k]] = int32(i)
		start[k]++
	}
	return idx
}

// clusterSources groups the block rows idx (sources src[idx[i]], in
// breadth-first rank order) into runs of BatchWidth: each run starts at the
// first row not yet taken and continues with the untaken sources a
// breadth-first search from it meets first (within clusterMaxVisit
// vertices and clusterMaxArcs arcs), then with the next untaken rows in
// rank order. With parallel, each core clusters a contiguous chunk of idx,
// of at least chunk rows, on its own.
func clusterSources(g *graph.CSR, src, idx []int32, chunk int, parallel bool) []int32 {
	chunks := min(runtime.GOMAXPROCS(0), len(idx)/chunk)
	if chunks <= 1 || !parallel {
		return clusterRun(g, src, idx)
	}
	per := (len(idx)/chunks + BatchWidth - 1) / BatchWidth * BatchWidth
	parts := make([][]int32, 0, chunks)
	for lo := 0; lo < len(idx); lo += per {
		parts = append(parts, idx[lo:min(lo+per, len(idx))])
	}
	outs := make([][]int32, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = clusterRun(g, src, part)
		}()
	}
	wg.Wait()
	return slices.Concat(outs...)
}

// clusterRun is clusterSources over the rows idx on one core.
func clusterRun(g *graph.CSR, src, idx []int32) []int32 {
	n := g.NumVertices
	row := make([]int32, n) // 1 + the block row of each source vertex, 0 for others
	for _, i := range idx {
		row[src[i]] = i + 1
	}
	taken := make([]bool, len(src))
	seen := make([]int32, n) // the cluster number that last visited a vertex
	out := make([]int32, 0, len(idx))
	queue := make([]int32, 0, clusterMaxVisit)
	next := 0 // first position of idx that may be untaken
	for cluster := int32(1); len(out) < len(idx); cluster++ {
		for taken[idx[next]] {
			next++
		}
		start := len(out)
		queue = append(queue[:0], src[idx[next]])
		seen[src[idx[next]]] = cluster
		arcs := 0
		for h := 0; h < len(queue) && len(out)-start < BatchWidth; h++ {
			u := queue[h]
			if i := row[u] - 1; i >= 0 && !taken[i] {
				taken[i] = true
				out = append(out, i)
			}
			adj := g.Targets[g.Offsets[u]:g.Offsets[u+1]]
			if arcs += len(adj); arcs > clusterMaxArcs {
				continue // take what the queue holds, search no further
			}
			for _, v := range adj {
				if seen[v] != cluster && len(queue) < clusterMaxVisit {
					seen[v] = cluster
					queue = append(queue, int32(v))
				}
			}
		}
		for p := next; len(out)-start < BatchWidth && p < len(idx); p++ {
			if !taken[idx[p]] {
				taken[idx[p]] = true
				out = append(out, idx[p])
			}
		}
	}
	return out
}

// BFSRank numbers the vertices of g in breadth-first order over the
// out-arcs, from the vertex of highest out-degree first, then from the
// lowest unnumbered vertex until every vertex has a number: a permutation
// of the vertices, in O(n + m).
func BFSRank(g *graph.CSR) []int32 {
	n := g.NumVertices
	rank := make([]int32, n)
	for i := range rank {
		rank[i] = -1
	}
	queue := make([]int32, 0, n)
	next := int32(0)
	visit := func(s int) {
		if rank[s] >= 0 {
			return
		}
		rank[s] = next
		next++
		queue = append(queue[:0], int32(s))
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			for _, v := range g.Targets[g.Offsets[u]:g.Offsets[u+1]] {
				if rank[v] < 0 {
					rank[v] = next
					next++
					queue = append(queue, int32(v))
				}
			}
		}
	}
	hub, best := 0, -1
	for u := range n {
		if d := g.OutDegree(graph.VertexID(u)); d > best {
			hub, best = u, d
		}
	}
	if n > 0 {
		visit(hub)
	}
	for u := range n {
		visit(u)
	}
	return rank
}
