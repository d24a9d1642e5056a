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

// Runner runs the blocks of one request on one loaded graph.
type Runner interface {
	// DistType is the element type of the blocks Run fills: the graph's
	// type, or int32 hop counts for bfs and bfs-level.
	DistType() graph.DistType
	// BytesPerSource is the working memory one more source in a block costs,
	// output included, for the block planner.
	BytesPerSource() int64
	// Run fills out (allocated by the caller with graph.NewBlock for
	// out.Sources, DistType and req.WithPredecessors) with the distances from
	// every source of out.Sources. It returns ctx.Err() when cancelled, a
	// *graph.NegativeCycleError when a negative cycle is reachable.
	Run(ctx context.Context, out *graph.Block) error
	// Close releases what Prepare took.
	Close() error
}
