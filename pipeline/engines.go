package pipeline

import (
	"fmt"
	"io"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
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

// closeEngine releases an engine that holds a device (an io.Closer).
func closeEngine(e graph.Engine) {
	if c, ok := e.(io.Closer); ok {
		c.Close()
	}
}

// chooseEngine returns the engine opt.Engine names, with openGPU giving
// the GPU engine; "auto" takes the GPU where one is usable and says so on
// opt.Notice when it falls back.
func chooseEngine(opt Options, sources int, openGPU func() (graph.Engine, error)) (graph.Engine, error) {
	switch opt.Engine {
	case "cpu":
		return cpu.New(cpu.WithThreads(opt.Threads)), nil
	case "gpu":
		e, err := openGPU()
		if err != nil {
			return nil, gpuUnavailable(err)
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
		// A machine without a GPU hears nothing of it but with --verbose
		// (info says why too); a GPU that is there and fails is news.
		say := opt.Notice
		if NoGPU(err) {
			say = opt.Log
		}
		fmt.Fprintf(say, "pathctl: GPU engine unavailable (%v); using the CPU engine\n", err)
		return cpu.New(cpu.WithThreads(opt.Threads)), nil
	}
	return nil, fmt.Errorf("%w: unknown engine %q (want auto, cpu or gpu)", ErrInvalid, opt.Engine)
}

// gpuUnavailable is the error of a run that asks for the GPU engine where
// it cannot open.
func gpuUnavailable(err error) error {
	return fmt.Errorf("%w: the gpu engine: %v", ErrUnavailable, err)
}

// engine chooses the engine of a run on g as chooseEngine does, except
// that the GPU is the one g keeps where LoadGraph built the CSR on it (no
// second context; the first Prepare adopts the device copy of the CSR),
// and that where LoadGraph found no usable GPU it is not looked for again;
// else the GPU is opt.GPU where set (its turn taken for the run). Call
// release when the run is done: it closes an engine opened for the run,
// gives opt.GPU's turn back and leaves g's open.
func (g *Graph) engine(opt Options, sources int) (eng graph.Engine, release func(), err error) {
	tune, err := gpuTuning(opt.Tune)
	if err != nil {
		return nil, nil, err
	}
	if eng, release, ok, err := g.devicesEngine(opt, tune, sources); ok {
		return eng, release, err // several devices (devices.go)
	}
	g.mu.Lock()
	device, gpuErr := g.device, g.gpuErr
	g.mu.Unlock()
	shared := false
	var turn func() // the shared GPU's turn, held for the run
	open := func() (graph.Engine, error) { return openGPU(opt.driver(), tune) }
	switch {
	case device != nil:
		open = func() (graph.Engine, error) {
			shared = true
			return device.Engine(tune), nil
		}
	case gpuErr != nil:
		open = func() (graph.Engine, error) { return nil, gpuErr }
	case opt.GPU != nil:
		open = func() (graph.Engine, error) {
			e, release, err := opt.GPU.Acquire()
			if err != nil {
				return nil, err
			}
			turn = release
			return e.Engine(tune), nil
		}
	}
	eng, err = chooseEngine(opt, sources, open)
	if turn != nil && (err != nil || eng == nil) {
		turn()
		turn = nil
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case turn != nil:
		return eng, turn, nil
	case shared:
		return eng, func() {}, nil
	}
	return eng, func() { closeEngine(eng) }, nil
}
