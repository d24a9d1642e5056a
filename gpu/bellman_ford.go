package gpu

import "github.com/pathctl/pathctl/graph"

// bellman-ford: label-correcting SSSP with predecessors after
// seeds/002_75570bc8eedf73c5.txt Algorithm 0.3, kernels/bellman_ford.cu.
// Negative weights are allowed; a source that reaches a negative cycle sets
// its status word and Run names a vertex on the cycle (negcycle.go). Per
// source and vertex: dist and two frontier bytes; with predecessors, 32-bit
// distances live in a 64-bit (distance, predecessor) cell updated by one CAS,
// while 64-bit distances get their predecessors from
// kernels/predecessors.cu afterwards.
var bellmanFordPlan = kernelPlan{
	layout: func(t graph.DistType, withPred bool) layout {
		l := layout{dist: t.Size(), flags: 2}
		if withPred && packsPredecessors(t) {
			l.aux = 8
		}
		return l
	},
	launch: func(r *Runner, k int) error {
		t := typeSuffix(r.distType)
		if r.req.WithPredecessors && packsPredecessors(r.distType) {
			return r.e.dev.launch("bellman_ford_pred_"+t, k, r.csr.offsets.ptr, r.csr.targets.ptr, r.csr.weights.ptr, int32(r.n),
				r.buf.sources.ptr, int32(k), r.buf.aux.ptr, r.buf.dist.ptr, r.buf.pred.ptr, r.buf.flags.ptr, r.buf.status.ptr)
		}
		return r.e.dev.launch("bellman_ford_"+t, k, r.csr.offsets.ptr, r.csr.targets.ptr, r.csr.weights.ptr, int32(r.n),
			r.buf.sources.ptr, int32(k), r.buf.dist.ptr, r.buf.flags.ptr, r.buf.status.ptr)
	},
	derivesPredecessors: func(t graph.DistType) bool { return !packsPredecessors(t) },
	status:              true,
}

// packsPredecessors reports whether distances of t fit a (distance,
// predecessor) cell of 64 bits.
func packsPredecessors(t graph.DistType) bool { return t.Size() == 4 }
