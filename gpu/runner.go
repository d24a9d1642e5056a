package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// Runner runs the blocks of one request on a graph uploaded to the device.
// It satisfies graph.Runner. Its methods may be called from any
// goroutine; runs of one Runner do not overlap.
type Runner struct {
	e   *Engine
	g   *graph.CSR
	req graph.Request // its Algorithm resolved: never graph.Auto
	n   int
	// ordinal is the device's, -1 for a runner without one (tests of the
	// host's choices), for the PATHCTL_TRACE timeline.
	ordinal int
	// autoWhy is why Prepare chose req.Algorithm for a request of
	// graph.Auto; empty when the algorithm was asked for.
	autoWhy string

	distType graph.DistType // of the results
	delta    float64        // bucket width of delta-stepping

	// csr is the graph on the device (runnercsr.go).
	csr runnerCSR
	// narrow narrows the blocks to the request's targets, cutoff or k
	// nearest on the device (gather.go).
	narrow narrowing

	// buf is the block's per-source buffers and the two result slots
	// (runnerbufs.go, overlap.go, copier.go).
	buf blockBufs

	mu     sync.Mutex
	closed bool

	kernelTime time.Duration // device time of the last Run's kernels
	host       hostTimes     // host time of the last Run beside the kernels

	// bk is how the batched kernel plans and runs (batched.go).
	bk batchedKernel
	// blockSources are the sources of the block being computed, as
	// uploaded to r.buf.sources (the batched kernel plans on the host).
	blockSources []graph.VertexID
	// frontierRows, while the hub store runs hub rows (runPlan), is where
	// their first phase's frontier lies instead of the start of r.buf.dist
	// (the hub rows themselves then): the block's rows.
	frontierRows devBuf
	// hubs are the hub rows kept past a stats block's rows (hubs.go).
	hubs hubStore
	// ch is the hierarchy of the algorithm ch (ch.go), nil for the others.
	ch *chSweep
	// bc is the betweenness buffers (betweenness.go), empty until
	// RunBetweenness.
	bc brandesBufs
}

// layout is the bytes per vertex of each per-source buffer.
type layout struct {
	dist  int // the distance row (the result)
	aux   int // predist, packed cells or the level row of the predecessor pass
	flags int // changed / pending / frontier bytes
	pred  int // the predecessor row (the result)
}

// kernelPlan is how one algorithm runs on the device; each algorithm's file
// (dijkstra.go, delta.go, ...) defines its own.
type kernelPlan struct {
	// layout is the per-vertex bytes of the algorithm's own buffers, for
	// distances of type t; with predecessors when withPred.
	layout func(t graph.DistType, withPred bool) layout
	// launch runs the kernels that fill r.buf.dist (and r.buf.pred when they track
	// predecessors) for the k sources in r.buf.sources.
	launch func(r *Runner, k int) error
	// derivesPredecessors reports whether predecessors.cu must derive the
	// predecessors from the distances after launch.
	derivesPredecessors func(t graph.DistType) bool
	// status reports whether the kernels write r.buf.status (negative cycles).
	status bool
}

// plans maps every algorithm the engine runs to its plan.
var plans = map[graph.Algorithm]kernelPlan{
	graph.Dijkstra:    dijkstraPlan,
	graph.Delta:       deltaPlan,
	graph.Edge:        edgePlan,
	graph.BFS:         bfsPlan,
	graph.BFSLevel:    bfsLevelPlan,
	graph.BellmanFord: bellmanFordPlan,
	Batched:           batchedPlan, // auto's own kernel (batched.go)
	graph.CH:          chPlan,      // over a hierarchy (ch.go): PrepareCH only
}

// layoutOf completes the plan's layout: the predecessor row, and a level row
// for the predecessor pass where the plan has no auxiliary row to lend.
func layoutOf(alg graph.Algorithm, t graph.DistType, withPred bool) layout {
	p := plans[alg]
	l := p.layout(t, withPred)
	if withPred {
		l.pred = 4
		if p.derivesPredecessors(t) {
			l.aux = max(l.aux, 4)
		}
	}
	return l
}

func never(graph.DistType) bool  { return false }
func always(graph.DistType) bool { return true }

func newRunner(e *Engine, g *graph.CSR, req graph.Request, batched batchedConfig) *Runner {
	r := &Runner{e: e, g: g, req: req, n: g.NumVertices, distType: g.Type, ordinal: -1}
	if req.Algorithm.CountsHops() {
		r.distType = graph.DistInt32
	}
	if req.Algorithm == graph.Delta {
		r.delta = chooseDelta(g, req.Delta)
	}
	r.narrow = narrowing{req: req, n: r.n, distType: r.distType}
	r.hubs.r = r
	r.bk = batchedKernel{cfg: batched, graph: plan.NewGraph(g), g: g, req: req, n: r.n, distType: r.distType, reqBits: r.narrow.cutBits()}
	r.buf.n, r.buf.distType = r.n, r.distType
	if e != nil {
		r.buf.dv, r.ordinal = e.dev, e.dev.ordinal
	}
	return r
}

