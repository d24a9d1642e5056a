package gpu

import "github.com/pathctl/pathctl/graph"

// bfs: BFS with atomics and predecessors after seeds/002_75570bc8eedf73c5.txt
// Algorithm 0.1, kernels/bfs.cu: int32 hop counts, weights ignored. Per
// source and vertex: the hop count, two frontier bytes and, with
// predecessors, a 64-bit (hops, predecessor) cell that one atomicMin updates.
var bfsPlan = kernelPlan{
	layout: func(_ graph.DistType, withPred bool) layout {
		l := layout{dist: 4, flags: 2}
		if withPred {
			l.aux = 8
		}
		return l
	},
	launch: func(r *Runner, k int) error {
		if r.req.WithPredecessors {
			return r.e.dev.launch("bfs_pred_i32", k, r.csr.offsets.ptr, r.csr.targets.ptr, int32(r.n), r.buf.sources.ptr, int32(k),
				r.buf.aux.ptr, r.buf.dist.ptr, r.buf.pred.ptr, r.buf.flags.ptr, r.buf.status.ptr)
		}
		return r.e.dev.launch("bfs_i32", k, r.csr.offsets.ptr, r.csr.targets.ptr, int32(r.n), r.buf.sources.ptr, int32(k),
			r.buf.dist.ptr, r.buf.flags.ptr, r.buf.status.ptr)
	},
	derivesPredecessors: never,
	status:              true,
}

// bfs-level: level-synchronous BFS after seeds/002_75570bc8eedf73c5.txt
// Algorithm 0.2, kernels/bfs_level.cu: int32 hop counts, no atomics, no
// predecessors; only the hop-count row per source.
var bfsLevelPlan = kernelPlan{
	layout: func(graph.DistType, bool) layout { return layout{dist: 4} },
	launch: func(r *Runner, k int) error {
		return r.e.dev.launch("bfs_level_i32", k, r.csr.offsets.ptr, r.csr.targets.ptr, int32(r.n), r.buf.sources.ptr, int32(k),
			r.buf.dist.ptr)
	},
	derivesPredecessors: never,
}
