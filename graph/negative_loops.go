package graph

// Negative self-loops. A CSR has no self-loops: an arc u -> u of weight
// w ≥ 0 never shortens a path and is dropped. One of weight w < 0 is a
// negative cycle, which makes every distance through u unbounded below
// (scipy's bellman_ford raises NegativeCycleError, networkx
// NetworkXUnbounded). The arc is still dropped from the rows, so that no
// engine meets a self-loop, and is kept as a NegativeLoop on the CSR:
// HasNegative and NegativeWeight count it, so that the algorithms that
// need non-negative weights refuse it on every engine, and
// NegativeLoopCycle reports the cycle to Bellman-Ford's callers before any
// engine runs.

import (
	"cmp"
	"slices"
)

// NegativeLoop is a self-loop of negative weight that Build dropped from
// the rows: the smallest weight among the loops at Vertex.
type NegativeLoop struct {
	Vertex VertexID
	Weight float64
}

// FindNegativeLoops returns the negative self-loops of e, one per vertex
// (its smallest weight) in vertex order; nil when there is none, always
// for unweighted edges. Ids must be in range (Build checks them first).
// O(m), plus O(k log k) for k loops.
func FindNegativeLoops(e *Edges) []NegativeLoop {
	if !e.Weighted() {
		return nil
	}
	var loops []NegativeLoop
	for i, s := range e.Src {
		if s != e.Dst[i] {
			continue
		}
		if w := weightAt[float64](e, i); w < 0 {
			loops = append(loops, NegativeLoop{Vertex: s, Weight: w})
		}
	}
	if loops == nil {
		return nil
	}
	slices.SortFunc(loops, func(a, b NegativeLoop) int {
		return cmp.Or(cmp.Compare(a.Vertex, b.Vertex), cmp.Compare(a.Weight, b.Weight))
	})
	return slices.CompactFunc(loops, func(a, b NegativeLoop) bool { return a.Vertex == b.Vertex })
}

// NoteNegativeLoops records the negative self-loops of e on g, the CSR
// built from e: NegativeLoops, and MinWeight lowered to the smallest loop
// weight. Build calls it; so does every other builder of a CSR (the GPU
// engine's), so that a graph reads the same whichever built it.
func (g *CSR) NoteNegativeLoops(e *Edges) {
	g.NegativeLoops = FindNegativeLoops(e)
	for _, l := range g.NegativeLoops {
		g.MinWeight = min(g.MinWeight, l.Weight)
	}
}

// negativeLoopAt returns the weight of the negative self-loop at u, if
// there is one.
func (g *CSR) negativeLoopAt(u VertexID) (float64, bool) {
	i, ok := slices.BinarySearchFunc(g.NegativeLoops, u, func(l NegativeLoop, v VertexID) int { return cmp.Compare(l.Vertex, v) })
	if !ok {
		return 0, false
	}
	return g.NegativeLoops[i].Weight, true
}

// NegativeLoopCycle returns the *NegativeCycleError of algorithm a from
// sources when a takes negative weights (bellman-ford, or auto, which
// runs Bellman-Ford on them) and one of the sources reaches a negative
// self-loop: the first such source in the order given, and the loop
// nearest to it in hops among those it reaches (the smaller vertex on a
// tie). It returns nil otherwise: for the other algorithms, which refuse
// the loop as a negative weight (NegativeWeight), and for sources that
// reach no loop, whose distances Bellman-Ford computes as usual.
//
// One breadth-first search from every loop along incoming arcs labels the
// vertices that reach one: O(n + m) time, plus the transpose of a directed
// g, only on graphs with a negative loop.
func (g *CSR) NegativeLoopCycle(a Algorithm, sources []VertexID) error {
	if len(g.NegativeLoops) == 0 || !(a.AcceptsNegative() || a == Auto) {
		return nil
	}
	in := g
	if !g.Undirected {
		in = Transpose(g)
	}
	reaches := make([]VertexID, g.NumVertices) // the loop a vertex reaches, or -1
	for v := range reaches {
		reaches[v] = -1
	}
	queue := make([]VertexID, 0, len(g.NegativeLoops))
	for _, l := range g.NegativeLoops {
		reaches[l.Vertex] = l.Vertex
		queue = append(queue, l.Vertex)
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for k := in.Offsets[v]; k < in.Offsets[v+1]; k++ {
			if u := in.Targets[k]; reaches[u] < 0 {
				reaches[u] = reaches[v]
				queue = append(queue, u)
			}
		}
	}
	for _, s := range sources {
		if reaches[s] >= 0 {
			return &NegativeCycleError{Source: s, Vertex: reaches[s]}
		}
	}
	return nil
}