// deltaScale multiplies mean weight / mean out-degree into the default
// bucket width. Measured on an H200 with 1024 sources per block (kernel ms,
// delta-stepping): R-MAT scale 16, width 1×: 213, 4×: 186, 16×: 258, 32×: 289;
// 256×256 grid, 1×: 1388, 4×: 742, 16×: 459, 32×: 402. One block per source
// scans every vertex a few times per bucket, so few wide buckets beat many
// narrow ones as soon as the graph's diameter is large; 16× is the compromise.
const deltaScale = 16

// chooseDelta is asked when positive, else deltaScale times the mean weight
// over the mean out-degree (Meyer and Sanders' Θ(1/d) width for weights in
// [0, 1], scaled to the weights), at least 1 for integer weights and never 0.
func chooseDelta(g *graph.CSR, asked float64) float64 {
	if asked > 0 {
		return asked
	}
	m := g.NumEdges()
	if m == 0 || g.NumVertices == 0 {
		return 1
	}
	var sum float64
	for k := int64(0); k < m; k++ {
		sum += g.WeightAt(k)
	}
	mean := sum / float64(m)
	degree := float64(m) / float64(g.NumVertices)
	d := deltaScale * mean / math.Max(degree, 1)
	if !g.Type.IsFloat() {
		d = math.Max(math.Floor(d), 1)
	}
	if d <= 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		d = 1
	}
	return d
}

// DistType is the element type of the blocks Run fills: the graph's type,
// or int32 hop counts for bfs and bfs-level.
func (r *Runner) DistType() graph.DistType { return r.distType }

// ConvertValues makes the runner fill its blocks with values of type t
// (graph.ValueConverter): int32 distances as float32, int64 distances as
// float64, and float64 distances rounded to nearest float32 (a float32
// result computed in float64: half the bytes to the host), rewritten on
// the device (convert.cu) as each block's rows are queued for the host,
// unreachable as +Inf. For the integers the caller has checked that t
// holds every distance exactly. It reports false, and changes nothing,
// for any other pair of types, for a narrowed runner (whose gathered
// cells keep the distances' type), with predecessors, and once a block
// has run.
func (r *Runner) ConvertValues(t graph.DistType) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.buf.capacity > 0 || r.narrow.on() || r.req.WithPredecessors || convertKernel(r.distType, t) == "" {
		return false
	}
	r.buf.values = t
	return true
}

// Narrowed reports whether Run honours the request's targets and cutoff
// itself (graph.NarrowRunner): true for a request with targets or a cutoff
// and without predecessors. Such a runner's blocks hold only the targets'
// columns (every vertex's without targets), with every distance above the
// cutoff made unreachable (gather.go).
func (r *Runner) Narrowed() bool { return r.narrow.on() }

// NarrowsAhead reports that Start and RunStats honour the request's
// targets and cutoff as Run does (package pipeline then starts narrowed
// blocks ahead and reduces their stats on the device); ComputeResident
// refuses a narrowed runner.
func (r *Runner) NarrowsAhead() bool { return true }

// SelectNearest makes the runner's blocks the k nearest of every source
// (design.md, "Queries narrower than all pairs"), selected on the device:
// per source, the k nearest other vertices among the request's targets
// (every vertex without), within its cutoff, by distance and then vertex,
// nearest first. Run and Start then fill blocks of k columns whose
// CellTargets name the vertices (graph.NewBlock of k columns, NumVertices
// the graph's, CellTargets of len(Sources)·k), -1 and Infinity where a
// source reaches fewer: the blocks package pipeline's host selection
// makes. It reports false, and changes nothing, for k outside
// [1, MaxDeviceNearest], for a runner with predecessors, and once a block
// has run.
func (r *Runner) SelectNearest(k int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf.capacity > 0 || r.closed {
		return false
	}
	return r.narrow.selectNearest(k)
}

// DownloadedBytes is the number of result bytes (distances, predecessors,
// validity bitmaps, stats words) the runner has copied from the device to
// the host since Prepare: for a narrowed runner, sources × targets × the
// distance's size per Run, and for one that selects the k nearest,
// sources × k × (the distance's size + 4).
func (r *Runner) DownloadedBytes() int64 { return r.buf.downloaded.Load() }

// SizeStatsRun sizes the hub rows of a stats run of sources sources whose
// blocks have budget bytes of device memory (graph.StatsRunSizer), and
// begins their plan (hubStore.size, hubs.go).
func (r *Runner) SizeStatsRun(sources int, budget int64) { r.hubs.size(sources, budget) }

