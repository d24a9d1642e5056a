package gpu

import "github.com/pathctl/pathctl/graph"

// What of the engine seam (graph/seam.go) the GPU engine's types implement
// as they are. Engine.Prepare, Runner.Start and Runner.ComputeResident
// return concrete types, so graph.Engine, graph.AsyncRunner and
// graph.ResidentRunner come from package pipeline's adapter (pipeline/gpu.go).
var (
	_ graph.Runner      = (*Runner)(nil)
	_ graph.Describer   = (*Runner)(nil)
	_ graph.StatsRunner = (*Runner)(nil)
	_ graph.HostPinner  = (*Runner)(nil)
	_ graph.DeviceTimer = (*Runner)(nil)
	_ graph.Waiter      = (*Pending)(nil)
	_ graph.DeviceTimer = (*Pending)(nil)
	_ graph.CopyTimer   = (*Pending)(nil)
	_ graph.DeviceTimer = (*Resident)(nil)
)

// The nearest layout's one multi-source run on the device (nearest.go).
var _ graph.NearestFinder = (*Engine)(nil)
