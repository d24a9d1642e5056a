// Package cpu is the parallel CPU engine: the algorithms of design.md
// (dijkstra, delta, edge, bfs, bfs-level, bellman-ford, and ch through a
// contraction hierarchy), each a parallel
// implementation of its seed in a file of its own, and an auto kernel of the
// project's own (BFS, a heap or bucket-queue Dijkstra, or bellman-ford)
// for the fastest CPU path.
//
// The sources of a block are spread over worker goroutines, one source per
// worker at a time (the seeds' "one thread block per source"). When a block
// has fewer sources than threads and the graph is large, the seed kernels
// also split the vertex or edge loop of one source over helper goroutines,
// with the atomic CAS and MIN operations of the seeds' table (sync/atomic
// compare-and-swap loops; floats through their bit patterns), so the engine
// is race-detector clean.
//
// Distances are computed in the distance type's own arithmetic (float32 in
// float32). Every algorithm converges to the least fixpoint of
// d(v) = min over arcs (u, v) of d(u) + w, so all of them, and the serial
// oracles of internal/ref, give identical distances. Errors are prefixed
// "cpu: ".
//
// Files, one line each:
//
//   - atomics.go: CAS and MIN on distances of any type, the seeds' atomics
//   - auto.go: auto: BFS, Dial's bucket queue or a heap Dijkstra per source
//   - betweenness.go: betweenness centrality of vertices and edges, summed over source blocks
//   - brandes.go: Brandes's passes per source (BFS, bucket queue, heap) and their scratch
//   - bellmanford.go: bellman-ford, negative weights and negative cycles
//   - bfs.go: bfs, hop counts by atomic relaxation with predecessors
//   - bfslevel.go: bfs-level, level-synchronous hop counts
//   - ch.go: ch, one PHAST sweep per source through a contraction hierarchy
//   - delta.go: delta, delta-stepping
//   - dijkstra.go: dijkstra, the per-source label-correcting loop of seed 000
//   - doc.go: this overview
//   - edge.go: edge, edge-parallel relaxation
//   - engine.go: Engine and its Runner: blocks of sources spread over the workers
//   - knearest.go: the k nearest of each source, selected during the searches
//   - nearest.go: nearest source, one multi-source Dijkstra; the engine's entry points of the nearest layout
//   - nearestbf.go: nearest source with negative weights, the rounds of one multi-source Bellman-Ford
//   - nearestch.go: nearest source through a contraction hierarchy (the algorithm ch): one upward pass from every source, one sweep
//   - workspace.go: one worker's buffers, reused from source to source
package cpu