// StatsFixedBytes is the device memory a stats block takes whatever its
// size (graph.StatsSizer): the scratch working distances (scratch.go) and
// the hub rows the block may keep (hubStore.fixedBytes, hubs.go).
func (r *Runner) StatsFixedBytes() int64 { return r.hubs.fixedBytes() }

// HubRowsReport says, for --verbose, what the runner's hub rows (hubs.go)
// cost: how many, where each part was computed and in how long, and what
// was copied between devices; empty where the runner keeps none.
func (r *Runner) HubRowsReport() string { return r.hubs.report() }

// Describe names the kernel the runner runs; for a request of auto, the
// one Prepare chose and why (graph.Describer).
func (r *Runner) Describe() string { return describeKernel(r.req.Algorithm, r.autoWhy) }

// BlockOrder makes the runner a graph.SourceOrderer: the batched kernel's
// blocks derive rows only from rows of the same block, and
// plan.Graph.BlockOrder chooses which sources share one. It is nil where
// the runner derives no row (another kernel than the batched one,
// predecessors, or float distances whose derived rows would not be
// exact) and under plan.Config.BlockOrder off (--tune blockorder=0).
// Where the blocks keep hub rows (hubs.go), the hubs among the sources
// come first, in the hub rows' order (plan.HubsFirst).
func (r *Runner) BlockOrder(sources []graph.VertexID, block int) []int32 {
	c := r.bk.cfg.Config
	if !c.BlockOrder || r.req.Algorithm != Batched || r.req.WithPredecessors || !(c.Leaves || c.Mins) || !derivesExactly(r.distType, r.bk.cfg, r.bk.graph) {
		return nil
	}
	order := r.bk.graph.BlockOrder(sources, block)
	if h := r.hubs.forBlock(block); h > 0 && order != nil {
		if hubs, err := r.hubs.vertices(h); err == nil { // else the block's plan says why
			order = plan.HubsFirst(order, sources, hubs)
		}
	}
	return order
}

// HubOrder is the sources' own order with the hubs among them spread over
// its blocks of block sources, each block's share first and in the hub
// rows' order (plan.HubsSpread), where such blocks keep hub rows
// (hubs.go); nil otherwise. On several devices, whose blocks keep the
// given order, every block then copies its hubs' rows in one piece and
// derives about as many rows as the others.
func (r *Runner) HubOrder(sources []graph.VertexID, block int) []int32 {
	h := r.hubs.forBlock(block)
	if h == 0 || block >= len(sources) {
		return nil
	}
	hubs, err := r.hubs.vertices(h)
	if err != nil {
		return nil
	}
	given := make([]int32, len(sources))
	for i := range given {
		given[i] = int32(i)
	}
	return plan.HubsSpread(given, sources, hubs, block)
}

// PinHost page-locks b, host memory (Go memory, or a shared mapping of a
// file in memory), for the device's copies: a result copy whose
// destination lies wholly in pinned memory (in one range, or in ranges
// pinned side by side) lands there directly. b stays allocated, and
// pinned, until UnpinHost or the engine's Close. The memory must not be
// pinned already. Pinning touches every page of b, so it pays off for
// memory that several blocks reuse or that is the result's final place;
// it runs beside the device goroutine, so it may overlap a block's
// kernels, and several PinHost calls may run at once (the driver's call
// is made outside the lock that copies consult).
func (r *Runner) PinHost(b []byte) error { return r.e.dev.pins.pin(r.e.dev, b) }

// UnpinHost unlocks memory PinHost pinned, once no copy writes into it any
// more; b must be the slice given to PinHost. Unpinning what is not
// pinned, or after the engine closed, does nothing. The range stops
// counting as pinned for new copies at once; the copies already queued
// land before the driver unlocks it.
func (r *Runner) UnpinHost(b []byte) error { return r.e.dev.pins.unpin(r.e.dev, b) }

// Close frees the device memory of the runner. Closing twice is a no-op.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.e.mu.Lock()
	delete(r.e.runners, r)
	r.e.mu.Unlock()
	return r.e.dev.do(r.release)
}

// Run fills out with the distances (and predecessors, when out.Pred is set)
// from every source of out.Sources: Start, then Wait. All sources of the
// block run in one kernel launch, one thread block each; cancellation is
// noticed before the launch, not during it. A negative cycle reachable from
// a source gives a *graph.NegativeCycleError naming a vertex on it. A
// narrowed runner (Narrowed) fills blocks of the targets' columns instead,
// gathered and clipped on the device, and one that selects the k nearest
// (SelectNearest) blocks of those (gather.go).
func (r *Runner) Run(ctx context.Context, out *graph.Block) error {
	p, err := r.Start(ctx, out)
	if err != nil {
		return err
	}
	return p.Wait()
}

