// Package devices runs one request on several GPUs of one process, and
// adapts the GPU engine (package gpu) to the engine seam (graph/seam.go).
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
// Files:
//
//	adapter.go  Engine: *gpu.Engine as a graph.Engine (budgets from free
//	            memory, the runner's and device blocks' adapters, the
//	            nearest layout's description), PrepareFrom, shared hub rows
//	group.go    Group, Slot, Config: the engine over several devices,
//	            per-device budgets and chunk sizes
//	driver.go   Driver and Device: package gpu as the pipeline's graph.GPU
//	            and graph.GPUDevice (registered with pipeline.RegisterGPU)
//	runner.go   the runner over several devices (graph.DeviceSet): its
//	            workers, whole blocks, cuts of the last round, the order
//	queue.go    the jobs, their chunks and the queue the devices share:
//	            cutting to each device's budget, failure handover
//	resident.go device blocks over several devices (graph.ResidentRunner)
package devices
