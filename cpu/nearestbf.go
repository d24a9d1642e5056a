package cpu

// Nearest source with negative weights: one multi-source Bellman-Ford
// (seed 002, Algorithm 0.3, label correcting) from a virtual super-source
// joined to every source by a zero-weight arc. A label is a pair
// (distance, source), ordered by distance then by source id; adding an
// arc's weight keeps that order, so the fixpoint gives every vertex its
// nearest source, ties to the smaller source id, as the Dijkstra of
// nearest.go does for non-negative weights.
//
// Choices:
//   - A frontier of the vertices whose label changed in the last round, as
//     in bellmanford.go, serial (like nearest.go): relaxations read the
//     labels current when they run. Without a negative cycle the best label
//     of a vertex is reached along a simple path (a cycle on a best walk
//     weighs 0 and can be cut, keeping its source), so after n rounds no
//     label changes; a frontier still non-empty then proves a negative
//     cycle reachable from a source.
//   - The cycle is then located as bellmanford.go does, from every source
//     at once: n serial rounds recording the last relaxing vertex, and n
//     steps back along them from a vertex relaxed in the last round. The
//     error is *graph.NegativeCycleError naming that vertex and the source
//     whose label reached it.
//   - A cutoff is applied after convergence: with negative weights a path
//     may pass above the cutoff and come back below it, so relaxation
//     cannot stop there.
//   - Sums saturate at the type's extremes (addSigned), so integer
//     distances cannot wrap while a negative cycle drives them down.
//
// O(n·m) in the worst case, O(m) per round.

import (
	"context"

	"github.com/pathctl/pathctl/graph"
)

func nearestBellmanFord[D graph.Number](ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	n := g.NumVertices
	inf, lowest := graph.Infinity[D](), lowestOf[D]()
	dist := make([]D, n)
	from := make([]graph.VertexID, n)
	fill(dist, inf)
	fill(from, -1)
	weights := graph.WeightsOf[D](g)
	queued := make([]bool, n)
	var front, next []graph.VertexID
	for _, s := range sources {
		if from[s] < 0 || s < from[s] {
			dist[s], from[s] = 0, s
			if !queued[s] {
				queued[s] = true
				front = append(front, s)
			}
		}
	}
	relaxed := 0
	for round := 1; len(front) > 0; round++ {
		if round > n {
			on := findNegativeCycleFrom(g, weights, sources)
			return nil, &graph.NegativeCycleError{Source: from[on], Vertex: on}
		}
		next = next[:0]
		for _, u := range front {
			queued[u] = false
		}
		for _, u := range front {
			if relaxed += int(g.Offsets[u+1] - g.Offsets[u]); relaxed >= 1<<16 {
				relaxed = 0
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			du, su := dist[u], from[u]
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				v := g.Targets[k]
				nd := addSigned(du, weights[k], inf, lowest)
				if nd == inf {
					continue
				}
				if from[v] < 0 || nd < dist[v] || (nd == dist[v] && su < from[v]) {
					dist[v], from[v] = nd, su
					if !queued[v] {
						queued[v] = true
						next = append(next, v)
					}
				}
			}
		}
		front, next = next, front
	}
	if req.HasCutoff {
		cut := graph.CutoffOf[D](req.Cutoff)
		for v := range dist {
			if from[v] >= 0 && dist[v] > cut {
				dist[v], from[v] = inf, -1
			}
		}
	}
	return &graph.Nearest{Type: graph.TypeOf[D](), Dist: dist, Source: from}, nil
}

// findNegativeCycleFrom returns a vertex on a negative cycle reachable
// from sources (the caller knows one exists): n rounds of serial
// Bellman-Ford from every source at once, recording predecessors, then n
// steps back along them from the vertex relaxed last, which lands on the
// cycle. O(n·m); it runs only on the error path.
func findNegativeCycleFrom[D graph.Number](g *graph.CSR, weights []D, sources []graph.VertexID) graph.VertexID {
	n := g.NumVertices
	inf, lowest := graph.Infinity[D](), lowestOf[D]()
	dist := make([]D, n)
	pred := make([]graph.VertexID, n)
	fill(dist, inf)
	fill(pred, -1)
	for _, s := range sources {
		dist[s] = 0
	}
	last := sources[0]
	for range n {
		for u := range n {
			if dist[u] == inf {
				continue
			}
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				v := g.Targets[k]
				if nd := addSigned(dist[u], weights[k], inf, lowest); nd < dist[v] {
					dist[v], pred[v], last = nd, graph.VertexID(u), v
				}
			}
		}
	}
	v := last
	for range n {
		if pred[v] < 0 {
			break
		}
		v = pred[v]
	}
	return v
}
