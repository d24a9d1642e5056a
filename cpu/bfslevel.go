package cpu

// Algorithm: "bfs-level" — seed 002, Algorithm 0.2: level-synchronous
// breadth-first search without atomic read-modify-write and without
// predecessors. In round `level` every vertex at that level writes level+1
// into each out-neighbour still unvisited.
//
// Choices:
//   - The seed loops over all vertices in each round; we keep the list of
//     the vertices at the current level, which is the set the seed's write
//     can come from, so a source costs O(n + m).
//   - Helpers of one source may write the same neighbour in the same round;
//     they write the same value, so the race is benign, as the seed says.
//     We still load and store hop counts with sync/atomic so that the race
//     detector stays quiet; no compare-and-swap is used. A neighbour found by
//     two helpers is listed twice and deduplicated when the helpers' lists
//     are merged.
//   - Prepare refuses predecessors: "bfs-level stores no predecessors; use
//     bfs".

import (
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

func solveBFSLevel(ws *workspace[int32], src graph.VertexID, dist []int32, _ []graph.VertexID) error {
	r := ws.r
	flags := grow(&ws.flags, r.n)
	fill(dist, graph.Infinity[int32]())
	dist[src] = 0
	front := append(ws.front[:0], src)
	for level := int32(0); len(front) > 0 && level < r.cut; level++ {
		if err := ws.ctx.Err(); err != nil {
			ws.front = front
			return err
		}
		forChunks(ws.par, len(front), func(h, lo, hi int) {
			local := ws.locals[h][:0]
			for _, p := range front[lo:hi] {
				for k := r.offsets[p]; k < r.offsets[p+1]; k++ {
					t := r.targets[k]
					if atomic.LoadInt32(&dist[t]) > level+1 {
						atomic.StoreInt32(&dist[t], level+1)
						local = append(local, t)
					}
				}
			}
			ws.locals[h] = local
		})
		next := ws.next[:0]
		for h := range ws.par {
			for _, t := range ws.locals[h] {
				if flags[t] == 0 {
					flags[t] = 1
					next = append(next, t)
				}
			}
			ws.locals[h] = ws.locals[h][:0]
		}
		for _, t := range next {
			flags[t] = 0
		}
		ws.next, front = front, next
	}
	ws.front = front
	return nil
}
