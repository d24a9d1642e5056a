package cpu

// Algorithm: "dijkstra" — seed 000 (design.md, "Algorithms"): per source, a
// label-correcting loop over two arrays, dist and predist. A round relaxes
// the out-arcs of every vertex whose distance changed in the previous round
// into predist with atomicMin, then folds predist into dist and raises the
// changed flag; it stops after a round that changes nothing.
//
// Choices:
//   - The seed's "if dist(s)(u) is not modified, continue" is kept as a list
//     of the vertices modified in the last round (the frontier), so a round
//     costs the arcs of that list, not a scan of all n vertices. A vertex
//     enters the next list once per round, claimed by a CAS on a flag.
//   - Sources of a block are spread over worker goroutines (the seed's one
//     thread block per source). When a block has fewer sources than threads
//     on a large graph, the frontier of one source is split over helper
//     goroutines (the seed's threads striding over vertices); the atomicMin
//     on predist makes concurrent relaxations safe.
//   - Predecessors are derived after convergence from tight arcs (see
//     workspace.tightTree): atomicMin on predist cannot carry the relaxing
//     vertex along with the distance.

import "github.com/pathctl/pathctl/graph"

func solveDijkstra[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[D]()
	predist := grow(&ws.predist, r.n)
	flags := grow(&ws.flags, r.n)
	fill(dist, inf)
	fill(predist, inf)
	dist[src], predist[src] = 0, 0
	front := append(ws.front[:0], src)
	for len(front) > 0 {
		if err := ws.ctx.Err(); err != nil {
			ws.front = front
			return err
		}
		touched := ws.relaxToPredist(front, dist, predist, allArcs, 0)
		// Fold predist into dist; what changed is the next frontier.
		front = front[:0]
		for _, v := range touched {
			flags[v] = 0
			if predist[v] < dist[v] {
				dist[v] = predist[v]
				front = append(front, v)
			}
		}
	}
	ws.front = front
	if pred != nil {
		ws.tightTree(src, dist, pred)
	}
	return nil
}
