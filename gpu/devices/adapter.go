package devices

// The GPU engine's adapter to the engine seam, and its side of the runs
// over several devices: the graph copied peer to peer (PrepareFrom), the
// hub rows shared (shareHubRows).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// Engine adapts *gpu.Engine to the engine seam (graph/seam.go): its
// Prepare returns the concrete *gpu.Runner, which gpuRunner wraps, tuned
// by Tune (the run's tuning). The GPU engine resolves auto itself
// (gpu/auto.go).
type Engine struct {
	*gpu.Engine
	Tune gpu.Tuning
}

// Tuned is eng with its runs tuned by tune where eng is a GPU engine
// (Engine), else eng.
func Tuned(eng graph.Engine, tune gpu.Tuning) graph.Engine {
	if g, ok := eng.(Engine); ok {
		g.Tune = tune
		return g
	}
	return eng
}

// The GPU engine's part of the seam, as adapted here.
var (
	_ graph.Engine            = Engine{}
	_ graph.Budgeter          = Engine{}
	_ graph.NearestFinder     = Engine{}
	_ graph.NearestDescriber  = Engine{}
	_ io.Closer               = Engine{}
	_ graph.Describer         = gpuRunner{}
	_ graph.StatsRunner       = gpuRunner{}
	_ graph.StatsSizer        = gpuRunner{}
	_ graph.AsyncRunner       = gpuRunner{}
	_ graph.ResidentRunner    = gpuRunner{}
	_ graph.HostPinner        = gpuRunner{}
	_ graph.DeviceTimer       = gpuRunner{}
	_ graph.NarrowRunner      = gpuRunner{}
	_ graph.SourceOrderer     = gpuRunner{}
	_ graph.NearestDecliner   = gpuRunner{}
	_ graph.BetweennessRunner = gpuRunner{}
	_ graph.ResidentBlock     = residentBlock{}
	_ graph.DeviceTimer       = residentBlock{}
)

func (g Engine) Prepare(ctx context.Context, csr *graph.CSR, req graph.Request) (graph.Runner, error) {
	r, err := g.Engine.PrepareTuned(ctx, csr, req, g.Tune)
	if err != nil {
		return nil, err
	}
	return gpuRunner{r}, nil
}

// DefaultBudget is 80 % of the device's free memory (budgetOfFree), and
// at most maxHostBudget: every block in flight is also held in host
// memory.
func (g Engine) DefaultBudget() int64 {
	free, err := g.FreeMemory()
	if err != nil || free <= 0 {
		return graph.DefaultMemBudget
	}
	return min(budgetOfFree(free), maxHostBudget)
}

// DeviceBudget is 80 % of the device's free memory (budgetOfFree): the
// budget of runs that keep their blocks on the device (the stats layout).
// The planner reads it after Prepare, whose graph buffers (the CSR, and the
// arcs in rising weight of a cutoff in the batched kernel) are then out of
// it.
func (g Engine) DeviceBudget() int64 {
	free, err := g.FreeMemory()
	if err != nil || free <= 0 {
		return graph.DefaultMemBudget
	}
	return budgetOfFree(free)
}

// NearestDescribed answers the nearest layout on the device
// (gpu.Engine.NearestInfo) and describes the run for the summary
// (graph.NearestDescriber).
func (g Engine) NearestDescribed(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, string, error) {
	began := time.Now()
	res, info, err := g.NearestInfo(ctx, csr, sources, req)
	if err != nil {
		return nil, "", err
	}
	method := fmt.Sprintf("nearest source: one multi-source near-far run on the device (delta %g, %d rounds, %s on the device, %s in all)",
		info.Delta, info.Rounds, info.Kernel.Round(time.Microsecond), time.Since(began).Round(time.Microsecond))
	return res, method, nil
}

// budgetGranule is the step of the budgets taken from a device's free
// memory: devices alike, or one device in two runs, whose free memory
// differs by a few megabytes (a peer mapping, another context), then plan
// the same blocks, and write files with the same record batches.
const budgetGranule = 256 << 20

// budgetOfFree is 80 % of free bytes, rounded down to a budgetGranule
// where that leaves at least four.
func budgetOfFree(free int64) int64 {
	b := free / 5 * 4
	if b >= 4*budgetGranule {
		b -= b % budgetGranule
	}
	return b
}

