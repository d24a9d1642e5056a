package gpu

import "github.com/pathctl/pathctl/graph"

// edge: edge-parallel relaxation after seeds/003_3e4cb4863590f3fb.txt and
// seeds/004_c685ad8af4d8ff26.txt, kernels/edge.cu. It reads the graph as arcs
// (the runner uploads the source of every arc for it) and keeps only dist per
// source and vertex; predecessors come from kernels/predecessors.cu
// afterwards, with a level row of their own.
var edgePlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout { return layout{dist: t.Size()} },
	launch: func(r *Runner, k int) error {
		return r.e.dev.launch("edge_"+typeSuffix(r.distType), k, r.csr.arcSources.ptr, r.csr.targets.ptr, r.csr.weights.ptr,
			r.g.NumEdges(), int32(r.n), r.buf.sources.ptr, int32(k), r.buf.dist.ptr)
	},
	derivesPredecessors: always,
}
