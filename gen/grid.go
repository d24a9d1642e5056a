package gen

// Grid generator: a rows×cols lattice where vertex (r, c) has id r·cols + c
// and is joined to its right and lower neighbours. Every undirected edge is
// emitted as two arcs with one weight, so the graph is symmetric, sparse
// (degree ≤ 4) and of diameter rows + cols − 2 hops: a stand-in for road
// networks, the hard case for frontier-parallel shortest paths.
//
// Arc order: all horizontal edges row by row, then all vertical edges row
// by row; edge k gives arcs 2k (low id → high id) and 2k+1 (back).

import (
	"fmt"
	"math"
)

// Grid returns the rows×cols 4-neighbour grid with 2·(rows·(cols−1) +
// (rows−1)·cols) arcs, weighted 1..100 unless an option says otherwise (the
// two arcs of an edge share its weight). WithRMATParams,
// WithVertexPermutation and WithUndirectedPairs do not apply. Time and
// memory O(rows·cols). It fails for negative sizes, more vertices than
// int32 ids hold, an empty weight range, or columns over WithMemoryLimit.
func Grid(rows, cols int, seed uint64, opts ...Option) (*EdgeList, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("gen: grid size %d×%d is negative", rows, cols)
	}
	if rows != 0 && int64(cols) > math.MaxInt32/int64(rows) {
		return nil, fmt.Errorf("gen: grid %d×%d has more vertices than int32 ids hold", rows, cols)
	}
	R, C := int64(rows), int64(cols)
	horizontal := R * max(C-1, 0)
	vertical := max(R-1, 0) * C
	edges := horizontal + vertical
	if err := cfg.checkMemory(fmt.Sprintf("grid %d×%d", rows, cols), 2*edges); err != nil {
		return nil, err
	}
	e := &EdgeList{
		Src:         make([]int64, 2*edges),
		Dst:         make([]int64, 2*edges),
		NumVertices: R * C,
	}
	cfg.allocWeights(e, 2*edges)
	forChunks(edges, func(chunk, lo, hi int64) {
		for k := lo; k < hi; k++ {
			var u, v int64
			if k < horizontal {
				r, c := k/(C-1), k%(C-1)
				u = r*C + c
				v = u + 1
			} else {
				u = k - horizontal // vertical edges in id order of their upper end
				v = u + C
			}
			e.Src[2*k], e.Dst[2*k] = u, v
			e.Src[2*k+1], e.Dst[2*k+1] = v, u
		}
		cfg.fillWeights(e, seed, chunk, lo, hi, 2)
	})
	return e, nil
}
