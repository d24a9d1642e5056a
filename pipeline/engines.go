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

// chooseEngine returns the engine opt.Engine names; "auto" takes the GPU
// where one is usable and says so on opt.Log when it falls back.
func chooseEngine(opt Options) (Engine, error) {
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
		e, err := openGPU()
		if err == nil {
			return e, nil
		}
		fmt.Fprintf(opt.Notice, "pathctl: GPU engine unavailable (%v); using the CPU engine\n", err)
		return cpu.New(cpu.WithThreads(opt.Threads)), nil
	}
	return nil, fmt.Errorf("%w: unknown engine %q (want auto, cpu or gpu)", ErrInvalid, opt.Engine)
}
