package cpu

// Algorithm: "edge" — seeds 003 (APSP) and 004 (SSSP): edge-parallel
// relaxation. Every sweep relaxes every arc (u, v, w) of the CSR with
// atomicMin(&dist[v], dist[u] + w) directly on dist (no predist); the loop
// stops after a sweep that lowers nothing.
//
// Choices:
//   - The seeds relax each stored edge in both directions because they store
//     an undirected edge once; our CSR already holds both arcs of an
//     undirected edge, so each arc is relaxed in its own direction.
//   - For a block, sources are spread over workers, one sweep loop per
//     source. For a single source (or fewer sources than threads) on a large
//     graph, each sweep is split over helpers by ranges of arcs of about
//     equal size (vertex boundaries found by binary search on the offsets),
//     which is the seeds' parallel loop over E.
//   - A sweep reads dist[u] atomically and relaxes in place, so values found
//     early in a sweep propagate within it (as on the GPU), and vertices
//     still at infinity are skipped.
//   - Predecessors come from tight arcs after convergence (tightTree).

import "github.com/pathctl/pathctl/graph"

func solveEdge[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[D]()
	fill(dist, inf)
	dist[src] = 0
	parts := ws.arcParts()
	changed := ws.changed[:ws.par]
	for {
		if err := ws.ctx.Err(); err != nil {
			return err
		}
		forParts(ws.par, func(h int) {
			lowered := false
			for u := parts[h]; u < parts[h+1]; u++ {
				du := loadDist(&dist[u])
				if du == inf {
					continue
				}
				for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
					nd := addPositive(du, r.weights[k], inf)
					if nd > r.cut {
						continue // past the cutoff (Request.Cutoff)
					}
					if atomicMin(&dist[r.targets[k]], nd) {
						lowered = true
					}
				}
			}
			changed[h] = lowered
		})
		any := false
		for _, c := range changed {
			any = any || c
		}
		if !any {
			break
		}
	}
	if pred != nil {
		ws.tightTree(src, dist, pred)
	}
	return nil
}
