package gpu

import "github.com/pathctl/pathctl/graph"

// dijkstra: the per-source label-correcting loop of
// seeds/000_2d17e3b94fc93de9.txt, kernels/dijkstra.cu. Per source and vertex
// it keeps dist and predist (D bytes each) and one changed byte; predecessors
// come from kernels/predecessors.cu afterwards, which borrows predist as its
// level row.
var dijkstraPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size(), flags: 1}
	},
	launch: func(r *Runner, k int) error {
		return r.e.dev.launch("dijkstra_"+typeSuffix(r.distType), k, r.csr.offsets.ptr, r.csr.targets.ptr, r.csr.weights.ptr,
			int32(r.n), r.buf.sources.ptr, int32(k), r.buf.dist.ptr, r.buf.aux.ptr, r.buf.flags.ptr)
	},
	derivesPredecessors: always,
}
