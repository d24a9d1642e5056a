package cpu

// Nearest source: one multi-source Dijkstra whose cost does not grow with
// the number of sources. Every source starts at distance 0 with itself as
// label; a vertex keeps the lexicographically smallest (distance, source)
// pair that reaches it. The order is compatible with adding a weight, so
// the label a vertex settles with is its nearest source, ties going to the
// smaller source id. A binary heap with lazy deletion, O((n + m) log m).

import (
	"context"
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// Nearest computes, for every vertex of g, the distance to the nearest of
// sources and that source, over g's non-negative weights; req.Cutoff,
// when set, leaves vertices farther than it unreached. Negative weights
// give a *graph.NegativeWeightError. The distances have g's type. For
// req.Algorithm ch the answer comes through the contraction hierarchy
// (nearestch.go), the same answer.
func (e *Engine) Nearest(ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	if err := checkNearestSources(g, sources); err != nil {
		return nil, err
	}
	if g.HasNegative() {
		return nil, g.NegativeWeight(graph.Dijkstra)
	}
	if req.Algorithm == graph.CH {
		return nearestCH(ctx, e, g, sources, req) // nearestch.go
	}
	switch g.Type {
	case graph.DistInt32:
		return nearest[int32](ctx, g, sources, req)
	case graph.DistInt64:
		return nearest[int64](ctx, g, sources, req)
	case graph.DistFloat32:
		return nearest[float32](ctx, g, sources, req)
	}
	return nearest[float64](ctx, g, sources, req)
}

// NearestBellmanFord computes, for every vertex of g, the distance to the
// nearest of sources and that source (ties to the smaller source id), over
// weights of either sign; req.Cutoff, when set, leaves vertices farther
// than it unreached. A negative cycle reachable from a source gives a
// *graph.NegativeCycleError. The distances have g's type; the rounds are
// nearestbf.go's.
func (e *Engine) NearestBellmanFord(ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	if err := checkNearestSources(g, sources); err != nil {
		return nil, err
	}
	switch g.Type {
	case graph.DistInt32:
		return nearestBellmanFord[int32](ctx, g, sources, req)
	case graph.DistInt64:
		return nearestBellmanFord[int64](ctx, g, sources, req)
	case graph.DistFloat32:
		return nearestBellmanFord[float32](ctx, g, sources, req)
	}
	return nearestBellmanFord[float64](ctx, g, sources, req)
}

// labelled is a heap entry: a tentative (distance, source) of vertex v.
type labelled[D graph.Number] struct {
	d   D
	src graph.VertexID
	v   graph.VertexID
}

func (a labelled[D]) less(b labelled[D]) bool {
	return a.d < b.d || (a.d == b.d && a.src < b.src)
}

func nearest[D graph.Number](ctx context.Context, g *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, error) {
	n := g.NumVertices
	inf := graph.Infinity[D]()
	cut := inf
	if req.HasCutoff {
		cut = graph.CutoffOf[D](req.Cutoff)
	}
	dist := make([]D, n)
	from := make([]graph.VertexID, n)
	fill(dist, inf)
	fill(from, -1)
	weights := graph.WeightsOf[D](g)
	var h []labelled[D]
	push := func(e labelled[D]) {
		h = append(h, e)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[i].less(h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	pop := func() labelled[D] {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l, small := 2*i+1, i
			if l < len(h) && h[l].less(h[small]) {
				small = l
			}
			if r := l + 1; r < len(h) && h[r].less(h[small]) {
				small = r
			}
			if small == i {
				break
			}
			h[i], h[small] = h[small], h[i]
			i = small
		}
		return top
	}
	for _, s := range sources {
		if from[s] < 0 {
			dist[s], from[s] = 0, s
			push(labelled[D]{0, s, s})
		}
	}
	for settled := 0; len(h) > 0; {
		top := pop()
		u := top.v
		if top.d != dist[u] || top.src != from[u] {
			continue // stale: u was reached by a better pair since
		}
		if settled++; settled&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			v := g.Targets[k]
			nd := addPositive(top.d, weights[k], inf)
			if nd == inf || nd > cut {
				continue
			}
			if c := (labelled[D]{nd, top.src, v}); from[v] < 0 || c.less(labelled[D]{dist[v], from[v], v}) {
				dist[v], from[v] = nd, top.src
				push(c)
			}
		}
	}
	return &graph.Nearest{Type: graph.TypeOf[D](), Dist: dist, Source: from}, nil
}

// checkNearestSources refuses a nearest-source search of g without
// sources or with one outside the graph.
func checkNearestSources(g *graph.CSR, sources []graph.VertexID) error {
	if err := checkCSR(g); err != nil {
		return err
	}
	if len(sources) == 0 {
		return errors.New("cpu: the nearest source needs at least one source")
	}
	for _, s := range sources {
		if s < 0 || int(s) >= g.NumVertices {
			return fmt.Errorf("cpu: source %d outside [0, %d)", s, g.NumVertices)
		}
	}
	return nil
}
