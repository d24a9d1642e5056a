package gpu

// Relabelling for the batched kernel (plan.Config.Relabel, issue 18): the
// runner renumbers the vertices of the graph it holds on the device, once,
// on its first batched block, so that the working distances of
// neighbouring vertices lie close together; the host's plan and every
// kernel of the block then work in the new numbering, and the rows are
// mapped back at the end of the block. What the block leaves in r.dist is
// in the graph's own vertex order, so the stats kernel, the narrowed
// gather and the copies to the host are unchanged, and every layout's
// output with them.
//
// Choices: the mapping back is one pass of kernels/gather.cu over the
// block's rows (column j of a row is the new vertex perm[j]) into the
// working distances' buffer, which is free once the block's kernels are
// done and as large as the result rows; the two buffers then swap roles
// (the rows land where the working distances were), so the pass costs a
// read and a write of the rows and no copy. Predecessors are not
// relabelled: predecessors.cu reads the graph beside the rows, so a runner
// asked for them keeps the graph's own numbering.

import (
	"fmt"
	"os"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// batchedEnv names the environment variable whose settings
// (plan.Config.Apply) change the batched kernel's default configuration,
// so that a benchmark compares configurations without a rebuild.
const batchedEnv = "PATHCTL_BATCHED"

// relabelState is a runner's renumbering of its graph: the host's
// permutation (perm[old] = new; nil when the graph keeps its numbering)
// and its device copy, which the mapping back reads.
type relabelState struct {
	tried bool
	perm  []int32
	dev   devBuf
}

// ensureRelabelled renumbers the runner's graph on its first batched block
// under r.batched.Relabel, when that block holds at least
// RelabelMinSources sources (on the device goroutine): the permuted CSR
// replaces the uploaded one, the permutation is uploaded, and the plans
// read the permuted graph from then on. The host's time is the plan's.
func (r *Runner) ensureRelabelled() error {
	if r.relabel.tried {
		return nil
	}
	r.relabel.tried = true
	if r.batched.Relabel == plan.RelabelNone || r.req.WithPredecessors || r.n < 2 ||
		len(r.blockSources) < r.batched.RelabelMinSources {
		return nil
	}
	began := time.Now()
	defer func() { r.host.plan += time.Since(began) }()
	// The breadth-first rank (and shape) the plans measure anyway, carried
	// over to the permuted graph's plans.
	perm := plan.Relabelling(r.g, r.batched.Relabel, r.planGraph.Rank())
	pg := plan.Permute(r.g, perm)
	dv := r.e.dev
	w, err := sliceBytes(pg.Weights)
	if err != nil {
		return err
	}
	for _, b := range []*devBuf{&r.offsets, &r.targets, &r.weights} {
		if err := dv.free(b); err != nil {
			return err
		}
	}
	if r.offsets, err = dv.upload(asBytes(pg.Offsets)); err != nil {
		return err
	}
	if r.targets, err = dv.upload(asBytes(pg.Targets)); err != nil {
		return err
	}
	if r.weights, err = dv.upload(w); err != nil {
		return err
	}
	if r.relabel.dev, err = dv.upload(asBytes(perm)); err != nil {
		return err
	}
	r.relabel.perm = perm
	r.planGraph = r.planGraph.Renumbered(pg, perm)
	return nil
}

// relabelledSources returns the block's sources in the runner's numbering.
func (r *Runner) relabelledSources() []int32 {
	if r.relabel.perm == nil {
		return r.blockSources
	}
	out := make([]int32, len(r.blockSources))
	for i, s := range r.blockSources {
		out[i] = r.relabel.perm[s]
	}
	return out
}

// queueMapBack queues, after the block's kernels, the gather of its k rows
// back into the graph's own vertex order, into r.aux.
func (r *Runner) queueMapBack(k int) error {
	if r.relabel.perm == nil {
		return nil
	}
	return r.e.dev.launchAsync("gather_"+typeSuffix(r.distType), gatherGrid, r.dist.ptr, int32(r.n), int32(k),
		r.relabel.dev.ptr, int32(r.n), infinityBits(r.distType), r.aux.ptr)
}

// finishMapBack makes the rows queueMapBack gathered the block's result
// (after the device finished them): the result slot and r.aux swap buffers
// when they are of one size, else the rows are copied back by a plain
// gather.
func (r *Runner) finishMapBack(k int) error {
	if r.relabel.perm == nil {
		return nil
	}
	for i := range r.slots {
		s := &r.slots[i]
		if s.dist.ptr == r.dist.ptr && s.dist.size == r.aux.size {
			s.dist, r.aux = r.aux, s.dist
			r.dist = s.dist
			return nil
		}
	}
	dv := r.e.dev
	if err := dv.launchAsync("gather_"+typeSuffix(r.distType), gatherGrid, r.aux.ptr, int32(r.n), int32(k),
		uint64(0), int32(r.n), infinityBits(r.distType), r.dist.ptr); err != nil {
		return err
	}
	return dv.syncCompute("gather_" + typeSuffix(r.distType))
}

// batchedEnvConfig applies the settings of PATHCTL_BATCHED, if any, to c.
func batchedEnvConfig(c *plan.Config) error {
	spec, ok := os.LookupEnv(batchedEnv)
	if !ok {
		return nil
	}
	if err := c.Apply(spec); err != nil {
		return fmt.Errorf("gpu: %s: %w", batchedEnv, err)
	}
	return nil
}
