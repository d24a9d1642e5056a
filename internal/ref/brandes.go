package ref

// A serial Brandes (2001), written from the paper's pseudocode: a stack S
// of settled vertices, predecessor lists P, path counts σ and dependencies
// δ, one source at a time. The weighted search picks the nearest unsettled
// vertex by a scan over all of them (O(n²) a source), so that it shares no
// code, and no heap, with the engine's.

import (
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// Brandes returns the betweenness of every vertex of g summed over sources,
// before any rescaling: Σ_s Σ_{t ≠ s} σ_st(v) / σ_st for v ≠ s, and with
// endpoints also 1 per reached t ≠ s at t and the number of reached vertices
// at s (networkx's _accumulate_endpoints). Distances are hop counts with
// hops or an unweighted g, else int64 sums of integer weights or float64
// sums of float weights, ties compared exactly. Weights must be positive.
func Brandes(g *graph.CSR, sources []graph.VertexID, endpoints, hops bool) ([]float64, error) {
	cb, _, err := brandes(g, sources, endpoints, hops)
	return cb, err
}

// EdgeBrandes returns the edge betweenness of every arc of g (in CSR
// order) summed over sources, before any rescaling: Σ_s Σ_t σ_st(a) / σ_st,
// σ_st(a) the shortest s–t paths over arc a (networkx's _accumulate_edges,
// each arc apart: an undirected edge is the sum of its two arcs).
func EdgeBrandes(g *graph.CSR, sources []graph.VertexID, hops bool) ([]float64, error) {
	_, arcs, err := brandes(g, sources, false, hops)
	return arcs, err
}

// predArc is a tight arc into a vertex: its tail and its index in the CSR.
type predArc struct {
	from graph.VertexID
	arc  int64
}

func brandes(g *graph.CSR, sources []graph.VertexID, endpoints, hops bool) ([]float64, []float64, error) {
	n := g.NumVertices
	cb := make([]float64, n)
	arcs := make([]float64, len(g.Targets))
	weight, err := arcWeights(g, hops || !g.Weighted)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range sources {
		if err := checkSource(g, s); err != nil {
			return nil, nil, err
		}
		stack := []graph.VertexID{}
		pred := make([][]predArc, n)
		sigma := make([]float64, n)
		dist := make([]float64, n) // exact: integer sums stay below 2^53 in the tests' graphs
		reached := make([]bool, n)
		settled := make([]bool, n)
		sigma[s], reached[s] = 1, true
		for {
			// The nearest reached vertex not yet settled (hops: weights 1).
			v := graph.VertexID(-1)
			for u := range n {
				if reached[u] && !settled[u] && (v < 0 || dist[u] < dist[v]) {
					v = graph.VertexID(u)
				}
			}
			if v < 0 {
				break
			}
			settled[v] = true
			stack = append(stack, v)
			for k := g.Offsets[v]; k < g.Offsets[v+1]; k++ {
				w := g.Targets[k]
				d := weight.add(dist[v], k)
				switch {
				case !reached[w] || d < dist[w]:
					reached[w], dist[w] = true, d
					sigma[w] = sigma[v]
					pred[w] = append(pred[w][:0], predArc{v, k})
				case d == dist[w]:
					sigma[w] += sigma[v]
					pred[w] = append(pred[w], predArc{v, k})
				}
			}
		}
		delta := make([]float64, n)
		if endpoints {
			cb[s] += float64(len(stack) - 1)
		}
		for i := len(stack) - 1; i >= 0; i-- {
			w := stack[i]
			for _, p := range pred[w] {
				c := sigma[p.from] / sigma[w] * (1 + delta[w])
				delta[p.from] += c
				arcs[p.arc] += c
			}
			if w != s {
				cb[w] += delta[w]
				if endpoints {
					cb[w]++
				}
			}
		}
	}
	return cb, arcs, nil
}

// arcAdder adds arc k's weight to a distance in the weights' own
// arithmetic: int64 for integers, float64 for floats, 1 for hops.
type arcAdder struct {
	ints   []int64
	floats []float64
}

func (a arcAdder) add(d float64, k int64) float64 {
	switch {
	case a.ints != nil:
		return float64(int64(d) + a.ints[k])
	case a.floats != nil:
		return d + a.floats[k]
	}
	return d + 1
}

// arcWeights widens g's weights for arcAdder, refusing a weight that is
// not positive.
func arcWeights(g *graph.CSR, hops bool) (arcAdder, error) {
	var a arcAdder
	if hops {
		return a, nil
	}
	switch w := g.Weights.(type) {
	case []int32:
		for _, x := range w {
			a.ints = append(a.ints, int64(x))
		}
	case []int64:
		a.ints = append(a.ints, w...)
	case []float32:
		for _, x := range w {
			a.floats = append(a.floats, float64(x))
		}
	case []float64:
		a.floats = append(a.floats, w...)
	}
	for k := range g.Targets {
		if x := a.add(0, int64(k)); !(x > 0) {
			return a, fmt.Errorf("ref: Brandes needs positive weights, arc %d weighs %v", k, x)
		}
	}
	return a, nil
}
