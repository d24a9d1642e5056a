package gpu

import (
	"errors"

	"github.com/pathctl/pathctl/graph"
)

// Batched is the engine's own kernel for non-negative weights: multi-source
// label correcting over groups of BatchWidth sources, kernels/batched.cu.
// It is not one of the user-facing algorithm names (graph.ParseAlgorithm
// refuses it): package pipeline asks for it when it resolves auto, and
// Prepare accepts it like the seed algorithms. Negative weights are refused
// as for dijkstra; predecessors come from kernels/predecessors.cu.
const Batched graph.Algorithm = "batched"

// BatchWidth is the number of sources one warp relaxes together: a group of
// sources shares its frontier bitmasks, one 32-bit word per vertex.
const BatchWidth = 32

// BatchedDescription says what auto runs when it picks Batched.
const BatchedDescription = "batched label-correcting (B=32 sources per warp-row)"

// batchedPlan: per source and vertex, the result row (D bytes) and the
// group-major working distances (D bytes, in aux). The frontier masks (per
// group of 32 sources: 2·n words plus 2·ceil(n/1024) summary words, 1/4
// byte per source and vertex and a little) live in the result buffer while
// the groups run, since the result is written only by the transpose at the
// end; blocks of fewer than 3 sources borrow a small temporary buffer.
var batchedPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size()}
	},
	launch:              launchBatched,
	derivesPredecessors: always,
}

// batchedFrontierBytes is the size of the mask storage for k sources over n
// vertices (see batched_* in kernels/batched.cu).
func batchedFrontierBytes(n, k int) int64 {
	groups := int64((k + BatchWidth - 1) / BatchWidth)
	sumWords := int64((n + 1023) >> 10)
	return 4 * groups * (2*int64(n) + 2*sumWords)
}

// batchedTransposeGrid caps the thread blocks of the transpose; they stride
// over the tiles.
const batchedTransposeGrid = 1 << 16

func launchBatched(r *Runner, k int) error {
	dv := r.e.dev
	n := r.n
	need := batchedFrontierBytes(n, k)
	frontier := r.dist
	var temp devBuf
	if frontier.size < need {
		var err error
		if temp, err = dv.alloc(need); err != nil {
			return err
		}
		frontier = temp
	}
	groups := (k + BatchWidth - 1) / BatchWidth
	err := dv.launch("batched_"+typeSuffix(r.distType), groups, r.offsets.ptr, r.targets.ptr, r.weights.ptr,
		int32(n), r.sources.ptr, int32(k), r.aux.ptr, frontier.ptr)
	if err == nil {
		// Runner.launch adds the last launch's time; add this one here.
		r.kernelTime += dv.lastKernel
		tiles := int64((n+31)/32) * int64(groups)
		suffix := "b32"
		if r.distType.Size() == 8 {
			suffix = "b64"
		}
		err = dv.launch("batched_transpose_"+suffix, int(min(tiles, batchedTransposeGrid)),
			r.aux.ptr, int32(n), int32(k), r.dist.ptr)
	}
	if temp.ptr != 0 {
		err = errors.Join(err, dv.free(&temp))
	}
	return err
}
