package cpu

import (
	"context"
	"math"

	"github.com/pathctl/pathctl/graph"
)

// engines returns the configurations every test runs: one thread; several
// threads with sources spread; and several threads that also split each
// source (inner parallelism forced on small graphs).
func engines() map[string]*Engine {
	inner := New(WithThreads(4))
	inner.innerMinArcs = 0
	return map[string]*Engine{
		"serial":   New(WithThreads(1)),
		"threads4": New(WithThreads(4)),
		"inner4":   inner,
	}
}

// run prepares and runs one block for sources.
func run(e *Engine, g *graph.CSR, req graph.Request, sources []graph.VertexID) (*graph.Block, error) {
	ctx := context.Background()
	r, err := e.Prepare(ctx, g, req)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := graph.NewBlock(sources, g.NumVertices, r.DistType(), req.WithPredecessors)
	if err := r.Run(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// asFloat returns a block's distances as float64, +Inf where unreachable.
func asFloat(b *graph.Block) []float64 {
	switch b.Type {
	case graph.DistInt32:
		return toFloat(graph.DistOf[int32](b))
	case graph.DistInt64:
		return toFloat(graph.DistOf[int64](b))
	case graph.DistFloat32:
		return toFloat(graph.DistOf[float32](b))
	}
	return toFloat(graph.DistOf[float64](b))
}

func toFloat[D graph.Number](d []D) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		if x == graph.Infinity[D]() {
			out[i] = math.Inf(1)
		} else {
			out[i] = float64(x)
		}
	}
	return out
}

func allSources(n int) []graph.VertexID {
	s := make([]graph.VertexID, n)
	for i := range s {
		s[i] = graph.VertexID(i)
	}
	return s
}
