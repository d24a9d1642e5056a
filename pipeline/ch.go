package pipeline

// The ch algorithm (a contraction hierarchy, package hierarchy) runs on
// the CPU engine only so far: normalize routes it there, refuses what it
// cannot answer with one line each, and prepare hands the engine the
// hierarchy of an index file (Resources.Index) instead of letting it build
// one.

import (
	"context"
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// routeCH checks a request on g of --algo ch (or of auto with an index,
// which becomes ch) and puts it on the CPU engine; it leaves other
// requests as they are.
func routeCH(g *Graph, opt Options) (Options, error) {
	if opt.Index != nil && opt.Algorithm == graph.Auto {
		opt.Algorithm = graph.CH
	}
	if opt.Algorithm != graph.CH {
		if opt.Index != nil {
			return opt, fmt.Errorf("%w: an index serves the algorithm ch only, not %s", ErrInvalid, opt.Algorithm)
		}
		return opt, nil
	}
	if err := RouteCH(&opt); err != nil {
		return opt, err
	}
	if opt.Index != nil && opt.Index.NumVertices() != g.CSR.NumVertices {
		return opt, fmt.Errorf("%w: an index of %d vertices for a graph of %d", ErrInvalid, opt.Index.NumVertices(), g.CSR.NumVertices)
	}
	if t := g.CSR.Type; opt.Index == nil && (t == graph.DistFloat32 || t == graph.DistFloat64) && !hierarchy.Exact(g.CSR) && !g.CSR.HasNegative() {
		return opt, fmt.Errorf("%w: the algorithm ch is exact only for integer weights and float weights whose path sums float64 holds; "+
			"these float weights' sums round: use --algo dijkstra", ErrInvalid)
	}
	return opt, nil
}

// RouteCH puts a request of the algorithm ch on the CPU engine (from
// auto, said on opt.Log) and refuses what ch cannot answer whatever the
// graph: the GPU engine, predecessors and paths. Front ends call it
// before loading the graph, so that no GPU is opened for such a run;
// every run of ch passes through it.
func RouteCH(opt *Options) error {
	switch opt.Engine {
	case "gpu":
		return fmt.Errorf("%w: the algorithm ch runs on the CPU engine only so far; use --engine cpu (or auto)", ErrInvalid)
	case "auto", "":
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "pathctl: the algorithm ch runs on the CPU engine\n")
		}
		opt.Engine = "cpu"
	}
	if opt.WithPredecessors || opt.WithPaths {
		return fmt.Errorf("%w: the algorithm ch keeps no predecessors, so no predecessor or path column; use --algo dijkstra", ErrInvalid)
	}
	return nil
}

// prepare prepares the run's runner on eng. For ch it gives the CPU
// engine the index's hierarchy (its Reverse for a reversed run, whose
// graph is the transposed one), and makes a graph the hierarchy refuses
// an invalid request.
func prepare(ctx context.Context, eng graph.Engine, csr *graph.CSR, req graph.Request, opt Options) (graph.Runner, error) {
	if req.Algorithm != graph.CH {
		return eng.Prepare(ctx, csr, req)
	}
	if opt.Index != nil {
		if eng.Name() != "cpu" {
			return nil, fmt.Errorf("%w: the algorithm ch runs on the CPU engine only so far", ErrInvalid)
		}
		h := opt.Index
		if opt.Reverse {
			h = h.Reverse()
		}
		eng = cpu.New(cpu.WithThreads(opt.Threads), cpu.WithHierarchy(h))
	}
	r, err := eng.Prepare(ctx, csr, req)
	if errors.Is(err, hierarchy.ErrInexact) || errors.Is(err, hierarchy.ErrTooManyShortcuts) {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return r, err
}
