package gen

// Uniform generator: the G(n, m) flavour of Erdős–Rényi with m = n·avgDegree
// arcs, each arc's source and target drawn uniformly and independently, the
// target redrawn among the other n − 1 vertices so that there are no
// self-loops. Duplicate arcs may occur (about m²/(2n²) of them), as in any
// sampling with replacement. Low diameter, no skew: the easy case for
// frontier-parallel shortest paths.

import (
	"fmt"
	"math"
)

// Uniform returns n vertices and n·avgDegree random arcs (twice that with
// WithUndirectedPairs), weighted 1..100 unless an option says otherwise.
// WithRMATParams and WithVertexPermutation do not apply. Time O(m) spread
// over GOMAXPROCS goroutines. It fails for negative arguments, more
// vertices than int32 ids hold, arcs on fewer than two vertices, or an
// empty weight range, or columns over WithMemoryLimit (ErrTooLarge).
func Uniform(n int64, avgDegree int, seed uint64, opts ...Option) (*EdgeList, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if n < 0 || avgDegree < 0 {
		return nil, fmt.Errorf("gen: uniform n=%d degree=%d must be non-negative", n, avgDegree)
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("gen: uniform n=%d is more vertices than int32 ids hold", n)
	}
	if n < 2 && avgDegree > 0 {
		return nil, fmt.Errorf("gen: uniform graph needs 2 vertices or more for arcs without self-loops, got %d", n)
	}
	if avgDegree > 0 && int64(avgDegree) > math.MaxInt64/4/n {
		return nil, fmt.Errorf("gen: uniform n=%d degree=%d has too many edges", n, avgDegree)
	}
	m := n * int64(avgDegree)
	if err := cfg.checkMemory(fmt.Sprintf("uniform n=%d degree=%d", n, avgDegree), m*cfg.arcsPerEdge()); err != nil {
		return nil, err
	}
	e, stride := cfg.newEdgeList(n, m)
	forChunks(m, func(chunk, lo, hi int64) {
		r := newStream(seed, purposeEndpoints, uint64(chunk))
		for k := lo; k < hi; k++ {
			u := int64(r.below(uint64(n)))
			v := int64(r.below(uint64(n - 1)))
			if v >= u {
				v++
			}
			e.Src[k*stride], e.Dst[k*stride] = u, v
			if stride == 2 {
				e.Src[k*stride+1], e.Dst[k*stride+1] = v, u
			}
		}
		cfg.fillWeights(e, seed, chunk, lo, hi, stride)
	})
	return e, nil
}
