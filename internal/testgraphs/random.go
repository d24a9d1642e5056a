package testgraphs

import (
	"math/rand/v2"

	"github.com/pathctl/pathctl/graph"
)

// RandomOptions shapes a random edge list.
type RandomOptions struct {
	N, M int // vertices and rows
	Kind WeightKind
	// Integer weights are drawn from [MinWeight, MaxWeight]; float weights
	// too, as multiples of 1/8 when Dyadic (every sum of a few of them is
	// exact) and uniformly otherwise.
	MinWeight, MaxWeight int
	Dyadic               bool
	// Duplicates adds this many repeats of earlier rows with fresh weights.
	Duplicates int
	// Potential, when positive, adds p(u) - p(v) to the weight of u->v for
	// random p in [0, Potential]: weights turn negative but every cycle
	// keeps its weight, so no negative cycle appears when MinWeight >= 0.
	Potential int
	// Cycle, when at least 2, plants a cycle of that many distinct
	// vertices (returned by Random) with every arc weighing -1. Keep the
	// other weights at least Cycle so that it is the only negative cycle.
	Cycle int
}

// Random draws an edge list. Self-loops occur as drawn (Build drops them).
// It returns the planted cycle's vertices, if any, in cycle order.
func Random(rng *rand.Rand, o RandomOptions) (*graph.Edges, []graph.VertexID) {
	e := &graph.Edges{NumVertices: o.N}
	var weights []float64
	potential := make([]int, o.N)
	if o.Potential > 0 {
		for i := range potential {
			potential[i] = rng.IntN(o.Potential + 1)
		}
	}
	draw := func(u, v graph.VertexID) float64 {
		var w float64
		span := o.MaxWeight - o.MinWeight
		switch {
		case o.Kind == Int || o.Kind == Unweighted:
			w = float64(o.MinWeight + rng.IntN(span+1))
		case o.Dyadic:
			w = float64(8*o.MinWeight+rng.IntN(8*span+1)) / 8
		default:
			w = float64(o.MinWeight) + rng.Float64()*float64(span)
		}
		return w + float64(potential[u]-potential[v])
	}
	add := func(u, v graph.VertexID, w float64) {
		e.Src = append(e.Src, u)
		e.Dst = append(e.Dst, v)
		weights = append(weights, w)
	}
	if o.N > 0 {
		for range o.M {
			u, v := graph.VertexID(rng.IntN(o.N)), graph.VertexID(rng.IntN(o.N))
			add(u, v, draw(u, v))
		}
	}
	for i := 0; i < o.Duplicates && len(e.Src) > 0; i++ {
		k := rng.IntN(len(e.Src))
		add(e.Src[k], e.Dst[k], draw(e.Src[k], e.Dst[k]))
	}
	var cycle []graph.VertexID
	if o.Cycle >= 2 && o.Cycle <= o.N {
		for _, p := range rng.Perm(o.N)[:o.Cycle] {
			cycle = append(cycle, graph.VertexID(p))
		}
		for i, u := range cycle {
			add(u, cycle[(i+1)%len(cycle)], -1)
		}
	}
	switch o.Kind {
	case Int:
		e.IntWeights = make([]int64, len(weights))
		for i, w := range weights {
			e.IntWeights[i] = int64(w)
		}
	case Float32:
		e.Float32Weights = make([]float32, len(weights))
		for i, w := range weights {
			e.Float32Weights[i] = float32(w)
		}
	case Float64:
		e.Float64Weights = weights
	}
	return e, cycle
}
