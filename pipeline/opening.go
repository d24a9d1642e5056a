package pipeline

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
)

// DeviceOpening is a GPU engine opening in a goroutine of its own while the
// edges are read (OpenDeviceEarly, or OpenDevice from process start):
// creating the context and loading the kernel image take 130-225 ms on an
// H100, longer than reading a million-edge Parquet file (65 ms), so that
// side by side the two cost the longer of them instead of their sum, and
// the CSR is built on the CPU in the rest of the wait (buildBesideOpening).
// LoadGraph takes it through LoadOptions.Device; Close it, or GiveUp, on
// every path, since a read that fails never reaches LoadGraph (both do
// nothing after LoadGraph took it). The nil *DeviceOpening is an opening
// never started: its methods do nothing.
type DeviceOpening struct {
	done  chan struct{} // closed when the open returned
	e     graph.GPUDevice
	err   error
	took  time.Duration // of the open itself
	mu    sync.Mutex
	taken bool // by LoadGraph or Close
	// exiting says that the process exits after the run (LeaveToExit): an
	// engine given up is abandoned to the exit rather than closed.
	exiting bool
}

// minEarlyOpenBytes is the smallest input on which auto, asked for every
// source, opens the device before it knows the vertex count: below it the
// read is too short for the open to hide behind, and the graph may well
// have fewer than minGPUSources vertices, which auto runs on the CPU.
// Where the size is unknown (standard input) the device is opened early.
const minEarlyOpenBytes = 256 << 10

// OpenDeviceEarly starts opening the GPU engine in its own goroutine when a
// graph loaded with opt will be built on the GPU, or may be: engine "gpu";
// engine "auto" for minGPUSources sources or more; and auto for every
// source (opt.Sources 0), which depends on the vertex count not yet read,
// when inputBytes, the size of the edge input (-1 where unknown), is at
// least minEarlyOpenBytes. Otherwise (engine "cpu", few sources, a small
// input) it returns nil and opens nothing. Pass the result as
// opt.Device to LoadGraph, and Close it. On a machine without a GPU the
// open fails within milliseconds (no driver library, or no device) and
// LoadGraph treats that failure as it treats its own.
func OpenDeviceEarly(opt LoadOptions, inputBytes int64) *DeviceOpening {
	if !opensEarly(opt, inputBytes) {
		return nil
	}
	ordinal := firstDevice(opt.Devices)
	return startOpening(func() (graph.GPUDevice, error) { return newGPUOn(ordinal) })
}

// OpenDevice starts opening the GPU engine in its own goroutine, for a
// caller that has decided, before the flags are parsed or the input read,
// that the run may use the GPU (the CLI opens it at process start where its
// command line passes OpensEarly): creating the context then overlaps the
// start-up and the read whole. Pass it as LoadOptions.Device: LoadGraph
// takes it, or gives it up without waiting where the graph is built on the
// CPU. A caller that never reaches LoadGraph gives it up (GiveUp) or closes
// it.
func OpenDevice() *DeviceOpening { return startOpening(newGPU) }

// OpenDeviceWith is OpenDevice with open in place of opening the GPU engine
// on the first device: tests pass an open that takes as long as
// they want, or fails.
func OpenDeviceWith(open func() (graph.GPUDevice, error)) *DeviceOpening { return startOpening(open) }

// OpensEarly reports whether a graph loaded with opt, from an edge input
// of inputBytes bytes (-1 where unknown), may be built on the GPU, so that
// opening the device before the read is worth it: OpenDeviceEarly's rule.
func OpensEarly(opt LoadOptions, inputBytes int64) bool { return opensEarly(opt, inputBytes) }

// opensEarly is OpenDeviceEarly's rule, the same as LoadGraph's (which
// opens the device where auto's sources reach minGPUSources) with the
// vertex count guessed from the input's size.
func opensEarly(opt LoadOptions, inputBytes int64) bool {
	switch opt.Engine {
	case "gpu":
		return true
	case "auto":
		if opt.Sources > 0 {
			return opt.Sources >= minGPUSources
		}
		return inputBytes < 0 || inputBytes >= minEarlyOpenBytes
	}
	return false
}

