package cpu

// Algorithm: "bellman-ford" — seed 002, Algorithm 0.3: label-correcting
// single-source shortest paths that accepts negative weights. A round
// relaxes the out-arcs of the vertices changed in the previous round with
// atomicMin on dist; the loop stops after a round that changes nothing.
//
// Choices:
//   - Frontier of changed vertices instead of the seed's sweep over all
//     vertices (same fixpoint, far fewer arcs per round).
//   - Relaxations read dist[u] at the time they run, so an improvement can
//     travel several arcs in one round; after round k every vertex is at
//     most its shortest distance over paths of k arcs, so without a negative
//     cycle nothing changes in round n. A frontier still non-empty after n
//     rounds proves a negative cycle reachable from the source.
//   - The cycle is then located serially: a Bellman-Ford pass that records
//     the last relaxing vertex of each vertex for n rounds, and a walk of n
//     predecessor steps back from a vertex relaxed in round n, which lands
//     on the cycle. The error is *graph.NegativeCycleError{Source, Vertex}.
//   - Sums saturate at the type's extremes, so integer distances cannot wrap
//     while a negative cycle drives them down.
//   - Predecessors come from tight arcs after convergence (tightTree).

import "github.com/pathctl/pathctl/graph"

func solveBellmanFord[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf, lowest := graph.Infinity[D](), lowestOf[D]()
	flags := grow(&ws.flags, r.n)
	fill(dist, inf)
	dist[src] = 0
	front := append(ws.front[:0], src)
	for round := 1; len(front) > 0; round++ {
		if err := ws.ctx.Err(); err != nil {
			ws.front = front
			return err
		}
		if round > r.n {
			for _, v := range front {
				flags[v] = 0
			}
			ws.front = front[:0]
			return &graph.NegativeCycleError{Source: src, Vertex: findNegativeCycle(r, src)}
		}
		forChunks(ws.par, len(front), func(h, lo, hi int) {
			local := ws.locals[h][:0]
			for _, u := range front[lo:hi] {
				du := loadDist(&dist[u])
				for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
					v := r.targets[k]
					if atomicMin(&dist[v], addSigned(du, r.weights[k], inf, lowest)) && claim(&flags[v]) {
						local = append(local, v)
					}
				}
			}
			ws.locals[h] = local
		})
		front = ws.gather(&ws.front)
		for _, v := range front {
			flags[v] = 0
		}
	}
	ws.front = front
	if pred != nil {
		ws.tightTree(src, dist, pred)
	}
	return nil
}

// findNegativeCycle returns a vertex on a negative cycle reachable from src
// (the caller knows one exists): n rounds of serial Bellman-Ford recording
// predecessors, then n steps back along them from a vertex relaxed in the
// last round. O(n·m); it runs only on the error path.
func findNegativeCycle[D graph.Number](r *runner[D], src graph.VertexID) graph.VertexID {
	inf, lowest := graph.Infinity[D](), lowestOf[D]()
	dist := make([]D, r.n)
	pred := make([]graph.VertexID, r.n)
	fill(dist, inf)
	fill(pred, -1)
	dist[src] = 0
	last := src
	for range r.n {
		for u := 0; u < r.n; u++ {
			if dist[u] == inf {
				continue
			}
			for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
				v := r.targets[k]
				if nd := addSigned(dist[u], r.weights[k], inf, lowest); nd < dist[v] {
					dist[v], pred[v], last = nd, graph.VertexID(u), v
				}
			}
		}
	}
	v := last
	for range r.n {
		if pred[v] < 0 {
			break
		}
		v = pred[v]
	}
	return v
}
