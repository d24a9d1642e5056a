package graph

import "context"

// Runner runs the blocks of one request on one loaded graph. It is declared
// here, beside Block, so that engines (cpu, gpu) can return it without
// importing the pipeline that imports them; pipeline.Runner is this type.
type Runner interface {
	// DistType is the element type of the blocks Run fills: the graph's
	// type, or int32 hop counts for bfs and bfs-level.
	DistType() DistType
	// BytesPerSource is the working memory one more source in a block costs,
	// output included, for the block planner.
	BytesPerSource() int64
	// Run fills out (allocated by the caller with NewBlock for out.Sources,
	// DistType and req.WithPredecessors) with the distances from every
	// source of out.Sources. It returns ctx.Err() when cancelled, a
	// *NegativeCycleError when a negative cycle is reachable.
	Run(ctx context.Context, out *Block) error
	// Close releases what Prepare took.
	Close() error
}
