package plan

import (
	"math"

	"github.com/pathctl/pathctl/graph"
)

// Shape is what the batched kernel's choices read of a graph: whether it
// has arcs, looks like a mesh, its vertices, whether its weights differ
// (Weighted: not every arc of the same weight), and its mean weight.
type Shape struct {
	Arcs, MeshLike bool
	Vertices       int
	Weighted       bool
	MeanWeight     float64
}

// ShapeOf measures g in one pass over every vertex and arc. A graph looks
// like a mesh when it is sparse with even degrees (mean out-degree below
// 6, maximum below 4 times the mean), the test the seed kernels' auto
// used for high-diameter graphs.
func ShapeOf(g *graph.CSR) Shape {
	n, m := g.NumVertices, g.NumEdges()
	if m == 0 {
		return Shape{Vertices: n}
	}
	mean := float64(m) / float64(n)
	maxDeg := 0
	for u := range n {
		maxDeg = max(maxDeg, g.OutDegree(graph.VertexID(u)))
	}
	var sum float64
	first, weighted := g.WeightAt(0), false
	for k := int64(0); k < m; k++ {
		w := g.WeightAt(k)
		sum += w
		weighted = weighted || w != first
	}
	return Shape{Arcs: true, MeshLike: mean < 6 && float64(maxDeg) < 4*mean, Vertices: n, Weighted: weighted,
		MeanWeight: sum / float64(m)}
}

// ExactSumsOf reports whether g has float weights that are all multiples
// of one power of two 2^-f, non-negative, with n·max(w)·2^f ≤ 2^p (p = 24
// for float32, 53 for float64): every sum of up to n weights is then a
// multiple of 2^-f below 2^(p-f), exact in the type, so float addition is
// associative on every distance and a row derived from another (leaves,
// minimums, seeds) equals the kernel's bit for bit. Integer weights read
// as floats (float64, or float32 on graphs small enough) and dyadic weights
// (halves, quarters) qualify; weights like 0.1 do not, nor integer graphs.
func ExactSumsOf(g *graph.CSR) bool {
	p := 53
	if g.Type == graph.DistFloat32 {
		p = 24
	}
	return graph.ExactFloatSums(g, p)
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
// R-MAT-like graphs run without a threshold. docs/benchmarks-history.md, "GPU engine
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

// NearFar reports whether the batched kernel runs near-far rounds on a
// graph of this shape (Config.NearFar: always when on, never when off; in
// auto on weighted graphs that look like meshes with at least
// NearFarMinVertices vertices: a large diameter and few arcs per vertex,
// where the threshold rounds run thousands of rounds and re-expand many
// pairs), and the bucket width delta of its bound: asked when positive,
// else NearFarScale times the mean weight, +Inf where that is not
// positive (the bound then never holds a lane back: plain label
// correcting over the same frontiers).
func (cfg Config) NearFar(shape Shape, asked float64) (on bool, delta float64) {
	switch cfg.NearFarMode {
	case NearFarOff:
		return false, 0
	case NearFarAuto:
		if !shape.Arcs || !shape.MeshLike || !shape.Weighted || shape.Vertices < cfg.NearFarMinVertices {
			return false, 0
		}
	}
	delta = asked
	if !(delta > 0) {
		delta = cfg.NearFarScale * shape.MeanWeight
	}
	if !(delta > 0) || math.IsNaN(delta) {
		delta = math.Inf(1)
	}
	return true, delta
}
