package testgraphs

import (
	"math/rand/v2"

	"github.com/pathctl/pathctl/graph"
)

// RoadGrid is a rows×cols street grid: every street is two-way with a
// weight per direction, or, with probability oneWay, one-way in a random
// direction; a fraction zero of the weights is 0.
func RoadGrid(rng *rand.Rand, rows, cols int, oneWay, zero float64, maxW int) *graph.Edges {
	e := &graph.Edges{NumVertices: rows * cols}
	weight := func() int64 {
		if rng.Float64() < zero {
			return 0
		}
		return int64(1 + rng.IntN(maxW))
	}
	add := func(u, v int) {
		switch {
		case rng.Float64() >= oneWay:
			e.Src, e.Dst, e.IntWeights = append(e.Src, int32(u), int32(v)), append(e.Dst, int32(v), int32(u)), append(e.IntWeights, weight(), weight())
		case rng.IntN(2) == 0:
			e.Src, e.Dst, e.IntWeights = append(e.Src, int32(u)), append(e.Dst, int32(v)), append(e.IntWeights, weight())
		default:
			e.Src, e.Dst, e.IntWeights = append(e.Src, int32(v)), append(e.Dst, int32(u)), append(e.IntWeights, weight())
		}
	}
	for r := range rows {
		for c := range cols {
			u := r*cols + c
			if c+1 < cols {
				add(u, u+1)
			}
			if r+1 < rows {
				add(u, u+cols)
			}
		}
	}
	return e
}
