package gpu

import (
	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// BlockOrder makes the runner a graph.SourceOrderer: the batched kernel's
// blocks derive rows only from rows of the same block, and
// plan.Graph.BlockOrder chooses which sources share one. It is nil where
// the runner derives no row (another kernel than the batched one,
// predecessors, or float distances whose derived rows would not be
// exact) and under plan.Config.BlockOrder off (--tune blockorder=0).
// Where the blocks keep hub rows (hubs.go), the hubs among the sources
// come first, in the hub rows' order (plan.HubsFirst).
func (r *Runner) BlockOrder(sources []graph.VertexID, block int) []int32 {
	c := r.bk.cfg.Config
	if !c.BlockOrder || r.req.Algorithm != Batched || r.req.WithPredecessors || !(c.Leaves || c.Mins) || !derivesExactly(r.distType, r.bk.cfg, r.bk.graph) {
		return nil
	}
	order := r.bk.graph.BlockOrder(sources, block)
	if h := r.hubs.forBlock(block); h > 0 && order != nil {
		if hubs, err := r.hubs.vertices(h); err == nil { // else the block's plan says why
			order = plan.HubsFirst(order, sources, hubs)
		}
	}
	return order
}

// HubOrder is the sources' own order with the hubs among them spread over
// its blocks of block sources, each block's share first and in the hub
// rows' order (plan.HubsSpread), where such blocks keep hub rows
// (hubs.go); nil otherwise. On several devices, whose blocks keep the
// given order, every block then copies its hubs' rows in one piece and
// derives about as many rows as the others.
func (r *Runner) HubOrder(sources []graph.VertexID, block int) []int32 {
	h := r.hubs.forBlock(block)
	if h == 0 || block >= len(sources) {
		return nil
	}
	hubs, err := r.hubs.vertices(h)
	if err != nil {
		return nil
	}
	given := make([]int32, len(sources))
	for i := range given {
		given[i] = int32(i)
	}
	return plan.HubsSpread(given, sources, hubs, block)
}