// startOpening runs open in a goroutine of its own. The engine's driver
// calls run on its device goroutine, locked to an OS thread
// (gpu/device.go), so the goroutine that opens it needs no lock of its own.
func startOpening(open func() (graph.GPUDevice, error)) *DeviceOpening {
	o := &DeviceOpening{done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(o.done)
		trace.Printf("pipeline", "opening the device")
		o.e, o.err = open()
		o.took = time.Since(start)
		trace.Printf("pipeline", "device opened (%v)", o.err == nil)
	}()
	return o
}

var errOpeningTaken = errors.New("pipeline: the early device opening was already taken or closed")

// take waits for the opening and hands its engine (or its error) to the
// caller, who closes the engine; waited is how long take blocked, took how
// long the open lasted. A second take, or a take after Close, fails.
func (o *DeviceOpening) take() (e graph.GPUDevice, took, waited time.Duration, err error) {
	o.mu.Lock()
	taken := o.taken
	o.taken = true
	o.mu.Unlock()
	if taken {
		return nil, 0, 0, errOpeningTaken
	}
	start := time.Now()
	<-o.done
	return o.e, o.took, time.Since(start), o.err
}

// Close waits for the opening to end and closes the engine it opened,
// unless LoadGraph took it. Closing twice does nothing.
func (o *DeviceOpening) Close() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	taken := o.taken
	o.taken = true
	o.mu.Unlock()
	if taken {
		return nil
	}
	<-o.done
	if o.e == nil {
		return nil
	}
	return o.e.Close()
}

// discard gives the opening up without waiting for it: a goroutine waits
// and closes the engine, so that a run on the CPU does not wait for a
// device it will not use. Unless taken already, later takes fail and Close
// does nothing.
func (o *DeviceOpening) discard() {
	if o == nil {
		return
	}
	o.mu.Lock()
	taken, exiting := o.taken, o.exiting
	o.taken = true
	o.mu.Unlock()
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

// GiveUp gives the opening up without waiting for it, unless LoadGraph took
// it: a goroutine waits for the open and closes the engine (abandons it,
// after LeaveToExit). Later takes fail and Close does nothing. Giving up
// twice, or the nil opening, does nothing.
func (o *DeviceOpening) GiveUp() { o.discard() }

// LeaveToExit says that the process exits right after the run: an engine
// the opening gives up is abandoned (graph.GPUDevice.Abandon), its context left
// to the exit to release, instead of torn down beside the run. Only a
// process about to exit calls it; the nil opening ignores it.
func (o *DeviceOpening) LeaveToExit() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.exiting = true
	o.mu.Unlock()
}

