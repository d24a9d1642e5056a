package gpu

import "github.com/pathctl/pathctl/graph"

// delta: delta-stepping after seeds/001_b664db479d795e64.txt,
// kernels/delta.cu, with the bucket width of chooseDelta (runner.go). Per
// source and vertex: dist and predist (D bytes each), a pending and a req
// byte; predecessors come from kernels/predecessors.cu afterwards, which
// borrows predist as its level row.
var deltaPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size(), flags: 2}
	},
	launch: func(r *Runner, k int) error {
		return r.e.dev.launch("delta_"+typeSuffix(r.distType), k, r.csr.offsets.ptr, r.csr.targets.ptr, r.csr.weights.ptr,
			int32(r.n), r.buf.sources.ptr, int32(k), r.delta, r.buf.dist.ptr, r.buf.aux.ptr, r.buf.flags.ptr)
	},
	derivesPredecessors: always,
}
