package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
)

// LoadOptions shape the graph built from an edge table. The zero value
// builds a directed graph on the CPU with the distance type design.md
// chooses.
type LoadOptions struct {
	// Undirected adds every row in both directions.
	Undirected bool
	// DistType overrides the distance type; 0 chooses by design.md's rule.
	DistType graph.DistType
	// Engine says where the CSR is built: "cpu" (also the default, ""),
	// "gpu", or "auto" (the GPU where one is usable and the runs will be
	// large enough for Run's auto to take it, else the CPU). A graph built
	// on the GPU keeps the GPU engine open for Run until Close.
	Engine string
	// Sources is the number of sources the runs will have, when known; 0
	// means every vertex. Auto builds on the CPU below the count at which
	// Run's auto engine stays on the CPU.
	Sources int
	// Log, when set, receives where the CSR was built and how long it took
	// (--verbose).
	Log io.Writer
	// Notice, when set, receives a line when the build on the GPU failed
	// for a reason of the device and the CSR was built on the CPU instead.
	Notice io.Writer
	// Vertices, when set, are added to the table's vertex set before the
	// build (arrowio.EdgeTable.AddVertices, which renumbers the table in
	// place): ids without edges become vertices every other vertex finds
	// unreachable. nil: the vertex set is the ids in the edges.
	Vertices *arrowio.Vertices
	// Device, when set, is the GPU engine opening beside the read
	// (gpu/devices' Opening, begun where OpensEarly says so): where
	// LoadGraph builds on the GPU it takes that engine, waiting for what
	// is left of the open, instead of opening one; where it builds on the
	// CPU it gives the opening up without waiting (a goroutine closes it).
	Device graph.GPUOpening
	// OtherDevices, when set, are the engines of the run's devices past
	// the first, opening beside the read (gpu/devices' Others): where
	// LoadGraph builds for the GPU the graph keeps them for its runs over
	// several devices (and ends those no run took in Close or
	// AbandonDevice); otherwise it gives them up.
	OtherDevices graph.GPUOthers
	// ExitAfter says that the process exits right after the graph's runs
	// (the CLI's): Release leaves the graph's device to the exit
	// (AbandonDevice) rather than closing it.
	ExitAfter bool
	// Devices are the GPUs the runs will use (Resources.Devices): a CSR
	// built on the GPU is built on the first of them. nil: device 0.
	Devices []int
	// Algorithm is what the runs will compute (Query.Algorithm; "" is
	// auto). Where it is auto and Sources every vertex, a CSR built
	// beside an early opening has the GPU kernel's plan of every source
	// made beside it too (plansAhead).
	Algorithm Algorithm
	// Tune is the runs' Resources.Tune: the GPU kernel's plan made beside an
	// early opening is made under it, so that the runs can take it. A bad
	// spec is an ErrInvalid naming the setting.
	Tune string

	// planOwn (tests) has every run plan the GPU kernel's plan itself
	// rather than take one made beside the opening, so that a test
	// compares both.
	planOwn bool
}

// LoadTimes is where LoadGraph's time went, for --verbose.
type LoadTimes struct {
	// Build is the CSR build alone.
	Build time.Duration
	// DeviceOpen is how long opening the GPU engine took, whether or not
	// it succeeded; 0 where none was opened.
	DeviceOpen time.Duration
	// DeviceWait is the part of DeviceOpen that LoadGraph waited for: all
	// of it where LoadGraph opened the device, what was left of an early
	// opening (LoadOptions.Device) after the read otherwise.
	DeviceWait time.Duration
	// Early says that the device was opened early, beside the read.
	Early bool
	// BesideOpen says that the CSR was built on the CPU while LoadGraph
	// waited for an early opening (startBuildBesideOpening): Build lies inside
	// DeviceWait.
	BesideOpen bool
	// PlanAhead is how long the GPU kernel's plan made after that build,
	// still beside the opening (plansAhead), took; 0 where none was
	// made, or it is not yet made. PlanAheadUsed says that the run took
	// it (else the run planned its own: another block, algorithm or
	// cutoff).
	PlanAhead     time.Duration
	PlanAheadUsed bool
}