// errCycle stops a block's chunks at the first that reaches a negative
// cycle.
var errCycle = errors.New("gpu: negative cycle")

// checkFullBlock checks that out is a block of full rows for a runner
// over n vertices of values of type t (its distances', or those it
// converts them to), with predecessors only where
// the runner was prepared withPred.
func checkFullBlock(out *graph.Block, n int, t graph.DistType, withPred bool) error {
	k := len(out.Sources)
	if out.NumVertices != n {
		return fmt.Errorf("gpu: block over %d vertices for a graph of %d", out.NumVertices, n)
	}
	if out.Type != t {
		return fmt.Errorf("gpu: block of %s distances, runner computes %s", out.Type, t)
	}
	b, err := sliceBytes(out.Dist)
	if err != nil {
		return err
	}
	if len(b) != k*n*t.Size() {
		return fmt.Errorf("gpu: block distance slice of %d bytes, want %d", len(b), k*n*t.Size())
	}
	if out.Pred != nil {
		if !withPred {
			return errors.New("gpu: block asks for predecessors but the runner was prepared without them")
		}
		if len(out.Pred) != k*n {
			return fmt.Errorf("gpu: block predecessor slice of %d, want %d", len(out.Pred), k*n)
		}
	}
	return checkSources(out.Sources, n)
}

// checkSources refuses a source outside [0, n).
func checkSources(sources []graph.VertexID, n int) error {
	for _, s := range sources {
		if s < 0 || int(s) >= n {
			return fmt.Errorf("gpu: source %d outside [0, %d)", s, n)
		}
	}
	return nil
}

// compute runs the algorithm for sources on the device goroutine, leaving
// the distances (and predecessors) in the rows of slot s, which must be
// idle, and in r.buf.dist (and r.buf.pred), their views; oneSlot allocates the
// first slot's rows only (ensureCapacity), and then s must be the first.
// It returns the first source that reaches a negative cycle, or -1.
func (r *Runner) compute(sources []graph.VertexID, s *resultSlot, oneSlot bool) (graph.VertexID, error) {
	dv := r.e.dev
	k := len(sources)
	began := time.Now()
	err := r.ensureCapacity(k, oneSlot)
	r.host.alloc += time.Since(began)
	if err != nil {
		return -1, err
	}
	tracef(dv.ordinal, "buffers for %d sources ready (%s)", k, time.Since(began).Round(time.Microsecond))
	r.buf.dist, r.buf.pred = r.hubs.blockRows(s), s.pred
	r.blockSources = sources
	defer func() { r.blockSources = nil }()
	if err := dv.d.cuMemcpyHtoD_v2(r.buf.sources.ptr, ptrOf(sources), uint64(4*k)).Err("cuMemcpyHtoD_v2"); err != nil {
		return -1, err
	}
	if err := r.launch(k); err != nil {
		return -1, err
	}
	if plans[r.req.Algorithm].status {
		status := make([]int32, k)
		if err := dv.download(asBytes(status), r.buf.status.ptr, &r.buf.stage); err != nil {
			return -1, err
		}
		for i, s := range status {
			if s != 0 {
				return sources[i], nil
			}
		}
	}
	return -1, nil
}

// hostTimes is what the host spends on a block beside its kernels:
// planning them (the batched kernel's plan and its upload) and allocating
// device memory.
type hostTimes struct{ plan, alloc time.Duration }

// HostTimes is the host's time in the last RunStats (or Run) planning the
// kernels and allocating device memory.
func (r *Runner) HostTimes() (plan, alloc time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.host.plan, r.host.alloc
}

// KernelTime is the device time the kernels of the last Run, Start or
// RunStats took, measured with CUDA events (copies excluded).
func (r *Runner) KernelTime() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kernelTime
}

// launch runs the algorithm's kernels for k sources, then the predecessor
// pass where the algorithm needs it, and adds their device time to
// r.kernelTime.
func (r *Runner) launch(k int) error {
	dv := r.e.dev
	p := plans[r.req.Algorithm]
	tracef(dv.ordinal, "launch of %d sources", k)
	err := p.launch(r, k)
	r.kernelTime += dv.lastKernel
	tracef(dv.ordinal, "launch of %d sources done (kernels %s)", k, dv.lastKernel.Round(time.Millisecond))
	if err != nil || !r.req.WithPredecessors || !p.derivesPredecessors(r.distType) {
		return err
	}
	err = dv.launch("predecessors_"+typeSuffix(r.distType), k, r.csr.offsets.ptr, r.csr.targets.ptr, r.csr.weights.ptr,
		int32(r.n), r.buf.sources.ptr, int32(k), r.buf.dist.ptr, r.buf.aux.ptr, r.buf.pred.ptr)
	r.kernelTime += dv.lastKernel
	return err
}
