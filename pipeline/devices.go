package pipeline

// Every GPU of the machine in one run (--devices): which devices a run
// takes and opening them; the engine and runner over them are package
// gpu/devices'. One engine per device
// prepares the graph; a shared queue of source blocks feeds them. The
// multi-device runner is a runner like any other (graph/seam.go), except
// that the producer (schedule.go) keeps several of its blocks submitted
// at once, enough for every device to be busy. The host blocks are
// planned as for one device alone (the first: planRunner), and each
// device computes whole host blocks, one after the other, as that device
// alone would: the batched kernel keeps its block size, and with it its
// phases and derived rows (a block cut among N devices would hold 1/N of
// the sources). The results go to the writer in the order of the blocks,
// and each block's records are those of one device: the output of N
// devices is the output of one, byte for byte, whichever device computed
// a block. Only blocks nothing else can overlap are cut among the devices
// idle when they are taken: the last block of a run, and the blocks of
// producers that run one at a time (narrowed runs, Run); each still goes
// to the writer whole.
//
// A device's chunks are bounded by its own memory budget (--gpu-mem is per
// device; without it, each engine's Budgeter), as its blocks would be
// were it alone: on equal devices this is the host block, which is then
// never cut; a device whose budget holds less cuts the blocks it takes. A device that fails with an
// error of the device (out of memory, a driver error: anything that is not
// a cancellation, a negative cycle or an invalid request) puts its chunk
// back at the front of the queue, says so on the notice writer naming the
// device, and takes no further chunk; the others take its chunk. When every
// device has failed, the run fails with their errors, each naming its
// device.
//
// The CSR reaches every device once: the first device prepares the graph
// (adopting the copy it built, or uploading it), and the others copy it
// from that device where the engine can (csrCopier: the GPU engine copies
// peer to peer where cuDeviceCanAccessPeer allows it), else upload it from
// the host.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

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

// deviceHooks replace the GPU driver for tests: count says how many
// devices there are, open opens the engine of one ordinal.
type deviceHooks struct {
	count func() (int, error)
	open  func(ordinal int) (graph.Engine, error)
}

// gpuDevices is the real machine's devices.
var gpuDevices = deviceHooks{count: gpuDeviceCount, open: openGPUOn}

// devicesEngine returns the engine of a run over several devices, with
// ok set, where opt asks for one: an engine other than cpu, and either
// Devices naming more than one device or another than the one-device
// path takes (the graph's, else device 0), or Devices nil (every device)
// on a machine with more than one. A server's pool (opt.GPUs) gives the
// run one idle device. Otherwise ok is false and the run takes one device
// as before. Release closes the engines opened for the run; the graph's
// own engine (a CSR built on the GPU, LoadOptions.Devices) serves its
// device and stays open.
func (g *Graph) devicesEngine(opt Options, tune string, sources int) (eng graph.Engine, release func(), ok bool, err error) {
	if opt.Engine == "cpu" || opt.Engine == "" {
		return nil, nil, false, nil
	}
	if opt.GPUs != nil {
		eng, release, err := poolEngine(opt, tune, sources)
		return eng, release, true, err
	}
	hooks := gpuDevices
	if opt.devices != nil {
		hooks = *opt.devices
	}
	g.mu.Lock()
	own, gpuErr := g.device, g.gpuErr
	g.mu.Unlock()
	if gpuErr != nil {
		return nil, nil, false, nil
	}
	ordinals := opt.Devices
	if ordinals == nil {
		if opt.GPU != nil {
			return nil, nil, false, nil // a server's shared engine is one device
		}
		n, err := hooks.count()
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
	openOne := hooks.open
	if others := g.otherDevices(); others != nil && opt.devices == nil {
		// The devices past the first began to open beside the read.
		openOne = func(d int) (graph.Engine, error) {
			if e, ok, err := others.take(d); ok {
				if err != nil {
					return nil, err
				}
				return e.Engine(""), nil
			}
			return hooks.open(d)
		}
	}
	var multi graph.Engine
	open := func() (graph.Engine, error) {
		m, err := openDevices(ordinals, openOne, own, opt, tune)
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

// openDevices opens an engine on every ordinal (own, where set, stands
// for the first occurrence of its device), the GPU engines' runs tuned by
// tune. A device that does not open is left out with a notice
// naming it; none opening is the error of all of them.
func openDevices(ordinals []int, open func(int) (graph.Engine, error), own graph.GPUDevice, opt Options, tune string) (graph.Engine, error) {
	notice := opt.Notice
	if notice == nil {
		notice = io.Discard
	}
	// The devices open side by side: a context takes 100-200 ms.
	slots := make([]graph.DeviceSlot, len(ordinals))
	errs := make([]error, len(ordinals))
	ownTaken := false
	var wg sync.WaitGroup
	for i, d := range ordinals {
		slots[i].Label = "gpu " + strconv.Itoa(d)
		if own != nil && d == own.Ordinal() && !ownTaken {
			slots[i].Engine, ownTaken = own.Engine(tune), true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := open(d)
			if err != nil {
				errs[i] = fmt.Errorf("pipeline: device %s: %w", slots[i].Label, err)
				return
			}
			slots[i].Engine, slots[i].Owned = tuned(e, tune), true
		}()
	}
	wg.Wait()
	var opened []graph.DeviceSlot
	for _, s := range slots {
		if s.Engine != nil {
			opened = append(opened, s)
		}
	}
	if len(opened) == 0 {
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(notice, "pathctl: %v; running on the other devices\n", err)
		}
	}
	return gpuDriver.Group(opened, graph.GroupConfig{MemBudget: opt.MemBudget, DefaultBudget: DefaultMemBudget, Stats: opt.Layout == arrowio.LayoutStats,
		Threads: opt.Threads, Notice: opt.Notice, Log: opt.Log, RequestError: isRequestError}), nil
}

// isRequestError reports whether err is the request's, the same on every
// device (cancelled, a negative cycle, an invalid request), rather than
// one device's fault.
func isRequestError(err error) bool {
	var cycle *graph.NegativeCycleError
	return IsInterrupted(err) || errors.As(err, &cycle) || errors.Is(err, ErrInvalid)
}