// Graph is an edge table with its CSR, ready to run. Close it when done: a
// graph built on the GPU holds the device. Table, CSR and Undirected are
// valid wherever the CSR was built. The contraction hierarchy that a run
// of ch builds stays with the graph for its later runs (chkept.go).
type Graph struct {
	Table      *arrowio.EdgeTable
	CSR        *graph.CSR
	Undirected bool

	builtOn   string    // "cpu" or "gpu"
	times     LoadTimes // Build is buildTime, set once built
	buildTime time.Duration

	mu sync.Mutex
	// device is the GPU engine that built CSR, kept for Run (one context per
	// graph, and the first Prepare adopts the device copy of CSR); nil on
	// graphs built on the CPU and after Close.
	device graph.GPUDevice
	// gpuErr is why LoadGraph found no usable GPU, so that Run says so
	// without trying again.
	gpuErr error
	// ahead is the GPU kernel's plan made beside the opening, handed to
	// device (plansAhead); nil where none was.
	ahead graph.HostPlan
	// exitAfter is LoadOptions.ExitAfter: Release abandons the device.
	exitAfter bool
	// others are the openings of the other devices of runs over several
	// (LoadOptions.OtherDevices), kept where the graph was built for the
	// GPU; nil otherwise and after Close.
	others graph.GPUOthers

	// ch is the contraction hierarchy of CSR that the runs of ch build
	// once and share (chkept.go).
	ch keptHierarchy
	// rounds: the CSR's float64 arcs hold float32 weights, whose results
	// are rounded to float32 (rounding.go).
	rounds bool
}

