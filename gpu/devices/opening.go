package devices

// Opening a device early: in a goroutine of its own, beside the read of
// the edges, so that creating the context and loading the kernel image
// (130-225 ms on an H100, longer than reading a million-edge Parquet file,
// 65 ms) cost the longer of the two instead of their sum. The pipeline
// takes an opening through graph.GPUOpening (LoadOptions.Device) and the
// other devices' through graph.GPUOthers (LoadOptions.OtherDevices).

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
)

// Opening is a GPU engine opening in a goroutine of its own (Open,
// OpenWith). LoadGraph takes it (graph.GPUOpening); a caller that never
// reaches LoadGraph gives it up (GiveUp) or closes it (Close), both of
// which do nothing once it was taken. The nil *Opening is an opening
// never started: its methods do nothing.
type Opening struct {
	done  chan struct{} // closed when the open returned
	e     graph.GPUDevice
	err   error
	took  time.Duration // of the open itself
	mu    sync.Mutex
	taken bool // by Take, GiveUp or Close
	// exiting says that the process exits after the run (LeaveToExit): a
	// device given up is abandoned to the exit rather than closed.
	exiting bool
}

var _ graph.GPUOpening = (*Opening)(nil)

// Open starts opening the GPU engine on device ordinal.
func Open(ordinal int) *Opening {
	return OpenWith(func() (graph.GPUDevice, error) { return Driver{}.Open(ordinal) })
}

// OpenWith is Open with open in place of opening a device: tests pass an
// open that takes as long as they want, or fails. The device's driver
// calls run on its own goroutine, locked to an OS thread (gpu/device.go),
// so the goroutine that opens it needs no lock of its own.
func OpenWith(open func() (graph.GPUDevice, error)) *Opening {
	o := &Opening{done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(o.done)
		trace.Printf("devices", "opening the device")
		o.e, o.err = open()
		o.took = time.Since(start)
		trace.Printf("devices", "device opened (%v)", o.err == nil)
	}()
	return o
}

// claim marks the opening taken and reports whether it was before.
func (o *Opening) claim() (taken, exiting bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	taken, exiting = o.taken, o.exiting
	o.taken = true
	return taken, exiting
}

// Take waits for the opening and hands its device (or its error) over;
// the caller closes the device. A second Take, or one after GiveUp or
// Close, fails with graph.ErrOpeningTaken.
func (o *Opening) Take() (e graph.GPUDevice, took, waited time.Duration, err error) {
	if o == nil {
		return nil, 0, 0, graph.ErrOpeningTaken
	}
	if taken, _ := o.claim(); taken {
		return nil, 0, 0, graph.ErrOpeningTaken
	}
	start := time.Now()
	<-o.done
	return o.e, o.took, time.Since(start), o.err
}

// Close waits for the opening to end and closes the device it opened,
// unless it was taken. Closing twice does nothing.
func (o *Opening) Close() error {
	if o == nil {
		return nil
	}
	if taken, _ := o.claim(); taken {
		return nil
	}
	<-o.done
	if o.e == nil {
		return nil
	}
	return o.e.Close()
}

// GiveUp gives the opening up without waiting for it, unless it was
// taken: a goroutine waits for the open and closes the device (abandons
// it, after LeaveToExit). Later takes fail and Close does nothing.
func (o *Opening) GiveUp() {
	if o == nil {
		return
	}
	taken, exiting := o.claim()
	if taken {
		return
	}
	go func() {
		<-o.done
		switch {
		case o.e == nil:
		case exiting:
			o.e.Abandon()
		default:
			o.e.Close()
		}
	}()
}

// LeaveToExit says that the process exits right after the run: a device
// the opening gives up is abandoned (graph.GPUDevice.Abandon), its context
// left to the exit to release, instead of torn down beside the run.
func (o *Opening) LeaveToExit() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.exiting = true
	o.mu.Unlock()
}

// Pending reports whether the opening is under way and not yet taken.
func (o *Opening) Pending() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	taken := o.taken
	o.mu.Unlock()
	if taken {
		return false
	}
	select {
	case <-o.done:
		return false
	default:
		return true
	}
}

// Failed reports whether the opening ended without a device (no GPU
// here); false while it is under way.
func (o *Opening) Failed() bool {
	if o == nil {
		return false
	}
	select {
	case <-o.done:
		return o.err != nil
	default:
		return false
	}
}

// Others are the GPU engines of a run's devices past the first (nil: of
// every device of the machine), each opening in a goroutine of its own
// beside the read, as the first one's Opening does: a run over two H200s
// otherwise created the second context after the read, about 110 ms on
// its path (docs/benchmarks-history.md, "The host off the devices' path").
// The run takes them as it opens its devices (Driver.OpenGroup); a graph
// built for the GPU keeps them (Keep), and LoadGraph gives them up
// otherwise. The nil *Others opens nothing: its methods do nothing.
type Others struct {
	ready    chan struct{}    // closed once the openings are begun
	openings map[int]*Opening // by ordinal, set before ready closes

	mu      sync.Mutex
	exiting bool // LeaveToExit: devices given up are abandoned
	// kept says that a graph keeps the openings: GiveUp and Close then
	// leave them to its End.
	kept bool
}

var _ graph.GPUOthers = (*Others)(nil)

// OpenOthers begins opening the devices of devices past the first (nil:
// of every device, counted in the background once the driver is loaded),
// or returns nil where devices names no other.
func OpenOthers(devices []int) *Others {
	if devices != nil && len(otherOrdinals(devices)) == 0 {
		return nil
	}
	return openOthers(devices, Driver{}.Count, Driver{}.Open)
}