// maxHostBudget bounds the host memory of the blocks in flight on a GPU run.
const maxHostBudget = 8 << 30

// gpuRunner adapts *gpu.Runner, whose Start and ComputeResident return
// concrete types, to graph.AsyncRunner and graph.ResidentRunner.
type gpuRunner struct{ *gpu.Runner }

// NearestDeclined says why the device did not select the k nearest
// (graph.NearestDecliner): it selects K up to gpu.MaxDeviceNearest,
// without paths or predecessors.
func (r gpuRunner) NearestDeclined() string {
	return fmt.Sprintf("the engine selects K up to %d, without paths or predecessors", gpu.MaxDeviceNearest)
}

// BetweennessSupported, BetweennessBytes, RunBetweenness and
// RunEdgeBetweenness make the GPU runner a graph.BetweennessRunner (gpu/betweenness.go).
func (r gpuRunner) BetweennessSupported() error { return gpu.BetweennessSupported(r.Runner) }

func (r gpuRunner) BetweennessBytes(edges bool) (fixed, perSource int64) {
	return gpu.BetweennessBytes(r.Runner, edges)
}

func (r gpuRunner) RunBetweenness(ctx context.Context, sources []graph.VertexID, endpoints bool) ([]float64, error) {
	return gpu.RunBetweenness(ctx, r.Runner, sources, endpoints)
}

func (r gpuRunner) RunEdgeBetweenness(ctx context.Context, sources []graph.VertexID) ([]float64, error) {
	return gpu.RunEdgeBetweenness(ctx, r.Runner, sources)
}

// PrepareCH prepares the algorithm ch over h (gpu.Engine.PrepareCH) as a
// graph.Runner.
func (g Engine) PrepareCH(ctx context.Context, csr *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (graph.Runner, error) {
	r, err := g.Engine.PrepareCH(ctx, csr, req, h)
	if err != nil {
		return nil, err
	}
	return gpuRunner{r}, nil
}

// Start makes the GPU runner an AsyncRunner: its *gpu.Pending is the
// Waiter (and no nil *gpu.Pending hides in a non-nil Waiter on error).
func (r gpuRunner) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	p, err := r.Runner.Start(ctx, out)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ComputeResident makes the GPU runner a ResidentRunner: a device block
// that does not fit wraps graph.ErrResidentTooLarge.
func (r gpuRunner) ComputeResident(ctx context.Context, sources []graph.VertexID) (graph.ResidentBlock, error) {
	res, err := r.Runner.ComputeResident(ctx, sources)
	var oom *gpu.OutOfMemoryError
	if errors.As(err, &oom) {
		return nil, fmt.Errorf("%w: %w", graph.ErrResidentTooLarge, err)
	}
	if err != nil {
		return nil, err
	}
	return residentBlock{res}, nil
}

// residentBlock adapts *gpu.Resident, whose Start returns *gpu.Pending.
type residentBlock struct{ *gpu.Resident }

func (r residentBlock) Start(ctx context.Context, lo, hi int, out *graph.Block) (graph.Waiter, error) {
	p, err := r.Resident.Start(ctx, lo, hi, out)
	if err != nil {
		return nil, err
	}
	return p, nil
}

var _ csrCopier = Engine{}

// PrepareFrom prepares csr with the graph copied from the device of from
// where from is a GPU runner of csr (peer to peer where the devices allow
// it), else from host memory.
func (g Engine) PrepareFrom(ctx context.Context, csr *graph.CSR, req graph.Request, from graph.Runner) (graph.Runner, error) {
	src, _ := from.(gpuRunner)
	r, err := g.Engine.PrepareFrom(ctx, csr, req, src.Runner, g.Tune)
	if err != nil {
		return nil, err
	}
	return gpuRunner{r}, nil
}

// shareHubRows lets the GPU runners among the workers, one graph on
// several devices, compute each a part of their hub rows and copy the
// others' (gpu.ShareHubRows).
func shareHubRows(workers []*deviceWorker) {
	var rs []*gpu.Runner
	for _, w := range workers {
		if g, ok := w.runner.(gpuRunner); ok {
			rs = append(rs, g.Runner)
		}
	}
	gpu.ShareHubRows(rs)
}
