package gpu

import (
	"slices"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestRunnerBlockOrder checks, without a device, when the runner orders a
// stats run's sources (graph.SourceOrderer): for the batched kernel on
// integer weights and on floats whose sums are exact, as the plan orders
// them; never for another kernel, with predecessors, without leaves and
// minimums, on fractional float weights, under blockorder=0, or for one
// block.
func TestRunnerBlockOrder(t *testing.T) {
	g := aheadGraph(t, 10, 3)
	n := g.NumVertices
	el, err := gen.RMAT(10, 8, 3, gen.WithFloatWeights(0.1, 10))
	fractional := undirectedGraph(t, el, err)
	whole := asFloat32(g)
	noDerive := defaultBatchedConfig()
	noDerive.Leaves, noDerive.Mins = false, false
	off := defaultBatchedConfig()
	off.BlockOrder = false
	for _, c := range []struct {
		name    string
		g       *graph.CSR
		req     graph.Request
		cfg     batchedConfig
		block   int
		ordered bool
	}{
		{"batched", g, graph.Request{Algorithm: Batched}, defaultBatchedConfig(), n / 3, true},
		{"batched, one block", g, graph.Request{Algorithm: Batched}, defaultBatchedConfig(), n, false},
		{"dijkstra", g, graph.Request{Algorithm: graph.Dijkstra}, defaultBatchedConfig(), n / 3, false},
		{"batched with predecessors", g, graph.Request{Algorithm: Batched, WithPredecessors: true}, defaultBatchedConfig(), n / 3, false},
		{"batched deriving nothing", g, graph.Request{Algorithm: Batched}, noDerive, n / 3, false},
		{"batched, blockorder=0", g, graph.Request{Algorithm: Batched}, off, n / 3, false},
		{"batched, fractional floats", fractional, graph.Request{Algorithm: Batched}, defaultBatchedConfig(), n / 3, false},
		{"batched, whole floats", whole, graph.Request{Algorithm: Batched}, defaultBatchedConfig(), n / 3, true},
	} {
		r := newRunner(nil, c.g, c.req, c.cfg)
		sources := allVertices(c.g.NumVertices)
		got := r.BlockOrder(sources, c.block)
		if (got != nil) != c.ordered {
			t.Errorf("%s: an order: %v, want %v", c.name, got != nil, c.ordered)
			continue
		}
		if got != nil && !slices.Equal(got, r.bk.graph.BlockOrder(sources, c.block)) {
			t.Errorf("%s: the runner's order is not the plan's", c.name)
		}
	}
}
