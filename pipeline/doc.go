// Package pipeline joins readers, engines and writers: it chooses the engine
// and the algorithm, plans source blocks under a memory budget, runs the
// blocks (compute overlapping with output), turns blocks into Arrow record
// batches through the pairs, matrix and stats sinks, and reports progress.
//
// It reaches every engine through the interfaces of graph/seam.go, and the
// GPU through the graph.GPU the program registers (RegisterGPU; package
// gpu/devices implements it): it imports no GPU code and asserts no
// concrete runner type. The devices themselves are package gpu/devices':
// opening them early, a server's shared device and pool, the engine and
// runner over several devices (their block queue, budgets, peer sharing
// and failure handover). The pipeline holds them as graph.GPUOpening,
// graph.GPUOthers, graph.SharedGPU and graph.GPUPool values.
//
// A request is resolved once: Prepare checks Options on a Graph, looks
// its ids up and fixes its schema, columns and distance type into a
// Prepared query (after database/sql's Stmt), which every front end reads
// before the run and then runs (Prepared.Run); Verify and NewRowCheck take
// it too.
//
// Files:
//
//   - doc.go: this overview
//   - query.go: Prepare and Prepared: the request resolved once, its
//     schema, columns, sources and targets
//   - run.go: Prepared.Run: one prepared request to records
//   - options.go: Options (Query, Resources, the hooks of tests),
//     Summary, the errors of a request
//   - graph.go: LoadGraph, Graph, LoadOptions: the CSR, built on the
//     CPU or on the GPU; Close, Release, AbandonDevice
//   - engines.go: the engine choice (auto, cpu, gpu), the GPU a run
//     takes, and which devices a run over several takes (--devices)
//   - gpu.go: the registered GPU (RegisterGPU), tunings, NoGPU,
//     GPUStatus, a server's shared device and pool
//   - opening.go: OpensEarly, and the CSR built and planned beside an
//     early opening
//   - shared.go: ResidentGraphs: graphs kept on a server's shared device
//   - blocks.go: block planning under the memory budget
//     (graph.SizingOf)
//   - blockorder.go: the stats layout's sources in the engine's block
//     order
//   - schedule.go: the producer: blocks one at a time, started ahead,
//     or from device-resident blocks; several devices' queue depth
//   - pool.go: the recycled (and page-locked) blocks of the matrix
//     layout
//   - narrow.go: targets, cutoff and the k nearest: on the engine or on
//     the host
//   - rounding.go: float32 weights computed in float64, their results
//     rounded once to float32
//   - nearest.go: the nearest layout: the engine that answers it, its
//     run
//   - betweenness.go: the betweenness layouts (of vertices and of edges)
//   - betweenness_edges.go: the edge-betweenness rows from the per-arc sums
//   - betweenness_gpu.go: the vertices' betweenness on the GPU engine,
//     block by block
//   - ch.go: the ch algorithm (a contraction hierarchy), and when auto runs it
//   - chgpu.go: ch on the GPU engine: what it refuses, the hierarchy handed over, when auto picks it there
//   - chkept.go: the hierarchy a graph keeps for its later runs, built once
//   - overflow.go: refusing graphs whose distances could overflow their
//     type
//   - matrixtype.go: a matrix's value type (--matrix-type): float32
//     where every distance is exact in it, else float64, or one asked for
//   - estimate.go: Prepared.Estimate and Plan: a result's size, engine
//     and algorithm before the run (--dry-run, the free-space check)
//   - names.go: the names of graph a front end uses
//   - timings.go: the --verbose time lines
//   - verify.go: Verify: sampled sources against the oracles
//   - verify_rows.go: RowCheck: the rows of one run against the oracles
//   - bandwidth.go: MeasureDownload: the device-to-host rate
package pipeline
