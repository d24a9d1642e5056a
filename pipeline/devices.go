package pipeline

// Every GPU of the machine in one run (--devices). One engine per device
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
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gpu"
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
func (g *Graph) devicesEngine(opt Options, tune gpu.Tuning, sources int) (eng graph.Engine, release func(), ok bool, err error) {
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
				return gpuEngine{Engine: e}, nil
			}
			return hooks.open(d)
		}
	}
	var multi *multiEngine
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
	return eng, func() { multi.Close() }, true, nil
}

// openDevices opens an engine on every ordinal (own, where set, stands
// for the first occurrence of its device), the GPU engines' runs tuned by
// tune. A device that does not open is left out with a notice
// naming it; none opening is the error of all of them.
func openDevices(ordinals []int, open func(int) (graph.Engine, error), own *gpu.Engine, opt Options, tune gpu.Tuning) (*multiEngine, error) {
	m := &multiEngine{memBudget: opt.MemBudget, layout: opt.Layout, threads: opt.Threads, notice: opt.Notice, log: opt.Log}
	if m.notice == nil {
		m.notice = io.Discard
	}
	if m.log == nil {
		m.log = io.Discard
	}
	// The devices open side by side: a context takes 100-200 ms.
	slots := make([]deviceSlot, len(ordinals))
	errs := make([]error, len(ordinals))
	ownTaken := false
	var wg sync.WaitGroup
	for i, d := range ordinals {
		slots[i].label = "gpu " + strconv.Itoa(d)
		if own != nil && d == own.Ordinal() && !ownTaken {
			slots[i].eng, ownTaken = gpuEngine{own, tune}, true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := open(d)
			if err != nil {
				errs[i] = fmt.Errorf("pipeline: device %s: %w", slots[i].label, err)
				return
			}
			slots[i].eng, slots[i].owned = tuned(e, tune), true
		}()
	}
	wg.Wait()
	for _, s := range slots {
		if s.eng != nil {
			m.devices = append(m.devices, s)
		}
	}
	if len(m.devices) == 0 {
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(m.notice, "pathctl: %v; running on the other devices\n", err)
		}
	}
	return m, nil
}

// deviceSlot is one device of a multi-device engine.
type deviceSlot struct {
	label string // "gpu N", in errors and notices
	eng   graph.Engine
	owned bool // opened for the run: closed with it
}

// multiEngine is the engine of a run over several devices.
type multiEngine struct {
	devices   []deviceSlot
	memBudget int64 // Options.MemBudget: per device
	layout    arrowio.Layout
	threads   int
	notice    io.Writer
	log       io.Writer
}

var (
	_ graph.Engine      = (*multiEngine)(nil)
	_ graph.Budgeter    = (*multiEngine)(nil)
	_ graph.DeviceGroup = (*multiEngine)(nil)
	_ io.Closer         = (*multiEngine)(nil)
)

// Devices is the number of engines, one per device named.
func (m *multiEngine) Devices() int { return len(m.devices) }

// FirstSharing is the number of engines on the first device, among which
// a per-device budget (--gpu-mem) is split.
func (m *multiEngine) FirstSharing() int { return m.sharing(0) }

// First is the first device's engine and label.
func (m *multiEngine) First() (graph.Engine, string) { return m.devices[0].eng, m.devices[0].label }

// Name is the devices' engine name ("gpu").
func (m *multiEngine) Name() string { return m.devices[0].eng.Name() }

