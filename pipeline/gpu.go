package pipeline

// The GPU as the pipeline reaches it: through the graph.GPU that the
// program registers (RegisterGPU; cmd/pathctl/engines.go registers
// package gpu/devices'), so that the pipeline imports no GPU code.

import (
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// gpuDriver is the registered GPU side of the process; unregisteredGPU until
// RegisterGPU.
var gpuDriver graph.GPU = unregisteredGPU{}

// RegisterGPU makes d the GPU engine of the process's runs, as
// database/sql's drivers register: call it from an init function, before
// any run. A program that registers none runs on the CPU only (auto falls
// back to it; --engine gpu fails).
func RegisterGPU(d graph.GPU) {
	if d != nil {
		gpuDriver = d
	}
}

// errNoGPUEngine is every GPU call's error where no GPU is registered.
var errNoGPUEngine = errors.New("pipeline: this program has no GPU engine (none registered with pipeline.RegisterGPU)")

// unregisteredGPU is the GPU side of a program that registered none.
type unregisteredGPU struct{}

func (unregisteredGPU) Open(int) (graph.GPUDevice, error) { return nil, errNoGPUEngine }
func (unregisteredGPU) Count() (int, error)               { return 0, errNoGPUEngine }
func (unregisteredGPU) Probe() (any, error)               { return nil, errNoGPUEngine }
func (unregisteredGPU) List() ([]graph.GPUInfo, error)    { return nil, errNoGPUEngine }
func (unregisteredGPU) NoGPU(err error) bool              { return errors.Is(err, errNoGPUEngine) }
func (unregisteredGPU) Failed(error) bool                 { return false }
func (unregisteredGPU) Tuned(eng graph.Engine, _ string) graph.Engine {
	return eng
}
func (unregisteredGPU) PlanAhead(*graph.CSR, []graph.VertexID, string) graph.HostPlan { return nil }

// CheckTune accepts the empty tuning only: there is no engine to tune.
func (unregisteredGPU) CheckTune(spec string) error {
	if spec != "" {
		return errNoGPUEngine
	}
	return nil
}

// OpenGroup fails: no GPU engine opens the devices.
func (unregisteredGPU) OpenGroup([]int, graph.GPUDevice, graph.GPUOthers, string, graph.GroupConfig) (graph.Engine, error) {
	return nil, errNoGPUEngine
}

// Shared is a device that never opens.
func (unregisteredGPU) Shared() graph.SharedGPU { return noShared{} }

// Pool is none: the runs share the (unopenable) shared device.
func (unregisteredGPU) Pool([]int) graph.GPUPool { return nil }

// noShared is the shared device of a program without a GPU engine.
type noShared struct{}

func (noShared) Acquire() (graph.GPUDevice, func(), error)   { return nil, nil, errNoGPUEngine }
func (noShared) TryAcquire() (graph.GPUDevice, func(), bool) { return nil, nil, false }
func (noShared) Opened() bool                                { return false }
func (noShared) Forget(*graph.CSR) error                     { return nil }
func (noShared) GraphUploads() int64                         { return 0 }
func (noShared) KeptBytes() int64                            { return 0 }
func (noShared) Close() error                                { return nil }

// NewSharedGPU is the registered GPU side's shared device for a server's
// runs (Options.GPU): opened by the first run that wants it, closed by
// its Close.
func NewSharedGPU() graph.SharedGPU { return gpuDriver.Shared() }

// NewGPUPool is the registered GPU side's pool of a server's devices
// (Options.GPUs; devices nil: every device), nil where a server needs
// none (one device): its runs then share NewSharedGPU's.
func NewGPUPool(devices []int) graph.GPUPool { return gpuDriver.Pool(devices) }

// DeviceFailed reports whether err is a failure of the GPU itself (a
// driver call's error status, out of memory included) rather than of the
// input or the request: a run that failed so may be run again on the CPU.
func DeviceFailed(err error) bool { return gpuDriver.Failed(err) }

// driver is the GPU side of a run: Options.Driver where set, else the
// registered one.
func (opt Options) driver() graph.GPU {
	if opt.Driver != nil {
		return opt.Driver
	}
	return gpuDriver
}

// openGPU opens driver's GPU engine on the first device, its runs tuned
// by tune. The caller closes it.
func openGPU(driver graph.GPU, tune string) (graph.Engine, error) {
	e, err := driver.Open(0)
	if err != nil {
		return nil, err
	}
	return e.Engine(tune), nil
}

// gpuTuning checks spec (Options.Tune) as the GPU engine's tuning and
// returns it; a bad spec is an ErrInvalid naming the setting.
func gpuTuning(spec string) (string, error) {
	if err := gpuDriver.CheckTune(spec); err != nil {
		return "", fmt.Errorf("%w: tune: %w", ErrInvalid, err)
	}
	return spec, nil
}

// CheckTune reports whether spec is a valid Options.Tune: comma-separated
// KEY=VALUE settings of the GPU engine's tuning (docs/engine.md lists the
// keys). The error names the setting that is not.
func CheckTune(spec string) error { return gpuDriver.CheckTune(spec) }

// tuned is eng with its runs tuned by tune where eng is a GPU engine,
// else eng.
func tuned(eng graph.Engine, tune string) graph.Engine { return gpuDriver.Tuned(eng, tune) }

// newGPU opens the GPU engine on the first device.
func newGPU() (graph.GPUDevice, error) { return gpuDriver.Open(0) }

// NoGPU reports whether err says that this machine has no GPU to use at
// all (no driver library, or no device, or no GPU engine in the
// program), rather than that a GPU failed.
func NoGPU(err error) bool {
	return errors.Is(err, errNoGPUEngine) || gpuDriver.NoGPU(err)
}

// GPUStatus reports whether the GPU engine can run here, with the device.
func GPUStatus() EngineStatus {
	info, err := gpuDriver.Probe()
	if err != nil {
		return EngineStatus{Name: "gpu", Reason: err.Error()}
	}
	return EngineStatus{Name: "gpu", Available: true, Device: info}
}
