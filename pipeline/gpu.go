package pipeline

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
)

// openGPU opens the GPU engine on the first device, its runs tuned by
// tune. The caller closes it.
func openGPU(tune gpu.Tuning) (graph.Engine, error) {
	e, err := newGPU()
	if err != nil {
		return nil, err
	}
	return devices.Engine{Engine: e, Tune: tune}, nil
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

// tuned is eng with its runs tuned by tune where eng is a GPU engine,
// else eng (devices.Tuned).
func tuned(eng graph.Engine, tune gpu.Tuning) graph.Engine { return devices.Tuned(eng, tune) }

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
