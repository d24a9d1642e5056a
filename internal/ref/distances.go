package ref

import (
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// Distances returns the distances from src as the oracle that fits g's
// weights computes them: BFS hop counts when g has no weight column,
// Bellman-Ford when a weight is negative, Dijkstra otherwise. D is the Go
// type of g.Type (int32 for hop counts); another type is an error, as are
// the errors of the oracle chosen (a *graph.NegativeCycleError from
// Bellman-Ford). Its cost is that oracle's: O(n + m), O((n + m) log n) or
// O(n·m). Callers that want hop counts on a weighted graph (the bfs
// algorithms) call BFS.
func Distances[D graph.Number](g *graph.CSR, src graph.VertexID) ([]D, error) {
	if !g.Weighted {
		hops, err := BFS(g, src)
		if err != nil {
			return nil, err
		}
		return widenHops[D](hops), nil
	}
	if _, ok := g.Weights.([]D); !ok {
		var z D
		return nil, fmt.Errorf("ref: distances as %T for a graph of %s distances", z, g.Type)
	}
	if g.HasNegative() {
		return BellmanFord[D](g, src)
	}
	return Dijkstra[D](g, src)
}

// widenHops converts BFS hop counts to D, keeping unreachable vertices at
// graph.Infinity[D]().
func widenHops[D graph.Number](hops []int32) []D {
	out := make([]D, len(hops))
	inf := graph.Infinity[int32]()
	for v, h := range hops {
		if h == inf {
			out[v] = graph.Infinity[D]()
		} else {
			out[v] = D(h)
		}
	}
	return out
}
