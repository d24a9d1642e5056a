package pipeline

// The algorithm ch on the GPU engine (--engine gpu --algo ch): the engine
// sweeps a block of sources at once over a hierarchy built on the host
// (package gpu, ch.go), so the pipeline hands it the index's, or the one
// the graph keeps (chkept.go), through chPreparer. The GPU engine answers
// ch for int32 distances, without paths; other requests of ch on the GPU
// are refused with one line naming what to use instead.

import (
	"context"
	"fmt"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// chPreparer is an engine that runs the algorithm ch over a hierarchy it
// is given (the GPU engine, gpu/devices' Engine).
type chPreparer interface {
	PrepareCH(ctx context.Context, csr *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (graph.Runner, error)
}

// checkCHOnGPU refuses what the GPU engine's ch does not answer on g.
func checkCHOnGPU(g *Graph, opt Options) error {
	if opt.Engine != "gpu" {
		return nil
	}
	if t := g.CSR.Type; t != graph.DistInt32 {
		return fmt.Errorf("%w: the algorithm ch runs on the GPU engine for int32 distances only so far, and this graph's are %s; use --engine cpu", ErrInvalid, t)
	}
	if opt.WithPaths {
		return fmt.Errorf("%w: the algorithm ch unpacks paths on the CPU engine only; use --engine cpu", ErrInvalid)
	}
	return nil
}
