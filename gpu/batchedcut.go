package gpu

// The cutoff the batched kernels stop at (batched.go) and the arcs in
// rising weight that their cutoff rounds read instead of the CSR's.

import (
	"errors"
	"math"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// batchedCut is the cutoff the batched kernels stop at, as the bits of a
// distance of the runner's type: the request's cutoff (cutBits, as the
// gather reads it) when it has one and the configuration lets the kernels
// apply it (plan.Config.KernelCutoff), else the type's infinity, which
// stops nothing. The batched kernel runs on non-negative weights only,
// where a search that never passes the cutoff still finds every distance
// at most the cutoff exactly; a clip after it would change nothing, and a
// cutoff alone runs none (rowsClippedByKernel).
func (r *Runner) batchedCut() uint64 {
	if r.kernelCuts() {
		return r.narrow.cutBits()
	}
	return infinityBits(r.distType)
}

// kernelCuts reports whether the batched kernels stop at the request's
// cutoff: it has one below the distance type's infinity, and the
// configuration lets them (plan.Config.KernelCutoff). The rounds are then
// the cutoff variants (batched_cutround_*), over the arcs in rising weight
// (arcsByWeight).
func (r *Runner) kernelCuts() bool {
	return r.req.Algorithm == Batched && r.req.HasCutoff && r.batched.KernelCutoff && r.narrow.cutBits() != infinityBits(r.distType)
}

// kernelCutoff is the cutoff the batched kernels stop at (batchedCut) as
// the plan reads it: the request's, or +Inf where the kernels compute full
// rows.
func (r *Runner) kernelCutoff() float64 {
	if r.kernelCuts() {
		return r.req.Cutoff
	}
	return math.Inf(1)
}

// arcsByWeight is the device copy of the arcs of the graph the batched
// kernel walks (plan.Graph.ArcsByWeight of r.planGraph: every vertex's arcs
// in rising weight), which the cutoff rounds read instead of r.targets and
// r.weights; from is the plan graph it was made from. The offsets are
// r.offsets. The other kernels (derivations, predecessors) index arcs in
// the CSR's own order and read r.weights.
type arcsByWeight struct {
	targets, weights devBuf
	from             *plan.Graph
}

// uploadArcsByWeight sorts and uploads r.byWeight for a runner whose
// batched kernels stop at a cutoff (kernelCuts), or again where the plan
// graph changed since (on the device goroutine); else it does nothing.
// The copy costs m · (4 + the distance's size) bytes of device memory.
func (r *Runner) uploadArcsByWeight() error {
	if !r.kernelCuts() || r.byWeight.from == r.planGraph {
		return nil
	}
	if err := r.releaseArcsByWeight(); err != nil {
		return err
	}
	targets, weights := r.planGraph.ArcsByWeight()
	w, err := sliceBytes(weights)
	if err != nil {
		return err
	}
	dv := r.e.dev
	if r.byWeight.targets, err = dv.upload(asBytes(targets)); err != nil {
		return err
	}
	if r.byWeight.weights, err = dv.upload(w); err != nil {
		return err
	}
	r.byWeight.from = r.planGraph
	return nil
}

// releaseArcsByWeight frees r.byWeight (on the device goroutine).
func (r *Runner) releaseArcsByWeight() error {
	dv := r.e.dev
	r.byWeight.from = nil
	return errors.Join(dv.free(&r.byWeight.targets), dv.free(&r.byWeight.weights))
}

// roundArcs are the device arrays of arc targets and weights the round
// kernels read: r.byWeight's under a cutoff in the kernel, else the CSR's.
func (r *Runner) roundArcs() (targets, weights uint64) {
	if r.kernelCuts() {
		return r.byWeight.targets.ptr, r.byWeight.weights.ptr
	}
	return r.targets.ptr, r.weights.ptr
}

// firstRounds is the rounds runPhase launches before it first reads
// whether the last one changed anything: plan.RoundsWithin's bound under
// a cutoff in the kernel, when there is one, no round threshold holds
// vertices back (step 0) and it is at most batchedMaxRounds, else
// batchedFirstRounds. The bound lets a phase under a small cutoff end
// after one read.
func (r *Runner) firstRounds(step float64) int {
	if b := plan.RoundsWithin(r.g, r.kernelCutoff()); b > 0 && b <= batchedMaxRounds && math.IsInf(batchedThreshold(step, 1), 1) {
		return b
	}
	return batchedFirstRounds
}