// Close closes the engines opened for the run.
func (m *multiEngine) Close() error {
	var errs []error
	for _, d := range m.devices {
		if d.owned {
			if c, ok := d.eng.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
	}
	return errors.Join(errs...)
}

// DefaultBudget is the first device's, the one whose blocks the run
// plans (planRunner); the other devices compute those blocks, each within
// its own budget (chunkMax).
func (m *multiEngine) DefaultBudget() int64 {
	return m.deviceBudget(0, false)
}

// DeviceBudget is the first device's device budget (see DefaultBudget).
func (m *multiEngine) DeviceBudget() int64 {
	return m.deviceBudget(0, true)
}

// deviceBudget is device i's budget as one device alone would plan with
// it (its engine's, graph.Budgeter, else DefaultMemBudget), split among
// the engines that share its device (--devices 0,0).
func (m *multiEngine) deviceBudget(i int, device bool) int64 {
	budget := int64(DefaultMemBudget)
	if b, ok := m.devices[i].eng.(graph.Budgeter); ok {
		budget = b.DefaultBudget()
		if device {
			budget = b.DeviceBudget()
		}
	}
	return budget / int64(m.sharing(i))
}

// sharing is the number of engines on device i's device.
func (m *multiEngine) sharing(i int) int {
	n := 0
	for _, d := range m.devices {
		if d.label == m.devices[i].label {
			n++
		}
	}
	return n
}

// csrCopier is implemented by engines that can take the graph from a
// runner of another engine of their kind instead of from host memory
// (the GPU engine: peer to peer where the devices allow it).
type csrCopier interface {
	PrepareFrom(ctx context.Context, g *graph.CSR, req graph.Request, from graph.Runner) (graph.Runner, error)
}

// Prepare prepares the graph on the first device, then on the others from
// it (csrCopier) or from the host. The first device's error is the
// request's (a negative weight fails there); another device that fails is
// left out with a notice naming it.
func (m *multiEngine) Prepare(ctx context.Context, csr *graph.CSR, req graph.Request) (graph.Runner, error) {
	first, err := m.devices[0].eng.Prepare(ctx, csr, req)
	if err != nil {
		return nil, err
	}
	runners := make([]graph.Runner, len(m.devices))
	runners[0] = first
	errs := make([]error, len(m.devices))
	var wg sync.WaitGroup
	for i := 1; i < len(m.devices); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, ok := m.devices[i].eng.(csrCopier); ok {
				runners[i], errs[i] = c.PrepareFrom(ctx, csr, req, first)
			} else {
				runners[i], errs[i] = m.devices[i].eng.Prepare(ctx, csr, req)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		for _, r := range runners {
			if r != nil {
				r.Close()
			}
		}
		return nil, err
	}
	var workers []*deviceWorker
	for i, r := range runners {
		if errs[i] != nil {
			fmt.Fprintf(m.notice, "pathctl: device %s: %v; running on the other devices\n", m.devices[i].label, errs[i])
			continue
		}
		workers = append(workers, &deviceWorker{label: m.devices[i].label, runner: r, maxChunk: m.chunkMax(i, r)})
	}
	shareHubRows(workers)
	fmt.Fprintf(m.log, "pathctl: %d devices:", len(workers))
	for _, w := range workers {
		fmt.Fprintf(m.log, " %s (blocks of up to %d sources)", w.label, w.maxChunk)
	}
	fmt.Fprintln(m.log)
	return newDevicesRunner(workers, csr.NumVertices, m.threads, m.notice), nil
}

// chunkMax is the most sources device i computes at once: its budget
// (the run's per-device budget, or its engine's) sized as the planner
// sizes one device's blocks (graph.SizingOf, as planRun does): on equal
// devices it is the size of the host blocks, which are then never cut.
func (m *multiEngine) chunkMax(i int, r graph.Runner) int {
	sizing := graph.SizingOf(r, m.layout == arrowio.LayoutStats)
	budget := m.memBudget / int64(m.sharing(i))
	if m.memBudget <= 0 {
		budget = m.deviceBudget(i, sizing.StatsOnDevice)
	}
	if most := sizing.MaxSources(sizing.Usable(budget)); most > 0 {
		return most
	}
	return 1 << 30
}

// isRequestError reports whether err is the request's, the same on every
// device (cancelled, a negative cycle, an invalid request), rather than
// one device's fault.
func isRequestError(err error) bool {
	var cycle *graph.NegativeCycleError
	return IsInterrupted(err) || errors.As(err, &cycle) || errors.Is(err, ErrInvalid)
}
