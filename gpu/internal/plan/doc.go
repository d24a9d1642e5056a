// Package plan is the host side of the GPU engine's batched kernel
// (gpu/kernels/batched.cu): for a block of sources it decides which ones
// the kernel computes, in which order and in how many phases, and how the
// others' rows are derived afterwards. It reads a *graph.CSR and needs no
// GPU, so its tests run everywhere.
//
// A Block's plan, in the order the device consumes it:
//
//   - Leaves: on undirected graphs a vertex l with one neighbour p
//     (itself of degree 2 or more) is left out of the kernel; every path
//     from l starts with its arc (l, p, w), so d(l, t) = w + d(p, t) for
//     t ≠ l and its row is derived from p's (Block.Derive).
//   - Minimums: a source s all of whose arcs (s, p, w)
//     reach sources the kernel computes is left out too: d(s, t) = min over
//     the arcs of w + d(p, t) (Block.Mins over Block.MinArcs). The sources
//     left out form an independent set, chosen greedily by rising degree.
//   - Phases: on graphs with hubs the kernel sources of highest degree run
//     first, alone; each later phase starts its sources from the rows of
//     the phases before it (Block.Cuts, Block.Seeds) and expands only where
//     a shorter path exists.
//   - Order: inside each phase the sources are grouped into warps of
//     BatchWidth by breadth-first clusters, so that a group's sources share
//     most of their shortest-path trees.
//   - Resident rows: rows kept on the device past the block's own
//     (Graph.StartResident, Resident; the GPU runner's hub rows,
//     Config.HubRows) serve the leaves, minimums and seeds as the kernel's
//     rows do, and a block of one phase starts every kernel source from
//     them (Block.SeedFirst).
//   - Cutoff: a kernel that relaxes nothing past a cutoff (Graph.StartWithin)
//     plans without minimums and phases where the cutoff's balls are small,
//     and RoundsWithin bounds its rounds (cutoff.go).
//
// The reductions hold for integer distances, and for float ones only where
// every sum is exact (ExactSumsOf, Config.ExactFloats): elsewhere
// w + d(p, t) rounds differently from the kernel's sum along the path from
// the source, and the rows would differ from Dijkstra's in the last bits.
//
// Block.Pack lays the plan out as the words the device reads. Config holds
// every tuning choice (DefaultConfig is what the engine runs); the values
// that never change are constants, each naming the docs/benchmarks-history.md section
// that measured it.
package plan
