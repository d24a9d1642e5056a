package pipeline

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pathctl/pathctl/arrowio"
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

// runEngine chooses the engine of a run of opt on g as chooseEngine
// does, except that the GPU is the one g keeps where LoadGraph built the
// CSR on it (no second context; the engine's first Prepare adopts the
// device copy of the CSR), and that where LoadGraph found no usable GPU
// it is not looked for again; else the GPU is opt.GPU where set (its turn
// taken for the run). Call release when the run is done: it closes an
// engine opened for the run, gives opt.GPU's turn back and leaves g's
// open.
func runEngine(g *Graph, opt Options, sources int) (eng graph.Engine, release func(), err error) {
	tune, err := gpuTuning(opt.Tune)
	if err != nil {
		return nil, nil, err
	}
	if eng, release, ok, err := g.devicesEngine(opt, tune, sources); ok {
		return eng, release, err // several devices (devicesEngine)
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

// Several devices: every GPU of the machine in one run (--devices), which
// devices a run takes. The driver opens them (graph.GPU.OpenGroup), and
// the engine and runner over them are package gpu/devices': one queue of
// whole host blocks, per-device budgets, peer sharing and failure
// handover. The pipeline plans the host blocks as for the first device
// alone (graph.DeviceSet.PlanRunner), and its producer (schedule.go)
// keeps several of them submitted at once (graph.DeviceSet.Depth), so
// that every device is busy and the output of N devices is the output of
// one.

// ParseDevices reads the --devices flag: "all" (or "") is nil, every
// device; otherwise a comma-separated list of device ordinals, each 0 or
// more. An ordinal may repeat: each occurrence is an engine of its own on
// that device (two engines on one GPU test the multi-device path on a
// machine of one GPU).
func ParseDevices(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: device %q: want all or ordinals such as 0,1", ErrInvalid, strings.TrimSpace(f))
		}
		out = append(out, d)
	}
	return out, nil
}

// firstDevice is the device a graph is built on for runs on devices (nil:
// every device): the first named, else device 0.
func firstDevice(devices []int) int {
	if len(devices) > 0 {
		return devices[0]
	}
	return 0
}

// devicesEngine returns the engine of a run over several devices, with
// ok set, where opt asks for one: an engine other than cpu, and either
// Devices naming more than one device or another than the one-device
// path takes (the graph's, else device 0), or Devices nil (every device)
// on a machine with more than one. A server's pool (opt.GPUs) gives the
// run one idle device. Otherwise ok is false and the run takes one device
// as before. The driver (graph.GPU.OpenGroup) opens the devices; release
// closes the engines opened for the run, and the graph's own engine (a
// CSR built on the GPU, LoadOptions.Devices) serves its device and stays
// open.
func (g *Graph) devicesEngine(opt Options, tune string, sources int) (eng graph.Engine, release func(), ok bool, err error) {
	if opt.Engine == "cpu" || opt.Engine == "" {
		return nil, nil, false, nil
	}
	if opt.GPUs != nil {
		eng, release, err := poolEngine(opt, tune, sources)
		return eng, release, true, err
	}
	driver := opt.driver()
	g.mu.Lock()
	own, gpuErr, others := g.device, g.gpuErr, g.others
	g.mu.Unlock()
	if gpuErr != nil {
		return nil, nil, false, nil
	}
	ordinals := opt.Devices
	if ordinals == nil {
		if opt.GPU != nil {
			return nil, nil, false, nil // a server's shared engine is one device
		}
		n, err := driver.Count()
		if err != nil || n <= 1 {
			return nil, nil, false, nil // no GPU or one: the one-device path says why
		}
		ordinals = make([]int, n)
		for i := range ordinals {
			ordinals[i] = i
		}
	}
	if len(ordinals) == 1 {
		// One device: the one-device path, where it takes that device
		// (the graph's, else device 0).
		if d := ordinals[0]; (own != nil && own.Ordinal() == d) || (own == nil && d == 0) {
			return nil, nil, false, nil
		}
	}
	var multi graph.Engine
	open := func() (graph.Engine, error) {
		m, err := driver.OpenGroup(ordinals, own, others, tune, graph.GroupConfig{MemBudget: opt.MemBudget, DefaultBudget: DefaultMemBudget,
			Stats: opt.Layout == arrowio.LayoutStats, Threads: opt.Threads, Notice: opt.Notice, Log: opt.Log, RequestError: isRequestError})
		if err != nil {
			return nil, err
		}
		multi = m
		return m, nil
	}
	eng, err = chooseEngine(opt, sources, open)
	if err != nil {
		return nil, nil, true, err
	}
	if multi == nil { // auto chose the CPU
		return eng, func() {}, true, nil
	}
	return eng, func() { closeEngine(multi) }, true, nil
}

// poolEngine chooses the engine of a run of a server with a pool: auto
// and gpu take one idle device of it.
func poolEngine(opt Options, tune string, sources int) (graph.Engine, func(), error) {
	var release func()
	eng, err := chooseEngine(opt, sources, func() (graph.Engine, error) {
		e, r, err := opt.GPUs.Acquire()
		if err != nil {
			return nil, err
		}
		release = r
		return opt.driver().Tuned(e, tune), nil
	})
	if err != nil {
		if release != nil {
			release()
		}
		return nil, nil, err
	}
	if release == nil {
		release = func() {}
	}
	return eng, release, nil
}

// isRequestError reports whether err is the request's, the same on every
// device (cancelled, a negative cycle, an invalid request), rather than
// one device's fault.
func isRequestError(err error) bool {
	var cycle *graph.NegativeCycleError
	return IsInterrupted(err) || errors.As(err, &cycle) || errors.Is(err, ErrInvalid)
}
