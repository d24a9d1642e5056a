package plan

import (
	"math"
	"math/bits"

	"github.com/pathctl/pathctl/graph"
)

// Shape is what the batched kernel's choices read of a graph: whether it
// has arcs, looks like a mesh, and its mean weight; for float weights,
// whether every sum the kernels form is exact.
type Shape struct {
	Arcs, MeshLike bool
	MeanWeight     float64
	// ExactSums is set on a float-weighted graph whose weights are all
	// multiples of one power of two 2^-f with n·max(w)·2^f ≤ 2^p (p = 24
	// for float32, 53 for float64): every sum of up to n weights is then a
	// multiple of 2^-f below 2^(p-f), exact in the type, so float addition
	// is associative on every distance and a row derived from another
	// (leaves, minimums, seeds) equals the kernel's bit for bit. Integer
	// weights read as floats (--dist-type float32 on small graphs, or
	// float64) and dyadic weights (halves, quarters) qualify; weights like
	// 0.1 do not.
	ExactSums bool
}

// ShapeOf measures g in one pass over every vertex and arc. A graph looks
// like a mesh when it is sparse with even degrees (mean out-degree below
// 6, maximum below 4 times the mean), the test the seed kernels' auto
// used for high-diameter graphs.
func ShapeOf(g *graph.CSR) Shape {
	n, m := g.NumVertices, g.NumEdges()
	if m == 0 {
		return Shape{}
	}
	mean := float64(m) / float64(n)
	maxDeg := 0
	for u := range n {
		maxDeg = max(maxDeg, g.OutDegree(graph.VertexID(u)))
	}
	var sum float64
	exact := g.Type.IsFloat()
	frac, top := 0, 0.0 // the most fraction bits of a weight, the largest weight
	for k := int64(0); k < m; k++ {
		w := g.WeightAt(k)
		sum += w
		if exact {
			if !(w >= 0) || math.IsInf(w, 0) {
				exact = false
			} else if w > 0 {
				frac, top = max(frac, fractionBits(w)), max(top, w)
			}
		}
	}
	if exact {
		exact = sumsExact(g, frac, top)
	}
	return Shape{Arcs: true, MeshLike: mean < 6 && float64(maxDeg) < 4*mean, MeanWeight: sum / float64(m), ExactSums: exact}
}

// fractionBits is the least f ≥ 0 for which w·2^f is an integer (w > 0,
// finite).
func fractionBits(w float64) int {
	mant, exp := math.Frexp(w) // w = mant·2^exp, mant in [0.5, 1)
	m := uint64(math.Ldexp(mant, 53))
	return max(0, 53-exp-bits.TrailingZeros64(m))
}

// sumsExact reports whether sums of up to n weights of g, each a multiple
// of 2^-frac of at most top, stay exact in g's float type.
func sumsExact(g *graph.CSR, frac int, top float64) bool {
	p := 53
	if g.Type == graph.DistFloat32 {
		p = 24
	}
	if frac >= p {
		return false
	}
	scaled := math.Ldexp(top, frac) // an integer below 2^p... or not
	if scaled > math.Ldexp(1, p) {
		return false
	}
	return graph.IntSumsFit(g.NumVertices, uint64(scaled), uint64(1)<<p)
}

// Step is the distance by which the round threshold of the batched kernel
// rises per round: asked when positive, else cfg.DeltaScale times the mean
// weight where the graph looks like a mesh (or on every graph with arcs
// when not cfg.StepMeshesOnly), else 0 (no threshold).
//
// Measured on an H200 (kernel time, one block of 8192 consecutive sources;
// BenchmarkBatchedStep in package gpu): 256×256 grid, weights 1..10: no
// threshold 570 ms, 0.25× 515, 0.5× 331, 1×, 2×, 4× 567..570 (a step past
// the frontier's pace never holds a vertex back); R-MAT scale 16: no
// threshold 891 ms, 0.25× 1574, 0.5× 1097, 1× and up 892..895. So
// R-MAT-like graphs run without a threshold. BENCHMARKS.md, "GPU engine
// after the second slice, H200", records the grid's 331 and 503 ms.
func (cfg Config) Step(shape Shape, asked float64) float64 {
	if asked > 0 {
		return asked
	}
	if !shape.Arcs || cfg.DeltaScale <= 0 || (cfg.StepMeshesOnly && !shape.MeshLike) {
		return 0
	}
	return cfg.DeltaScale * shape.MeanWeight
}