// pending reports whether the opening is still under way and not yet
// taken.
func (o *DeviceOpening) pending() bool {
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

// buildBesideOpening builds the CSR on the CPU while LoadGraph waits for an
// early opening still under way (the CPU is idle then: on an H100 the open
// of about 220 ms outlasts the read of R-MAT 16, 65 ms, by about 150 ms, and
// the CSR's build on the GPU after it took 36 ms). The build that is ready
// first is taken: the CPU's where it ended before the open did (Prepare then
// uploads it, a few ms), else the GPU's, as without this, the CPU's being
// dropped. So a load never waits longer than without it. false builds on
// the GPU after the open, always.
const buildBesideOpening = true

// maxRowsBesideOpening bounds the edge rows of a build beside the opening:
// where the GPU's build wins, the CPU's goes on aside until it ends, with a
// second CSR's memory (8 million rows: about a second of one core and 150
// MB).
const maxRowsBesideOpening = 8 << 20

// besideBuild is a CSR built on the CPU beside the opening, with the GPU
// kernel's plan begun after it (plansAhead), or nil.
type besideBuild struct {
	csr   *graph.CSR
	took  time.Duration
	err   error
	ahead graph.HostPlan
}

// plansAhead reports whether a graph loaded with opt has the plan of the
// batched kernel's block of every source (gpu.PlanAhead: the graph's
// shape and breadth-first rank, the leaves and minimums derived after the
// kernel, the phases, the groups' order, the seeds) made on the CPU once
// the CSR built beside the opening is done, while the device is still
// opening: the run then takes it instead of planning on its path (20-35
// ms for R-MAT 16 on an H100; a small run took 391-393 ms to its output
// closed against 423-445 ms, docs/benchmarks-history.md "Issue 18 (stats, every
// source)"). Only where the runs are auto over every vertex, and the
// graph has no negative weight (auto then runs the batched kernel); a run
// whose first device block is not every vertex, or that stops at a
// cutoff, plans its own and keeps only the graph's shape and rank.
// opt.planOwn (tests) has every run plan its own.
func plansAhead(opt LoadOptions) bool {
	return opt.Sources == 0 && (opt.Algorithm == "" || opt.Algorithm == graph.Auto) && !opt.planOwn
}

// startBuildBesideOpening starts building g's CSR on the CPU where early is
// still opening (buildBesideOpening), and returns where the build will be
// delivered; nil where it starts none. With plan, the GPU kernel's plan of
// every vertex (of the graph's shape and rank alone, past
// maxVerticesPlannedAhead) begins once the CSR is built, on a graph
// without negative weights while the opening has not failed
// (plansAhead), under tune (LoadOptions.Tune), and comes with it.
func (g *Graph) startBuildBesideOpening(early *DeviceOpening, bopt graph.BuildOptions, plan bool, tune string) <-chan besideBuild {
	if !buildBesideOpening || len(g.Table.Edges.Src) > maxRowsBesideOpening || !early.pending() {
		return nil
	}
	out := make(chan besideBuild, 1) // the build never waits for a reader
	go func() {
		start := time.Now()
		csr, err := graph.Build(&g.Table.Edges, bopt)
		b := besideBuild{csr: csr, took: time.Since(start), err: err}
		if err == nil && plan && !csr.HasNegative() && csr.NumVertices >= minGPUSources && !early.failed() {
			var sources []graph.VertexID // the graph's shape and rank alone
			if csr.NumVertices <= maxVerticesPlannedAhead {
				sources = everyVertex(csr.NumVertices)
			}
			b.ahead = gpuDriver.PlanAhead(csr, sources, tune)
		}
		out <- b
	}()
	return out
}

// maxVerticesPlannedAhead bounds the graphs whose block of every source is
// planned beside the opening: the stats layout holds 12 bytes per source
// and vertex on the device (two result rows and the working distances, of
// int32), so that every source of 65,536 vertices takes 51 GB, 80 % of an
// H100's free memory, the budget of a run. Beyond it the first device
// block holds fewer sources, which the plan of every source would not
// match: only the graph's shape and rank are measured ahead.
const maxVerticesPlannedAhead = 1 << 16

// everyVertex is the sources 0 .. n-1, in order: the block of a run of
// every vertex that fits the device whole.
func everyVertex(n int) []graph.VertexID {
	s := make([]graph.VertexID, n)
	for i := range s {
		s[i] = graph.VertexID(i)
	}
	return s
}

// finishBuildBesideOpening takes the CSR built beside the opening, if any
// (beside not nil): after the open failed (wait), once it is built; after
// the device e opened, only if it is built already. A CSR taken is g's,
// built on the CPU, with e kept for Run, and took is true; a build not yet
// done is dropped (the caller builds on e), and took is false. A table the
// build refuses is the error graph.Build's refusal gives wherever the CSR is
// built.
func (g *Graph) finishBuildBesideOpening(beside <-chan besideBuild, e graph.GPUDevice, wait bool) (took bool, err error) {
	if beside == nil {
		return false, nil
	}
	var b besideBuild
	if wait {
		b = <-beside
	} else {
		select {
		case b = <-beside:
		default:
			return false, nil
		}
	}
	if b.err != nil {
		return false, fmt.Errorf("%s: %w", g.Table.Name, b.err)
	}
	g.CSR, g.builtOn, g.buildTime, g.device = b.csr, "cpu", b.took, e
	g.times.BesideOpen = true
	if e != nil && b.ahead != nil {
		e.AdoptPlan(b.ahead)
		g.ahead = b.ahead
	}
	return true, nil
}

// failed reports whether the opening ended without an engine (no GPU
// here): a plan for the GPU is then not worth making. false while it is
// under way.
func (o *DeviceOpening) failed() bool {
	select {
	case <-o.done:
		return o.err != nil
	default:
		return false
	}
}

// Started reports whether an opening was started (a non-nil opening).
func (o *DeviceOpening) Started() bool { return o != nil }

// EarlyDevices are the GPU engines OpenEarly began to open for one graph.
// The nil *EarlyDevices opened nothing.
type EarlyDevices struct {
	first  *DeviceOpening // nil where the caller's LoadOptions.Device was set
	others *OtherDevices
	exits  bool // LoadOptions.ExitAfter
}

// OpenEarly begins to open, beside the read of an edge input of
// inputBytes bytes (-1 where unknown), the GPU engines that a graph
// loaded with *opt may take, under OpenDeviceEarly's rule: the first
// device, unless opt.Device is set already (an opening begun at process
// start, OpenDevice), and the others of a run over several
// (OpenOtherDevicesEarly). It sets opt.Device and opt.OtherDevices for
// LoadGraph. Release the result on every path, read failures included.
func OpenEarly(opt *LoadOptions, inputBytes int64) *EarlyDevices {
	e := &EarlyDevices{exits: opt.ExitAfter}
	if opt.Device == nil {
		e.first = OpenDeviceEarly(*opt, inputBytes)
		opt.Device = e.first
	}
	e.others = OpenOtherDevicesEarly(*opt, inputBytes)
	opt.OtherDevices = e.others
	if e.exits {
		e.first.LeaveToExit()
		e.others.LeaveToExit()
	}
	return e
}

// Release ends what no graph took of the openings: after ExitAfter it
// gives them up without waiting (GiveUp: a goroutine abandons each engine
// to the exit), else it waits for them and closes their engines. What a
// graph took stays the graph's (Graph.Release). Releasing twice, or the
// nil *EarlyDevices, does nothing more.
func (e *EarlyDevices) Release() {
	if e == nil {
		return
	}
	if e.exits {
		e.others.GiveUp()
		e.first.GiveUp()
		return
	}
	e.others.Close()
	e.first.Close()
}

// Release ends g's use of its GPU engine, once every run on g ended and
// its results were written: where g was loaded with ExitAfter it leaves
// the device to the process exit (AbandonDevice), which releases it at
// once, else it closes it (Close), which frees it piece by piece. A graph
// without a device does nothing; Close does nothing after it.
func (g *Graph) Release() error {
	if g.exitAfter {
		return g.AbandonDevice()
	}
	return g.Close()
}

// OpenTimes says where opening a GPU engine took its time (the GPU
// engine's split of its opening).
type OpenTimes = graph.GPUOpenTimes

// AbandonDevice ends the use of the GPU engine a graph built on the GPU
// keeps, without tearing its context down (gpu.Engine.Abandon), for a
// process that exits right after the run: the exit releases the device at
// once, where Close frees it piece by piece (91 ms on an H100 after R-MAT
// 16). Call it only once every run on g ended and its results were
// written; Close does nothing after it. A graph without a device, or one
// closed, does nothing. Processes that go on (a server, tests) call Close.
func (g *Graph) AbandonDevice() error {
	if o := g.takeOthers(); o != nil {
		o.LeaveToExit()
		o.giveUp()
	}
	if e := g.takeDevice(); e != nil {
		return e.Abandon()
	}
	return nil
}

// DeviceOpenTimes says where opening the GPU engine that g keeps took its
// time (zero where g keeps none: built on the CPU, or closed).
func (g *Graph) DeviceOpenTimes() OpenTimes {
	g.mu.Lock()
	e := g.device
	g.mu.Unlock()
	if e == nil {
		return OpenTimes{}
	}
	return e.OpenTimes()
}
