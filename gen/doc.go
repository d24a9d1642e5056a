// Package gen makes synthetic graphs for tests and benchmarks: R-MAT
// (Kronecker) graphs with the Graph500 parameters, 2-D grids that look like
// road networks, and uniform random (Erdős–Rényi-style) graphs.
//
// Every generator is deterministic: the same arguments and seed give the
// same EdgeList, byte for byte, whatever GOMAXPROCS is. Work is cut into
// fixed chunks of edges, and each chunk draws from its own random stream,
// a splitmix64 sequence whose starting state is a hash of (seed, purpose,
// chunk index). The endpoints and the weights use different purposes, so
// the shape of a graph does not depend on the weight options.
//
// The package returns plain columns (int64 vertex ids in [0, NumVertices),
// int64 or float64 weights); turning them into Arrow, Parquet or CSV is the
// job of the caller (the CLI's `pathctl gen`). GraphEdges converts an
// EdgeList to the graph package's dense edge list for in-process use.
package gen
