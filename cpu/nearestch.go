package cpu

// The nearest source through a contraction hierarchy (the algorithm ch):
// one upward pass from every source at once and one downward sweep
// (hierarchy.Nearest), in place of a multi-source Dijkstra over the whole
// graph. The hierarchy is e's (WithHierarchy) or one built now.

import (
	"context"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// nearestCH is e.Nearest for req.Algorithm ch.
func nearestCH(ctx context.Context, e *Engine, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	h, err := e.hierarchyOf(ctx, g, e.threads) // ch.go
	if err != nil {
		return nil, err
	}
	row := make([]int64, g.NumVertices)
	from := make([]graph.VertexID, g.NumVertices)
	if err := h.Nearest(sources, row, from); err != nil {
		return nil, err
	}
	res := &graph.Nearest{Type: g.Type, Source: from}
	switch g.Type {
	case graph.DistInt32:
		res.Dist = nearestOfRow[int32](h, row, from, req)
	case graph.DistInt64:
		res.Dist = nearestOfRow[int64](h, row, from, req)
	case graph.DistFloat32:
		res.Dist = nearestOfRow[float32](h, row, from, req)
	default:
		res.Dist = nearestOfRow[float64](h, row, from, req)
	}
	return res, nil
}

// nearestOfRow converts the hierarchy's distances into g's type, and
// leaves the vertices past req's cutoff unreached (Infinity, source -1).
func nearestOfRow[D graph.Number](h *hierarchy.Hierarchy, row []int64, from []graph.VertexID, req graph.Request) []D {
	dist := make([]D, len(row))
	fromHierarchy(h, row, dist)
	if req.HasCutoff {
		cut, inf := graph.CutoffOf[D](req.Cutoff), graph.Infinity[D]()
		for v, d := range dist {
			if d > cut {
				dist[v], from[v] = inf, -1
			}
		}
	}
	return dist
}
