// Package devices manages the GPUs of one process, and adapts the GPU
// engine (package gpu) to the engine seam (graph/seam.go).
//
// A Group is the engine of a run over several devices: one engine per
// device prepares the graph (the first from the host, the others peer to
// peer where the devices allow it), and the runner they make feeds them
// from one queue of source blocks, which each device takes whole, cut
// only to its own memory budget or in the last round. A device that fails
// gives its block back and takes no more; the others finish the run. The
// pipeline (package pipeline) drives the runner through graph.DeviceSet
// and the group through graph.DeviceGroup, knowing neither type.
//
// Beside the runs, the package holds the devices' lifetimes: an Opening
// begun beside the read (or at process start) and the Others of a run
// over several, which LoadGraph takes; the Early devices of a command,
// released in one call; and a server's Shared device and Pool of devices.
// The pipeline holds them through graph.GPUOpening, graph.GPUOthers,
// graph.SharedGPU and graph.GPUPool; the program registers the Driver
// (pipeline.RegisterGPU).
//
// Files:
//
//   - doc.go: this overview
//   - adapter.go: Engine: *gpu.Engine as a graph.Engine (budgets from free memory, the runner's and device blocks' adapters, the nearest layout's description), PrepareFrom, shared hub rows
//   - driver.go: Driver and Device: package gpu as the pipeline's graph.GPU and graph.GPUDevice; Opens; Statuses for pathctl info
//   - group.go: OpenGroup, Group, Slot, Config: the engine over several devices, opened side by side, per-device budgets and chunk sizes
//   - runner.go: the runner over several devices (graph.DeviceSet): its workers, whole blocks, cuts of the last round, the order
//   - queue.go: the jobs, their chunks and the queue the devices share: cutting to each device's budget, failure handover
//   - resident.go: device blocks over several devices (graph.ResidentRunner)
//   - betweenness.go: Brandes's passes over several devices (graph.BetweennessRunner), the chunks' vectors added in source order
//   - opening.go: Opening, Others and Early: devices opened before the graph needs them
//   - shared.go: Shared and Pool: a server's one device, and its devices one run each; Slots
package devices
