package cpu

// Algorithm: "bfs" — seed 002, Algorithm 0.1: breadth-first search by
// atomic relaxation of hop counts, with predecessors. A round relaxes the
// out-neighbours t of the vertices p changed in the previous round: the
// seed's "atomic if (t.dist > p.dist + 1) { t.dist = p.dist + 1; t.pred = p }"
// is one compare-and-swap on a 64-bit word holding (hops, predecessor), so a
// distance and its predecessor always change together.
//
// Choices:
//   - The seed visits every vertex in every round; we visit only those whose
//     hop count changed in the last round (the seed's changed flag, kept per
//     vertex), which gives the same fixpoint in O(n + m) per source when run
//     by one goroutine.
//   - Weights are ignored; hop counts are int32 whatever the graph's type.
//   - Helpers split a round's frontier on large graphs when a block has
//     fewer sources than threads; rounds read a vertex's own hop count
//     atomically, as it may be lowered concurrently.
//   - Ties: the predecessor is whichever frontier vertex's CAS lands last
//     with the smallest count; every one of them is on a shortest path, and
//     hop counts strictly grow along predecessors, so they form a tree.

import (
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

func packHops(hops int32, pred graph.VertexID) uint64 {
	return uint64(uint32(hops))<<32 | uint64(uint32(pred))
}

func unpackHops(x uint64) (int32, graph.VertexID) {
	return int32(uint32(x >> 32)), graph.VertexID(uint32(x))
}

func solveBFS(ws *workspace[int32], src graph.VertexID, dist []int32, pred []graph.VertexID) error {
	r := ws.r
	state := grow(&ws.packed, r.n)
	flags := grow(&ws.flags, r.n)
	fill(state, packHops(graph.Infinity[int32](), -1))
	state[src] = packHops(0, -1)
	front := append(ws.front[:0], src)
	for len(front) > 0 {
		if err := ws.ctx.Err(); err != nil {
			ws.front = front
			return err
		}
		forChunks(ws.par, len(front), func(h, lo, hi int) {
			local := ws.locals[h][:0]
			for _, p := range front[lo:hi] {
				hp, _ := unpackHops(atomic.LoadUint64(&state[p]))
				nh := hp + 1
				if nh > r.cut {
					continue // past the cutoff (Request.Cutoff)
				}
				for k := r.offsets[p]; k < r.offsets[p+1]; k++ {
					t := r.targets[k]
					for {
						old := atomic.LoadUint64(&state[t])
						if ht, _ := unpackHops(old); ht <= nh {
							break
						}
						if atomic.CompareAndSwapUint64(&state[t], old, packHops(nh, p)) {
							if claim(&flags[t]) {
								local = append(local, t)
							}
							break
						}
					}
				}
			}
			ws.locals[h] = local
		})
		front = ws.gather(&ws.front)
		for _, t := range front {
			flags[t] = 0
		}
	}
	for v, x := range state {
		d, p := unpackHops(x)
		dist[v] = d
		if pred != nil {
			pred[v] = p
		}
	}
	return nil
}
