package devices

// The engine of several devices (Group): one engine per device prepares
// the graph, and the runner they make (runner.go) feeds them from one
// queue of source blocks.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// Slot is one device of a Group.
type Slot struct {
	// Label names the device in errors and notices ("gpu N"); engines of
	// one device share it.
	Label string
	// Engine is the device's engine.
	Engine graph.Engine
	// Owned says that the engine was opened for the run: the group's
	// Close closes it.
	Owned bool
}

// Config is what a Group takes of the run.
type Config = graph.GroupConfig

// Group is the engine of a run over several devices: one engine per
// device, whose runners take the blocks of one queue.
type Group struct {
	devices []Slot
	cfg     Config
}

// OpenGroup opens an engine on every ordinal, side by side (a context
// takes 100-200 ms), and returns the Group over them. own, where set,
// stands for the first occurrence of its device (the graph's, which built
// the CSR); others, where set, hands over the devices that began to open
// beside the read. The engines' runs are tuned by tune. A device that
// does not open is left out with a notice naming it; none opening is the
// error of all of them.
func (d Driver) OpenGroup(ordinals []int, own graph.GPUDevice, others graph.GPUOthers, tune string, cfg Config) (graph.Engine, error) {
	notice := cfg.Notice
	if notice == nil {
		notice = io.Discard
	}
	open := d.engine
	if others != nil {
		open = func(ordinal int) (graph.Engine, error) {
			if e, ok, err := others.Take(ordinal); ok {
				if err != nil {
					return nil, err
				}
				return e.Engine(""), nil
			}
			return d.engine(ordinal)
		}
	}
	slots := make([]Slot, len(ordinals))
	errs := make([]error, len(ordinals))
	ownTaken := false
	var wg sync.WaitGroup
	for i, ordinal := range ordinals {
		slots[i].Label = "gpu " + strconv.Itoa(ordinal)
		if own != nil && ordinal == own.Ordinal() && !ownTaken {
			slots[i].Engine, ownTaken = own.Engine(tune), true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := open(ordinal)
			if err != nil {
				errs[i] = fmt.Errorf("devices: device %s: %w", slots[i].Label, err)
				return
			}
			slots[i].Engine, slots[i].Owned = d.Tuned(e, tune), true
		}()
	}
	wg.Wait()
	var opened []Slot
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
	return NewGroup(opened, cfg), nil
}

// NewGroup is the engine of slots, the first of which plans the run's
// blocks. slots holds at least one device.
func NewGroup(slots []Slot, cfg Config) *Group {
	if cfg.Notice == nil {
		cfg.Notice = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.DefaultBudget <= 0 {
		cfg.DefaultBudget = graph.DefaultMemBudget
	}
	if cfg.RequestError == nil {
		cfg.RequestError = func(err error) bool {
			var cycle *graph.NegativeCycleError
			return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &cycle)
		}
	}
	return &Group{devices: slots, cfg: cfg}
}

var (
	_ graph.Engine      = (*Group)(nil)
	_ graph.Budgeter    = (*Group)(nil)
	_ graph.DeviceGroup = (*Group)(nil)
	_ io.Closer         = (*Group)(nil)
)

// Slots are the group's devices, the first of which plans the run.
func (m *Group) Slots() []Slot { return slices.Clone(m.devices) }

// Devices is the number of engines, one per device named.
func (m *Group) Devices() int { return len(m.devices) }

// FirstSharing is the number of engines on the first device, among which
// a per-device budget (--gpu-mem) is split.
func (m *Group) FirstSharing() int { return m.sharing(0) }

// First is the first device's engine and label.
func (m *Group) First() (graph.Engine, string) { return m.devices[0].Engine, m.devices[0].Label }

// Name is the devices' engine name ("gpu").
func (m *Group) Name() string { return m.devices[0].Engine.Name() }

// Close closes the engines opened for the run.
func (m *Group) Close() error {
	var errs []error
	for _, d := range m.devices {
		if d.Owned {
			if c, ok := d.Engine.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
	}
	return errors.Join(errs...)
}

// DefaultBudget is the first device's, the one whose blocks the run
// plans (graph.DeviceSet.PlanRunner); the other devices compute those blocks, each within
// its own budget (chunkMax).
func (m *Group) DefaultBudget() int64 {
	return m.deviceBudget(0, false)
}

// DeviceBudget is the first device's device budget (see DefaultBudget).
func (m *Group) DeviceBudget() int64 {
	return m.deviceBudget(0, true)
}

// deviceBudget is device i's budget as one device alone would plan with
// it (its engine's, graph.Budgeter, else Config.DefaultBudget), split among
// the engines that share its device (--devices 0,0).
func (m *Group) deviceBudget(i int, device bool) int64 {
	budget := m.cfg.DefaultBudget
	if b, ok := m.devices[i].Engine.(graph.Budgeter); ok {
		budget = b.DefaultBudget()
		if device {
			budget = b.DeviceBudget()
		}
	}
	return budget / int64(m.sharing(i))
}

// sharing is the number of engines on device i's device.
func (m *Group) sharing(i int) int {
	n := 0
	for _, d := range m.devices {
		if d.Label == m.devices[i].Label {
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
func (m *Group) Prepare(ctx context.Context, csr *graph.CSR, req graph.Request) (graph.Runner, error) {
	first, err := m.devices[0].Engine.Prepare(ctx, csr, req)
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
			if c, ok := m.devices[i].Engine.(csrCopier); ok {
				runners[i], errs[i] = c.PrepareFrom(ctx, csr, req, first)
			} else {
				runners[i], errs[i] = m.devices[i].Engine.Prepare(ctx, csr, req)
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
			fmt.Fprintf(m.cfg.Notice, "pathctl: device %s: %v; running on the other devices\n", m.devices[i].Label, errs[i])
			continue
		}
		w := &deviceWorker{label: m.devices[i].Label, runner: r, deviceBudget: m.budgetOf(i, true)}
		w.maxChunk.Store(int64(m.chunkMax(i, r)))
		workers = append(workers, w)
	}
	shareHubRows(workers)
	fmt.Fprintf(m.cfg.Log, "pathctl: %d devices:", len(workers))
	for _, w := range workers {
		fmt.Fprintf(m.cfg.Log, " %s (blocks of up to %d sources)", w.label, w.maxChunk.Load())
	}
	fmt.Fprintln(m.cfg.Log)
	return withBetweenness(newDevicesRunner(workers, csr.NumVertices, m.cfg.Threads, m.cfg.Notice, m.cfg.RequestError)), nil
}

// chunkMax is the most sources device i computes at once: its budget
// (the run's per-device budget, or its engine's) sized as the planner
// sizes one device's blocks (graph.SizingOf, as planRun does): on equal
// devices it is the size of the host blocks, which are then never cut.
func (m *Group) chunkMax(i int, r graph.Runner) int {
	sizing := graph.SizingOf(r, m.cfg.Stats)
	if most := sizing.MaxSources(sizing.Usable(m.budgetOf(i, sizing.StatsOnDevice))); most > 0 {
		return most
	}
	return 1 << 30
}

// budgetOf is device i's share of the run's per-device budget, or of its
// engine's (deviceBudget; onDevice: of a run whose blocks stay on the
// device).
func (m *Group) budgetOf(i int, onDevice bool) int64 {
	if m.cfg.MemBudget > 0 {
		return m.cfg.MemBudget / int64(m.sharing(i))
	}
	return m.deviceBudget(i, onDevice)
}