// LoadGraph builds the CSR of t, on the CPU or the GPU as opt.Engine says,
// and logs where and how long it took. Errors name the table and read the
// same wherever the CSR was built; an engine name other than auto, cpu and
// gpu wraps ErrInvalid, and "gpu" without a usable GPU wraps
// ErrUnavailable, saying why. Where opt.Device is an early opening, the GPU
// is that one (see LoadOptions.Device), and Times says how long the build
// waited for it.
func LoadGraph(t *arrowio.EdgeTable, opt LoadOptions) (*Graph, error) {
	// An early opening the build does not take is given up on every path,
	// and so are the other devices' where the graph does not keep them.
	if opt.Device != nil {
		defer opt.Device.GiveUp()
	}
	if opt.OtherDevices != nil {
		defer opt.OtherDevices.GiveUp()
	}
	tune, err := gpuTuning(opt.Tune)
	if err != nil {
		return nil, err
	}
	if err := t.AddVertices(opt.Vertices); err != nil {
		return nil, err
	}
	g := &Graph{Table: t, Undirected: opt.Undirected, exitAfter: opt.ExitAfter}
	bopt := graph.BuildOptions{Undirected: opt.Undirected, DistType: opt.DistType}
	if err := checkDistanceRange(t, &bopt); err != nil {
		return nil, err
	}
	g.rounds = computeInFloat64(t, &bopt) // rounding.go
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	switch opt.Engine {
	case "", "cpu":
	case "gpu", "auto":
		sources := opt.Sources
		if sources <= 0 {
			sources = t.Edges.NumVertices
		}
		if opt.Engine == "auto" && sources < minGPUSources {
			break
		}
		// While an early opening is still under way, the CSR is built on
		// the CPU beside it (opening.go).
		beside := startBuildBesideOpening(g, opt.Device, bopt, plansAhead(opt), tune)
		e, err := g.openDevice(opt.Device, firstDevice(opt.Devices))
		if err != nil {
			if opt.Engine == "gpu" {
				return nil, gpuUnavailable(err)
			}
			g.gpuErr = err
			if _, err := finishBuildBesideOpening(g, beside, nil, true); err != nil {
				return nil, err
			}
			break
		}
		if took, err := finishBuildBesideOpening(g, beside, e, false); took || err != nil {
			if err != nil {
				return nil, errors.Join(err, e.Close())
			}
			g.keepOthers(opt.OtherDevices)
			break
		}
		if err := g.buildOnGPU(e, opt.Notice, bopt); err != nil {
			return nil, errors.Join(err, e.Close())
		}
		g.keepOthers(opt.OtherDevices)
	default:
		return nil, fmt.Errorf("%w: unknown engine %q (want auto, cpu or gpu)", ErrInvalid, opt.Engine)
	}
	if g.CSR == nil {
		start := time.Now()
		csr, err := graph.Build(&t.Edges, bopt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		g.CSR, g.builtOn, g.buildTime = csr, "cpu", time.Since(start)
	}
	g.times.Build = g.buildTime
	trace.Printf("pipeline", "graph loaded (CSR built on the %s in %s)", g.builtOn, roundTime(g.buildTime))
	switch {
	case g.times.BesideOpen:
		fmt.Fprintf(log, "pathctl: CSR built on the CPU in %s while the device was opening (opening it took %s, begun early; %s of it after the read)\n",
			roundTime(g.buildTime), roundTime(g.times.DeviceOpen), roundTime(g.times.DeviceWait))
	case g.builtOn == "gpu" && g.times.Early:
		fmt.Fprintf(log, "pathctl: CSR built on the GPU in %s (opening the device took %s, beside the read; %s of it after the read)\n",
			roundTime(g.buildTime), roundTime(g.times.DeviceOpen), roundTime(g.times.DeviceWait))
	case g.builtOn == "gpu":
		fmt.Fprintf(log, "pathctl: CSR built on the GPU in %s (opening the device took %s)\n", roundTime(g.buildTime), roundTime(g.times.DeviceOpen))
	default:
		fmt.Fprintf(log, "pathctl: CSR built on the CPU in %s\n", roundTime(g.buildTime))
	}
	return g, nil
}

// openDevice opens the GPU engine, or takes it from early where the read
// began to open it, and records how long that took.
func (g *Graph) openDevice(early graph.GPUOpening, ordinal int) (graph.GPUDevice, error) {
	if early != nil {
		e, took, waited, err := early.Take()
		if !errors.Is(err, graph.ErrOpeningTaken) {
			g.times.DeviceOpen, g.times.DeviceWait, g.times.Early = took, waited, true
			return e, err
		}
	}
	start := time.Now()
	e, err := gpuDriver.Open(ordinal)
	g.times.DeviceOpen = time.Since(start)
	g.times.DeviceWait = g.times.DeviceOpen
	return e, err
}

// Times says where LoadGraph's time went, and how the plan made beside
// the opening went, as far as it went when called.
func (g *Graph) Times() LoadTimes {
	t := g.times
	if g.ahead != nil {
		t.PlanAhead, t.PlanAheadUsed = g.ahead.Took(), g.ahead.Used()
	}
	return t
}

// buildOnGPU builds the CSR with e, which keeps its device copy for the
// first Prepare, and keeps e in g for Run. Where the device fails on edges
// that graph.Build accepts (out of memory, a driver error), it builds on
// the CPU instead, says so on notice and still keeps e; where graph.Build
// refuses the edges too, it returns graph.Build's error, so that a bad
// table reads the same whichever engine built it. e is the caller's to
// close when buildOnGPU fails.
func (g *Graph) buildOnGPU(e graph.GPUDevice, notice io.Writer, bopt graph.BuildOptions) error {
	t := g.Table
	start := time.Now()
	csr, gerr := e.BuildCSRResident(context.Background(), &t.Edges, bopt)
	if gerr == nil {
		g.CSR, g.builtOn, g.buildTime, g.device = csr, "gpu", time.Since(start), e
		return nil
	}
	start = time.Now()
	csr, err := graph.Build(&t.Edges, bopt)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	g.CSR, g.builtOn, g.buildTime, g.device = csr, "cpu", time.Since(start), e
	if notice != nil {
		fmt.Fprintf(notice, "pathctl: building the CSR on the GPU failed (%v); built it on the CPU\n", gerr)
	}
	return nil
}

// roundTime keeps a duration's first three or four digits for the log.
func roundTime(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond / 10)
}