// FirstDevice is the device a graph is built on for runs on devices (nil:
// every device): the first named, else device 0.
func FirstDevice(devices []int) int {
	if len(devices) > 0 {
		return devices[0]
	}
	return 0
}

// otherOrdinals are the distinct ordinals of devices past the first.
func otherOrdinals(devices []int) []int {
	first := FirstDevice(devices)
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
func openOthers(devices []int, count func() (int, error), open func(int) (graph.GPUDevice, error)) *Others {
	o := &Others{ready: make(chan struct{}), openings: map[int]*Opening{}}
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
			op := OpenWith(func() (graph.GPUDevice, error) { return open(d) })
			if o.exiting {
				op.LeaveToExit()
			}
			o.openings[d] = op
		}
	}()
	return o
}

// Take hands over the device opened for ordinal d, waiting for what is
// left of its opening; ok is false where none was begun for d, or it was
// taken already.
func (o *Others) Take(d int) (e graph.GPUDevice, ok bool, err error) {
	if o == nil {
		return nil, false, nil
	}
	<-o.ready
	op := o.openings[d]
	if op == nil {
		return nil, false, nil
	}
	e, _, _, err = op.Take()
	if errors.Is(err, graph.ErrOpeningTaken) {
		return nil, false, nil
	}
	return e, true, err
}

// LeaveToExit says that the process exits right after the run: devices
// given up are abandoned to the exit (Opening.LeaveToExit).
func (o *Others) LeaveToExit() {
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

// Keep hands the openings to a graph: GiveUp and Close do nothing after
// it, End ends them.
func (o *Others) Keep() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.kept = true
	o.mu.Unlock()
}

func (o *Others) keptByGraph() bool {
	if o == nil {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.kept
}

// GiveUp gives up every opening no run took, without waiting for them
// (Opening.GiveUp), unless a graph keeps them.
func (o *Others) GiveUp() {
	if !o.keptByGraph() {
		o.giveUp()
	}
}

// Close waits for every opening no run took and closes its device, unless
// a graph keeps them.
func (o *Others) Close() error {
	if o.keptByGraph() {
		return nil
	}
	return o.close()
}

// End ends every opening no run took, kept or not: it waits for them and
// closes their devices, or with abandon gives them up to the process exit
// without waiting.
func (o *Others) End(abandon bool) error {
	if o == nil {
		return nil
	}
	if abandon {
		o.LeaveToExit()
		o.giveUp()
		return nil
	}
	return o.close()
}

func (o *Others) giveUp() {
	go func() {
		<-o.ready
		for _, op := range o.openings {
			op.GiveUp()
		}
	}()
}

func (o *Others) close() error {
	<-o.ready
	var errs []error
	for _, op := range o.openings {
		errs = append(errs, op.Close())
	}
	return errors.Join(errs...)
}

// Early is what a process opens of its devices before it needs them: the
// first device, from process start (OpenFirst) or beside the read
// (Begin), and the others of a run over several (Begin). A command makes
// one, hands First and Others to LoadGraph (LoadOptions.Device and
// OtherDevices), and Releases it on every path, read failures included;
// what a graph took stays the graph's, which Graph.Release ends. The nil
// *Early opens nothing.
type Early struct {
	exits bool // the process exits after the run

	mu      sync.Mutex
	first   *Opening
	others  *Others
	atStart bool // first was begun by OpenFirst
}

// NewEarly is an Early of a process that exits right after its run where
// exits is set: what it opened and no graph took is then abandoned to the
// exit rather than closed.
func NewEarly(exits bool) *Early { return &Early{exits: exits} }

// OpenFirst begins opening the first device with open (nil: device 0)
// at process start, before the flags are parsed, unless an opening of it
// was begun already.
func (e *Early) OpenFirst(open func() (graph.GPUDevice, error)) {
	if e == nil {
		return
	}
	if open == nil {
		open = func() (graph.GPUDevice, error) { return Driver{}.Open(0) }
	}
	e.openFirst(open, true)
}

func (e *Early) openFirst(open func() (graph.GPUDevice, error), atStart bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		e.first, e.atStart = OpenWith(open), atStart
		if e.exits {
			e.first.LeaveToExit()
		}
	}
}

// AtStart reports whether the first device began to open at process
// start (OpenFirst) rather than beside the read (Begin).
func (e *Early) AtStart() bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.atStart
}

// Begin begins opening, beside the read, the devices of a run on devices
// (nil: every device): the first, unless begun already (OpenFirst), and
// the others.
func (e *Early) Begin(devices []int) {
	if e == nil {
		return
	}
	first := FirstDevice(devices)
	e.openFirst(func() (graph.GPUDevice, error) { return Driver{}.Open(first) }, false)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.others == nil {
		e.others = OpenOthers(devices)
		if e.exits {
			e.others.LeaveToExit()
		}
	}
}

// First is the first device's opening, for LoadOptions.Device; nil where
// none was begun.
func (e *Early) First() graph.GPUOpening {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return nil
	}
	return e.first
}

// Others are the other devices' openings, for LoadOptions.OtherDevices;
// nil where none were begun.
func (e *Early) Others() graph.GPUOthers {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.others == nil {
		return nil
	}
	return e.others
}

// Release gives up, without waiting, what no graph took of the openings:
// a goroutine closes each device, or in a process that exits after the
// run abandons it to the exit, so that a run on the CPU never waits for a
// device it did not use. Releasing twice, or the nil *Early, does nothing
// more.
func (e *Early) Release() {
	if e == nil {
		return
	}
	e.mu.Lock()
	first, others := e.first, e.others
	e.mu.Unlock()
	others.GiveUp()
	first.GiveUp()
}
