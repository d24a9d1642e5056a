package gpu

// The cutoff the batched kernels stop at (batched.go); the arcs in rising
// weight that their cutoff rounds read instead of the CSR's are the
// runner's graph's (runnercsr.go).

import (
	"math"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// stopBits is the cutoff the batched kernels stop at, as the bits of a
// distance of the runner's type: the request's cutoff (cutBits, as the
// gather reads it) when it has one and the configuration lets the kernels
// apply it (plan.Config.KernelCutoff), else the type's infinity, which
// stops nothing. The batched kernel runs on non-negative weights only,
// where a search that never passes the cutoff still finds every distance
// at most the cutoff exactly; a clip after it would change nothing, and a
// cutoff alone runs none (rowsClippedByKernel).
func (bk *batchedKernel) stopBits() uint64 {
	if bk.cuts() {
		return bk.reqBits
	}
	return infinityBits(bk.distType)
}

// cuts reports whether the batched kernels stop at the request's
// cutoff: it has one below the distance type's infinity, and the
// configuration lets them (plan.Config.KernelCutoff). The rounds are then
// the cutoff variants (batched_cutround_*), over the arcs in rising weight
// (arcsByWeight).
func (bk *batchedKernel) cuts() bool {
	return bk.req.Algorithm == Batched && bk.req.HasCutoff && bk.cfg.KernelCutoff && bk.reqBits != infinityBits(bk.distType)
}

// cutoff is the cutoff the batched kernels stop at (batchedKernel.stopBits) as
// the plan reads it: the request's, or +Inf where the kernels compute full
// rows.
func (bk *batchedKernel) cutoff() float64 {
	if bk.cuts() {
		return bk.req.Cutoff
	}
	return math.Inf(1)
}

// firstRounds is the rounds runPhase launches before it first reads
// whether the last one changed anything: plan.RoundsWithin's bound under
// a cutoff in the kernel, when there is one, no round threshold holds
// vertices back (step 0) and it is at most batchedMaxRounds, else
// batchedFirstRounds. The bound lets a phase under a small cutoff end
// after one read.
func (bk *batchedKernel) firstRounds(step float64) int {
	if b := plan.RoundsWithin(bk.g, bk.cutoff()); b > 0 && b <= batchedMaxRounds && math.IsInf(batchedThreshold(step, 1), 1) {
		return b
	}
	return batchedFirstRounds
}