// BuiltOn is "gpu" when the CSR was built on the GPU, else "cpu".
func (g *Graph) BuiltOn() string {
	if g.builtOn == "" {
		return "cpu"
	}
	return g.builtOn
}

// HoldsDevice reports whether g keeps an opened GPU engine for its runs:
// a graph built on the GPU, or on the CPU while the device opened beside
// the read (BuiltOn says "cpu" then, and the runs are the GPU's).
func (g *Graph) HoldsDevice() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.device != nil
}

// Close releases the GPU engine a graph built on the GPU keeps, with the
// device copy of its CSR if no run adopted it. Table, CSR and Undirected
// stay valid; later runs open an engine of their own. Closing twice, or a
// graph built on the CPU, does nothing. Close no graph that a Run is using.
func (g *Graph) Close() error {
	var err error
	if o := g.takeOthers(); o != nil {
		err = o.End(false)
	}
	if e := g.takeDevice(); e != nil {
		return errors.Join(err, e.Close())
	}
	return err
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

// AbandonDevice ends the use of the GPU engine a graph built on the GPU
// keeps, without tearing its context down (gpu.Engine.Abandon), for a
// process that exits right after the run: the exit releases the device at
// once, where Close frees it piece by piece (91 ms on an H100 after R-MAT
// 16). Call it only once every run on g ended and its results were
// written; Close does nothing after it. A graph without a device, or one
// closed, does nothing. Processes that go on (a server, tests) call Close.
func (g *Graph) AbandonDevice() error {
	if o := g.takeOthers(); o != nil {
		o.End(true)
	}
	if e := g.takeDevice(); e != nil {
		return e.Abandon()
	}
	return nil
}

// DeviceOpenTimes says where opening the GPU engine that g keeps took its
// time (zero where g keeps none: built on the CPU, or closed).
func (g *Graph) DeviceOpenTimes() graph.GPUOpenTimes {
	g.mu.Lock()
	e := g.device
	g.mu.Unlock()
	if e == nil {
		return graph.GPUOpenTimes{}
	}
	return e.OpenTimes()
}

// keepOthers keeps the other devices' openings with g for its runs.
func (g *Graph) keepOthers(o graph.GPUOthers) {
	if o == nil {
		return
	}
	o.Keep()
	g.mu.Lock()
	g.others = o
	g.mu.Unlock()
}

// takeOthers hands over the other devices' openings g keeps, if any, and
// forgets them.
func (g *Graph) takeOthers() graph.GPUOthers {
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.others
	g.others = nil
	return o
}

// takeDevice hands over the engine g keeps, if any, and forgets it.
func (g *Graph) takeDevice() graph.GPUDevice {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.device
	g.device = nil
	return e
}

// NumVertices is the vertex count.
func (g *Graph) NumVertices() int { return g.CSR.NumVertices }

// vertexName formats dense id v as its external id.
func (g *Graph) vertexName(v graph.VertexID) string {
	if v < 0 || int(v) >= g.Table.Vertices.Len() {
		return fmt.Sprint(v)
	}
	return g.Table.Vertices.Format(v)
}

// resolveSources maps external ids to dense ids; nil means every vertex.
// A source named twice (or by two spellings of one id, "7" and "007") is
// kept once, at its first place: each source is run once and its rows
// appear once in the result.
func (g *Graph) resolveSources(ids []string) ([]graph.VertexID, error) {
	if ids == nil {
		all := make([]graph.VertexID, g.NumVertices())
		for i := range all {
			all[i] = graph.VertexID(i)
		}
		return all, nil
	}
	dense, at, err := g.lookupAll(ids)
	if err != nil {
		return nil, fmt.Errorf("%w: %w %q: %v", ErrInvalid, ErrUnknownSource, ids[at], err)
	}
	out := dense[:0]                                // the kept ones, in place
	seen := make([]uint64, (g.NumVertices()+63)/64) // a bit per vertex
	for _, v := range dense {
		if word, bit := v/64, uint64(1)<<(v%64); seen[word]&bit == 0 {
			seen[word] |= bit
			out = append(out, v)
		}
	}
	return out, nil
}

// resolveTargets maps the external ids of Query.Targets to dense ids, in
// their given order; nil for every vertex.
func (g *Graph) resolveTargets(ids []string) ([]graph.VertexID, error) {
	if ids == nil {
		return nil, nil
	}
	out, at, err := g.lookupAll(ids)
	if err != nil {
		return nil, fmt.Errorf("%w: %w %q: %v", ErrInvalid, ErrUnknownTarget, ids[at], err)
	}
	return out, nil
}

// resultType is the distance type of the results of a run of algorithm
// a: int32 hop counts, float32 for float32 weights computed in float64
// (rounding.go), else the CSR's.
func (g *Graph) resultType(a graph.Algorithm) graph.DistType {
	switch {
	case countsHops(g, a):
		return graph.DistInt32
	case roundsRuns(g, a):
		return graph.DistFloat32
	}
	return g.CSR.Type
}

// DistType is the distance type of the graph's weighted results: the
// CSR's, or float32 for float32 weights computed in float64.
func (g *Graph) DistType() graph.DistType { return g.resultType(graph.Dijkstra) }

// lookupPart is the fewest ids one goroutine of lookupAll looks up: a
// lookup takes some 100 ns, a goroutine a few microseconds.
const lookupPart = 1024

// lookupAll returns the dense ids of the external ids ids, in their order,
// looked up on every core for long lists (issue 17's 10,000 sources among
// a million vertices). On an id that names no vertex it returns the first
// such id's place in ids and Lookup's error.
func (g *Graph) lookupAll(ids []string) ([]graph.VertexID, int, error) {
	dense := make([]graph.VertexID, len(ids))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(ids)/lookupPart))
	per := (len(ids) + parts - 1) / parts
	errs := make([]error, parts)
	bad := make([]int, parts) // the first bad place of each part
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p * per; i < min((p+1)*per, len(ids)); i++ {
				v, err := g.Table.Vertices.Lookup(ids[i])
				if err != nil {
					errs[p], bad[p] = err, i
					return
				}
				dense[i] = v
			}
		}()
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			return nil, bad[p], err
		}
	}
	return dense, 0, nil
}

// explain rewrites engine errors that carry dense ids with external ids.
func (g *Graph) explain(err error) error {
	switch e := err.(type) {
	case *graph.NegativeWeightError:
		return &externalError{err: e, msg: fmt.Sprintf(
			"%s: negative weight %v on edge %s -> %s: algorithm %q needs non-negative weights; use the bellman-ford algorithm",
			g.Table.Name, e.Weight, g.vertexName(e.From), g.vertexName(e.To), e.Algorithm)}
	case *graph.NegativeCycleError:
		return &externalError{err: e, msg: fmt.Sprintf(
			"%s: negative cycle through vertex %s (reachable from source %s)",
			g.Table.Name, g.vertexName(e.Vertex), g.vertexName(e.Source))}
	}
	return err
}

// externalError keeps the typed engine error for errors.As while its
// message speaks of external ids.
type externalError struct {
	err error
	msg string
}

func (e *externalError) Error() string { return e.msg }
func (e *externalError) Unwrap() error { return e.err }
