// Package gpu is the GPU engine of pathctl: a binding of the CUDA driver API
// through purego (no cgo; the binary builds with CGO_ENABLED=0 and needs no
// CUDA toolkit), the embedded kernel image compiled from kernels/*.cu, and an
// Engine with the same seam as the CPU engine (graph.Engine, graph/seam.go).
//
// At run time the package dlopens libcuda.so.1 (then libcuda.so) and binds
// the driver functions it uses by their exported names into one table. Probe
// says what device is there, or exactly why none can be used: library not
// found (with every name tried), a missing symbol, cuInit failing with
// CUDA_ERROR_NO_DEVICE, and so on.
//
// A CUDA context is current per OS thread, so every driver call of a device
// runs on one goroutine locked to its OS thread (see device.go); the Engine
// hands it work and waits.
//
// Every seed algorithm runs one thread block per source of a block of
// sources (design.md, "Algorithms"); Batched, the kernel auto picks for
// non-negative weights, relaxes each arc for 32 sources at once instead
// (batched.go; package gpu/internal/plan plans each block of it on the
// host, without a GPU, and PlanAhead makes that plan before the engine is
// open, ahead.go). Its tuning (plan.Config) is a Tuning value the caller
// passes to PrepareTuned (tuning.go, engine.go): the package reads no environment
// variable. The kernels' design is in the header comment of each
// kernels/*.cu file. Rebuild the kernel image with kernels/build.sh after
// changing a kernel source; a test fails when the image's recorded source
// hash (kernels/kernels.sha256) no longer matches the sources. build.sh also
// writes kernels_gen.go, the table of every kernel entry point and its
// parameters: the device resolves each on its first launch, which under
// the driver's lazy module loading is what loads its code (lazyKernels;
// false resolves them all when the image loads, a *KernelError naming
// every one missing), and each launch checks its arguments against the
// kernel's parameters.
//
// Beside Run, which copies a block's distance rows back, a Runner has
// RunStats: the stats layout's reductions run on the device
// (kernels/stats.cu) and only four words per source come back. A block
// whose buffers do not fit in device memory is run as two halves, once;
// the half is remembered for later blocks, and a half that still does not
// fit gives an *OutOfMemoryError with the bytes asked and free (memory.go).
// Engine.BuildCSR builds the CSR from the edge columns on the device
// (kernels/csr.cu), equal to graph.Build's; BuildCSRResident also keeps the
// device copy for the next Prepare of that CSR.
//
// Results leave on a second, non-blocking stream while the next block
// computes (overlap.go): Runner.Start computes a block and queues its copy
// into one of two pinned stages, a copier goroutine (also locked to a
// thread with the context current) moves it into the caller's block, and
// Pending.Wait returns when it is there; Run is Start then Wait.
// ComputeResident keeps a block as large as device memory allows in a
// result slot and Resident.Start sends ranges of its rows the same way, so
// that the batched kernel's derivations (leaves, minimums over arcs, later
// phases started from the rows of the hubs and of earlier phases) see most
// of the graph in one
// block while the host takes small blocks. Built with
// the pathctl_debug tag, every kernel launch is synchronised and checked
// (debug_on.go).
//
// A Runner holds its parts, each with one job: its graph on the device
// (runnerCSR, runnercsr.go), the block's buffers and result slots
// (blockBufs, runnerbufs.go), the batched kernel's host side (its
// configuration, plan graph, plan made ahead, cutoff and scratch:
// batchedKernel, batched.go), the narrowing of its rows to targets, a
// cutoff or the k nearest (narrowing, gather.go), and the hub rows kept
// beside stats blocks (hubStore, hubs.go), shared across devices by a
// hubGroup (hubshare.go). An Engine holds its device and the graphs kept
// on it for later Prepares (graphCopies, kept.go); a device holds its
// copier (copier.go) and the host memory pinned for it (hostPins,
// hostpin.go).
//
// Files, one line each:
//
//   - ahead.go: PlanAhead, the batched kernel's host plan made before the engine is open
//   - auto.go: algorithm auto on the GPU, the kernel chosen and why
//   - bandwidth.go: the device-to-host bandwidth that pathctl bench reports as the floor
//   - batched.go: Batched, the multi-source kernel auto takes for non-negative weights; batchedKernel, a runner's host side of it
//   - batchedcut.go: the cutoff the batched kernels stop at
//   - batchedrun.go: the batched kernel's launches for one block: phases, rounds, derivations
//   - bellman_ford.go: bellman-ford, with predecessors and negative cycles
//   - betweenness.go: RunBetweenness, Brandes's passes over a block's rows on the device (kernels/brandes.cu)
//   - bfs.go: bfs, hop counts with atomics and predecessors
//   - ch.go: ch, PHAST over a contraction hierarchy swept over a block of sources (PrepareCH)
//   - copier.go: copier, a device's copier goroutine, and the copies it lands: jobs, stage moves, queueCopy
//   - csr.go: the CSR built on the device from the edge columns
//   - debug_check.go: debugCheck, the check after every launch in debug builds
//   - debug_off.go: debugChecks off, without the pathctl_debug tag
//   - debug_on.go: debugChecks on, with the pathctl_debug tag
//   - delta.go: delta, delta-stepping with buckets
//   - device.go: one device: its context, the locked goroutine that drives it, launches, buffers
//   - dijkstra.go: dijkstra, the per-source label-correcting loop
//   - doc.go: this overview
//   - driver.go: the driver binding: the table of bound symbols, statuses and errors
//   - edge.go: edge, edge-parallel relaxation
//   - engine.go: Engine, one device's engine: its methods but the graph copies' and nearest's; Prepare, Close
//   - gather.go: narrowing, the narrowed queries on the device: targets, cutoff, k nearest
//   - hostpin.go: hostPins, page-locked host memory the device copies into directly
//   - hubcopy.go: hub rows copied between devices, peer to peer where they allow it
//   - hubphase.go: the phased round of shared hub rows, each phase cut among the runners
//   - hubs.go: hubStore, the hub rows a runner keeps on the device beside stats blocks
//   - hubsend.go: hub rows sent between devices in 16 bits
//   - hubshare.go: hub rows shared among devices: each computes a share and sends it
//   - kept.go: kept CSRs, a graph's device copy that outlives its runners (serve); graphCopies, what an engine holds
//   - kernels.go: the embedded kernel image and its loading
//   - kernels_gen.go: generated by kernels/build.sh: every kernel entry point and its parameters
//   - memory.go: OutOfMemoryError and the halving of blocks that do not fit
//   - nearest.go: nearest source, one multi-source run on the device
//   - negcycle.go: the vertex on a negative cycle, named on the host
//   - overlap.go: compute and copy-out overlapped: Start, Pending, ComputeResident
//   - peer.go: several devices: enumerating them, a graph prepared from a peer's copy
//   - probe.go: Probe and DeviceInfo, what pathctl info prints
//   - runner.go: Runner, the blocks of one request on a graph uploaded to the device
//   - runnercsr.go: runnerCSR, a runner's graph on the device: uploaded, adopted or borrowed, and its arcs by weight
//   - runnerbufs.go: blockBufs, a runner's per-source device buffers; a source's cost
//   - runstats.go: RunStats, the stats layout's reductions on the device
//   - scratch.go: scratch working distances of stats blocks
//   - seam.go: which interfaces of graph/seam.go the engine's types implement
//   - trace.go: tracef, the PATHCTL_TRACE timeline's steps
//   - tuning.go: Tuning, the plan.Config and runner settings a caller passes in
package gpu
