package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// openGPU opens the GPU engine on the first device, its runs tuned by
// tune. The caller closes it.
func openGPU(tune gpu.Tuning) (graph.Engine, error) {
	e, err := newGPU()
	if err != nil {
		return nil, err
	}
	return gpuEngine{e, tune}, nil
}

// gpuTuning is the GPU engine's tuning of spec (Options.Tune); a bad
// spec is an ErrInvalid naming the setting.
func gpuTuning(spec string) (gpu.Tuning, error) {
	t, err := gpu.ParseTuning(spec)
	if err != nil {
		return t, fmt.Errorf("%w: tune: %w", ErrInvalid, err)
	}
	return t, nil
}

// CheckTune reports whether spec is a valid Options.Tune: comma-separated
// KEY=VALUE settings of the GPU engine's tuning (docs/engine.md lists the
// keys). The error names the setting that is not.
func CheckTune(spec string) error {
	_, err := gpu.ParseTuning(spec)
	return err
}

// tuned is eng with its runs tuned by tune where eng is a GPU engine
// (gpuEngine), else eng.
func tuned(eng graph.Engine, tune gpu.Tuning) graph.Engine {
	if g, ok := eng.(gpuEngine); ok {
		g.tune = tune
		return g
	}
	return eng
}

// gpuOpens counts the GPU engines opened, so that tests can check that a
// graph built on the GPU and its runs share one context.
var gpuOpens atomic.Int64

// newGPU opens the GPU engine on the first device, counting it.
func newGPU() (*gpu.Engine, error) {
	gpuOpens.Add(1)
	return gpu.New()
}

// NoGPU reports whether err says that this machine has no GPU to use at
// all (no driver library, or no device), rather than that a GPU failed.
func NoGPU(err error) bool {
	var le *gpu.LibraryError
	return errors.As(err, &le) || errors.Is(err, gpu.ErrNoDevice)
}

// GPUStatus reports whether the GPU engine can run here, with the device.
func GPUStatus() EngineStatus {
	info, err := gpu.Probe()
	if err != nil {
		return EngineStatus{Name: "gpu", Reason: err.Error()}
	}
	return EngineStatus{Name: "gpu", Available: true, Device: info}
}

// gpuEngine adapts *gpu.Engine to the engine seam (graph/seam.go): its
// Prepare returns the concrete *gpu.Runner, which gpuRunner wraps, tuned
// by tune (Options.Tune). The GPU engine resolves auto itself
// (gpu/auto.go).
type gpuEngine struct {
	*gpu.Engine
	tune gpu.Tuning
}

// The GPU engine's part of the seam, as adapted here.
var (
	_ graph.Engine           = gpuEngine{}
	_ graph.Budgeter         = gpuEngine{}
	_ graph.NearestFinder    = gpuEngine{}
	_ graph.NearestDescriber = gpuEngine{}
	_ io.Closer              = gpuEngine{}
	_ graph.Describer        = gpuRunner{}
	_ graph.StatsRunner      = gpuRunner{}
	_ graph.StatsSizer       = gpuRunner{}
	_ graph.AsyncRunner      = gpuRunner{}
	_ graph.ResidentRunner   = gpuRunner{}
	_ graph.HostPinner       = gpuRunner{}
	_ graph.DeviceTimer      = gpuRunner{}
	_ graph.NarrowRunner     = gpuRunner{}
	_ graph.SourceOrderer    = gpuRunner{}
	_ graph.ResidentBlock    = residentBlock{}
	_ graph.DeviceTimer      = residentBlock{}
)

func (g gpuEngine) Prepare(ctx context.Context, csr *graph.CSR, req graph.Request) (graph.Runner, error) {
	r, err := g.Engine.PrepareTuned(ctx, csr, req, g.tune)
	if err != nil {
		return nil, err
	}
	return gpuRunner{r}, nil
}

// DefaultBudget is 80 % of the device's free memory (budgetOfFree), and
// at most maxHostBudget: every block in flight is also held in host
// memory.
func (g gpuEngine) DefaultBudget() int64 {
	free, err := g.FreeMemory()
	if err != nil || free <= 0 {
		return DefaultMemBudget
	}
	return min(budgetOfFree(free), maxHostBudget)
}

// DeviceBudget is 80 % of the device's free memory (budgetOfFree): the
// budget of runs that keep their blocks on the device (the stats layout).
// The planner reads it after Prepare, whose graph buffers (the CSR, and the
// arcs in rising weight of a cutoff in the batched kernel) are then out of
// it.
func (g gpuEngine) DeviceBudget() int64 {
	free, err := g.FreeMemory()
	if err != nil || free <= 0 {
		return DefaultMemBudget
	}
	return budgetOfFree(free)
}

// NearestDescribed answers the nearest layout on the device
// (gpu.Engine.NearestInfo) and describes the run for the summary
// (graph.NearestDescriber).
func (g gpuEngine) NearestDescribed(ctx context.Context, csr *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, string, error) {
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
