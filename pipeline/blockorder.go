package pipeline

import (
	"fmt"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// runOrder is the order in which a stats run of several blocks computes
// its sources, as positions in sources, where the runner chooses one
// (graph.SourceOrderer: the GPU's batched kernel derives more rows from
// blocks whose sources lie close in the graph); nil to run them as given.
// Only the stats layout is reordered: its rows, a few numbers per source,
// are held until the last block and written in the caller's order
// (statsInOrder), where a pairs or matrix result could not be.
func runOrder(runner graph.Runner, opt Options, sources []graph.VertexID, blocks []SourceBlock) []int32 {
	if opt.Layout != arrowio.LayoutStats || len(blocks) < 2 {
		return nil
	}
	o, ok := runner.(graph.SourceOrderer)
	if !ok {
		return nil
	}
	order := o.BlockOrder(sources, blockMax(blocks))
	if len(order) != len(sources) {
		return nil
	}
	return order
}

// inOrder returns sources in order.
func inOrder(sources []graph.VertexID, order []int32) []graph.VertexID {
	out := make([]graph.VertexID, len(order))
	for i, p := range order {
		out[i] = sources[p]
	}
	return out
}

// statsInOrder gathers the stats of sources computed in another order
// (order[i] is the caller's position of the i-th source run) into the
// caller's order.
type statsInOrder struct {
	order []int32
	all   *graph.Stats
}

func newStatsInOrder(sources []graph.VertexID, order []int32, t graph.DistType) *statsInOrder {
	return &statsInOrder{order: order, all: graph.NewStats(sources, t)}
}

// add places the stats of the run's sources [end-len(st.Sources), end).
func (s *statsInOrder) add(end int, st *graph.Stats) error {
	lo := end - len(st.Sources)
	if lo < 0 || end > len(s.order) || st.Type != s.all.Type {
		return fmt.Errorf("pipeline: stats of %d sources ending at %d of %d run in another order", len(st.Sources), end, len(s.order))
	}
	a := s.all
	for i, src := range st.Sources {
		j := s.order[lo+i]
		if a.Sources[j] != src {
			return fmt.Errorf("pipeline: stats of source %d where source %d was run", src, a.Sources[j])
		}
		a.SetRow(int(j), st, i)
	}
	return nil
}

// emit hands the stats over in the caller's order, a record per block.
func (s *statsInOrder) emit(blocks []SourceBlock, emit func(*graph.Stats) error) error {
	for _, b := range blocks {
		if err := emit(s.all.Slice(b.Start, b.End)); err != nil {
			return err
		}
	}
	return nil
}
