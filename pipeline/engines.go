package pipeline

import (
	"fmt"

	"github.com/pathctl/pathctl/cpu"
)

// EngineStatus says whether an engine can run here, and why not.
type EngineStatus struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Device    any    `json:"device,omitempty"`
}

// minGPUSources is the request size below which auto stays on the CPU: the
// GPU kernels run one thread block per source, so a handful of sources
// leaves the device idle (a single source takes 16-180 ms on an H200, more
// than the CPU's heap Dijkstra on the same graphs).
const minGPUSources = 64

// closeEngine releases an engine that holds a device.
func closeEngine(e Engine) {
	if c, ok := e.(interface{ Close() error }); ok {
		c.Close()
	}
}

// chooseEngine returns the engine opt.Engine names; "auto" takes the GPU
// where one is usable and says so on opt.Log when it falls back.
func chooseEngine(opt Options, sources int) (Engine, error) {
	switch opt.Engine {
	case "cpu":
		return cpu.New(cpu.WithThreads(opt.Threads)), nil
	case "gpu":
		e, err := openGPU()
		if err != nil {
			return nil, fmt.Errorf("%w: --engine gpu: %v", ErrUnavailable, err)
		}
		return e, nil
	case "auto":
		if sources > 0 && sources < minGPUSources {
			fmt.Fprintf(opt.Log, "pathctl: %d sources: the CPU engine is faster than a GPU launch for so few\n", sources)
			return cpu.New(cpu.WithThreads(opt.Threads)), nil
		}
		e, err := openGPU()
		if err == nil {
			return e, nil
		}
		fmt.Fprintf(opt.Notice, "pathctl: GPU engine unavailable (%v); using the CPU engine\n", err)
		return cpu.New(cpu.WithThreads(opt.Threads)), nil
	}
	return nil, fmt.Errorf("%w: unknown engine %q (want auto, cpu or gpu)", ErrInvalid, opt.Engine)
}
