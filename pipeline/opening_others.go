package pipeline

import (
	"errors"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// OtherDevices are the GPU engines of a run's devices past the first
// (Options.Devices; nil: every device of the machine), opening each in a
// goroutine of its own beside the read, as the first one's DeviceOpening
// does: a run over two H200s otherwise created the second context after
// the read, about 110 ms on its path (docs/benchmarks-history.md, "The host off the
// devices' path"). The run takes them as it opens its devices
// (openDevices); LoadGraph keeps them with the graph where it builds for
// the GPU, and gives them up otherwise. The nil *OtherDevices opens
// nothing: its methods do nothing.
type OtherDevices struct {
	ready    chan struct{}          // closed once the openings are begun
	openings map[int]*DeviceOpening // by ordinal, set before ready closes

	mu      sync.Mutex
	exiting bool // LeaveToExit: engines given up are abandoned
	// kept says that LoadGraph kept the openings with its graph: the
	// caller's GiveUp and Close then leave them to the graph's.
	kept bool
}

// OpenOtherDevicesEarly begins opening the devices past the first that a
// graph loaded with opt will run on, under OpenDeviceEarly's rule, where
// opt.Devices names more than one or, nil, the machine has more than one
// (counted in the background, once the driver is loaded). nil otherwise.
// Pass it as LoadOptions.OtherDevices, and GiveUp (or Close) it on every
// path.
func OpenOtherDevicesEarly(opt LoadOptions, inputBytes int64) *OtherDevices {
	if !opensEarly(opt, inputBytes) || (opt.Devices != nil && len(otherOrdinals(opt.Devices)) == 0) {
		return nil
	}
	return openOthers(opt.Devices, gpuDeviceCount, func(d int) (graph.GPUDevice, error) { return newGPUOn(d) })
}

// otherOrdinals are the distinct ordinals of devices past the first.
func otherOrdinals(devices []int) []int {
	first := firstDevice(devices)
	var out []int
	for _, d := range devices {
		if d != first && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// openOthers begins opening, with open, every device of devices past the
// first (nil: of the count devices), in the background.
func openOthers(devices []int, count func() (int, error), open func(int) (graph.GPUDevice, error)) *OtherDevices {
	o := &OtherDevices{ready: make(chan struct{}), openings: map[int]*DeviceOpening{}}
	go func() {
		defer close(o.ready)
		ordinals := devices
		if ordinals == nil {
			n, err := count()
			if err != nil {
				return // the run's own opening says why
			}
			for d := range n {
				ordinals = append(ordinals, d)
			}
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, d := range otherOrdinals(ordinals) {
			op := startOpening(func() (graph.GPUDevice, error) { return open(d) })
			if o.exiting {
				op.LeaveToExit()
			}
			o.openings[d] = op
		}
	}()
	return o
}

// take hands over the engine opened for ordinal d, waiting for what is
// left of its opening; ok is false where none was begun for d, or it was
// taken already.
func (o *OtherDevices) take(d int) (e graph.GPUDevice, ok bool, err error) {
	if o == nil {
		return nil, false, nil
	}
	<-o.ready
	op := o.openings[d]
	if op == nil {
		return nil, false, nil
	}
	e, _, _, err = op.take()
	if errors.Is(err, errOpeningTaken) {
		return nil, false, nil
	}
	return e, true, err
}

// LeaveToExit says that the process exits right after the run: engines
// given up are abandoned to the exit (DeviceOpening.LeaveToExit).
func (o *OtherDevices) LeaveToExit() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.exiting = true
	for _, op := range o.openings {
		op.LeaveToExit()
	}
}

// GiveUp gives up every opening no run took, without waiting for them
// (DeviceOpening.GiveUp), unless LoadGraph kept them with its graph.
func (o *OtherDevices) GiveUp() {
	if o.keptByGraph() {
		return
	}
	o.giveUp()
}

// Close waits for every opening no run took and closes its engine, unless
// LoadGraph kept them with its graph.
func (o *OtherDevices) Close() error {
	if o.keptByGraph() {
		return nil
	}
	return o.close()
}

// keep hands the openings to a graph (LoadGraph): the caller's GiveUp and
// Close do nothing after it, the graph's Close and AbandonDevice end them.
func (o *OtherDevices) keep() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.kept = true
	o.mu.Unlock()
}

func (o *OtherDevices) keptByGraph() bool {
	if o == nil {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.kept
}

func (o *OtherDevices) giveUp() {
	if o == nil {
		return
	}
	go func() {
		<-o.ready
		for _, op := range o.openings {
			op.GiveUp()
		}
	}()
}

func (o *OtherDevices) close() error {
	if o == nil {
		return nil
	}
	<-o.ready
	var errs []error
	for _, op := range o.openings {
		errs = append(errs, op.Close())
	}
	return errors.Join(errs...)
}
