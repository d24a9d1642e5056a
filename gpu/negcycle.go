package gpu

import "github.com/pathctl/pathctl/graph"

// negativeCycle names a vertex on a negative cycle reachable from src, for
// the error of a run whose kernel saw one. It runs a serial Bellman-Ford with
// predecessors on the host (O(n·m) at worst; only on this error path): a
// vertex relaxed in round n leads back, through n predecessor steps, onto the
// cycle.
func negativeCycle(g *graph.CSR, src graph.VertexID) error {
	switch g.Type {
	case graph.DistInt32:
		return negativeCycleOf[int32](g, src)
	case graph.DistInt64:
		return negativeCycleOf[int64](g, src)
	case graph.DistFloat32:
		return negativeCycleOf[float32](g, src)
	}
	return negativeCycleOf[float64](g, src)
}

func negativeCycleOf[D graph.Number](g *graph.CSR, src graph.VertexID) error {
	n := g.NumVertices
	w := graph.WeightsOf[D](g)
	inf := graph.Infinity[D]()
	dist := make([]D, n)
	pred := make([]graph.VertexID, n)
	for i := range dist {
		dist[i], pred[i] = inf, -1
	}
	dist[src] = 0
	last := graph.VertexID(-1)
	for round := 0; round < n; round++ {
		last = -1
		for u := 0; u < n; u++ {
			du := dist[u]
			if du == inf {
				continue
			}
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				v := g.Targets[k]
				if nd := du + w[k]; nd < dist[v] {
					dist[v], pred[v] = nd, graph.VertexID(u)
					last = v
				}
			}
		}
		if last < 0 {
			break
		}
	}
	if last < 0 {
		// The device saw a cycle the host does not: report the source,
		// which is what the device knew.
		return &graph.NegativeCycleError{Source: src, Vertex: src}
	}
	v := last
	for i := 0; i < n && pred[v] >= 0; i++ {
		v = pred[v]
	}
	return &graph.NegativeCycleError{Source: src, Vertex: v}
}
