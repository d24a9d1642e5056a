package plan

import "github.com/pathctl/pathctl/graph"

// Shape is what the batched kernel's choices read of a graph: whether it
// has arcs, looks like a mesh, and its mean weight.
type Shape struct {
	Arcs, MeshLike bool
	MeanWeight     float64
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
	for k := int64(0); k < m; k++ {
		sum += g.WeightAt(k)
	}
	return Shape{Arcs: true, MeshLike: mean < 6 && float64(maxDeg) < 4*mean, MeanWeight: sum / float64(m)}
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
