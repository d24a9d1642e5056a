package gpu

import "github.com/pathctl/pathctl/graph"

// BlockOrder makes the runner a graph.SourceOrderer: the batched kernel's
// blocks derive rows only from rows of the same block, and
// plan.Graph.BlockOrder chooses which sources share one. It is nil where
// the runner derives no row (another kernel than the batched one,
// predecessors, or float distances whose derived rows would not be
// exact) and under plan.Config.BlockOrder off (PATHCTL_BATCHED=blockorder=0).
func (r *Runner) BlockOrder(sources []graph.VertexID, block int) []int32 {
	c := r.batched.Config
	if !c.BlockOrder || r.req.Algorithm != Batched || r.req.WithPredecessors || !(c.Leaves || c.Mins) || !r.derivesExactly() {
		return nil
	}
	return r.planGraph.BlockOrder(sources, block)
}
