package pipeline

import (
	"context"

	"github.com/pathctl/pathctl/graph"
)

// Engine computes shortest paths on one kind of hardware. The CPU engine
// (package cpu) always works; the GPU engine (package gpu) works where a
// driver and a device are found.
type Engine interface {
	// Name is "cpu" or "gpu".
	Name() string
	// Prepare loads g (uploads it, for a device) for runs of req and returns
	// a Runner that computes one block of sources at a time. The pipeline
	// checks negative weights against req.Algorithm before calling Prepare.
	Prepare(ctx context.Context, g *graph.CSR, req graph.Request) (Runner, error)
}

// Runner runs the blocks of one request on one loaded graph; it is
// graph.Runner (declared there so that engines need not import pipeline).
type Runner = graph.Runner
