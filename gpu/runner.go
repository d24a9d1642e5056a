package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
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
	// autoWhy is why Prepare chose req.Algorithm for a request of
	// graph.Auto; empty when the algorithm was asked for.
	autoWhy string

	distType graph.DistType // of the results
	delta    float64        // bucket width of delta-stepping

	// Graph on the device.
	offsets, targets, weights, arcSources devBuf
	// adopt is the device copy of the graph that BuildCSRResident left,
	// taken by upload instead of uploading, or nil.
	adopt *deviceCSR
	// lent is the kept copy of the graph (kept.go) this runner borrows
	// instead of uploading it, or nil; release gives it back.
	lent *keptCSR
	// targetIDs are the request's targets on the device, uploaded by the
	// first narrowed block (gather.go); sorted when nearestK is set.
	targetIDs devBuf
	// nearestK, when above 0, is the k of the k nearest the runner selects
	// on the device (SelectNearest, gather.go).
	nearestK int

	// Per-source buffers for capacity sources, grown on demand; oneSlot
	// when only the first result slot's rows were allocated (a stats
	// block under plan.Config.OneSlotStats: statsSlotOnly).
	mu       sync.Mutex
	capacity int
	oneSlot  bool
	sources  devBuf // int32 per source
	status   devBuf // int32 per source: 1 where a negative cycle showed
	aux      devBuf // predist, packed cells or BFS levels
	flags    devBuf // changed / pending / frontier bytes
	stats    devBuf // statsWords 8-byte words per source (RunStats)
	stage    pinned // host staging for small synchronous downloads
	closed   bool
	// slots are the two sets of result rows (overlap.go); dist and pred
	// are the rows of the slot the current block computes into (a
	// distance row and an int32 predecessor row per source), views that
	// the kernels' plans read and nothing frees through.
	slots   [resultSlots]resultSlot
	dist    devBuf
	pred    devBuf
	copySeq uint64 // copies queued so far
	// fit is the most sources a block may hold on this device, learnt by
	// halving a block that ran out of device memory; 0 while unknown.
	fit int

	kernelTime time.Duration // device time of the last Run's kernels
	downloaded atomic.Int64  // result bytes copied to the host (DownloadedBytes)
	host       hostTimes     // host time of the last Run beside the kernels

	// batched is how the batched kernel runs (batched.go), and planGraph
	// what its plans read of the graph beside the arcs (the graph's shape
	// and breadth-first rank), measured on the first batched block.
	batched   batchedConfig
	planGraph *plan.Graph
	// ahead is the plan made before the engine opened (ahead.go), for
	// the first batched block it matches; nil once taken or dropped.
	ahead *HostPlan
	// byWeight are the arcs the batched kernel's cutoff rounds walk
	// (batched.go).
	byWeight arcsByWeight
	// blockSources are the sources of the block being computed, as
	// uploaded to r.sources (the batched kernel plans on the host).
	blockSources []graph.VertexID
	// hubs are the hub rows kept past a stats block's rows (hubs.go), and
	// hubRun their count SizeStatsRun chose for the run.
	hubs   hubState
	hubRun hubRunSize
	// frontierRows, while runHubPlan runs hub rows, is where their first
	// phase's frontier lies instead of the start of r.dist (the hub rows
	// themselves then): the block's rows.
	frontierRows devBuf
	// hubGroup, when set, shares the hub rows with runners of the graph
	// on other devices (hubshare.go).
	hubGroup *hubGroup
	// scratch is the sources of one slice of the batched kernel's scratch
	// working distances in r.aux (scratch.go); 0 for a working row per
	// source.
	scratch int
	// scratchDeclined is set by Prepare where the scratch would not pay on
	// this device (scratchPays): the stats blocks keep a working row per
	// source.
	scratchDeclined bool
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
	// launch runs the kernels that fill r.dist (and r.pred when they track
	// predecessors) for the k sources in r.sources.
	launch func(r *Runner, k int) error
	// derivesPredecessors reports whether predecessors.cu must derive the
	// predecessors from the distances after launch.
	derivesPredecessors func(t graph.DistType) bool
	// status reports whether the kernels write r.status (negative cycles).
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
	r := &Runner{e: e, g: g, req: req, n: g.NumVertices, distType: g.Type, batched: batched, planGraph: plan.NewGraph(g)}
	if req.Algorithm.CountsHops() {
		r.distType = graph.DistInt32
	}
	if req.Algorithm == graph.Delta {
		r.delta = chooseDelta(g, req.Delta)
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

// Delta is the bucket width delta-stepping runs with (0 for the others).
func (r *Runner) Delta() float64 { return r.delta }

// BytesPerSource is the device memory one more source in a block costs:
// every per-source buffer of the algorithm (predist or packed cells, flag
// bytes), the result rows (distances and predecessors) twice, one set for
// the block computing and one for the block being copied out (Start), with
// the source id, status and stats words, and for a narrowed runner the
// gathered or selected cells, twice too (gather.go). Host memory (the
// pinned stages, the caller's block) is not counted, nor is what the
// runner holds whatever its blocks: the CSR and, under a cutoff in the
// batched kernel, its arcs in rising weight (m × (4 + the distance's
// size) bytes, arcsByWeight). Prepare allocates those before it returns,
// so a budget read from the device's free memory after it
// (FreeMemory) has them out already.
func (r *Runner) BytesPerSource() int64 {
	return r.bytesPerSource(false)
}

// StatsBytesPerSource is the device memory one more source in a block of
// RunStats costs (graph.StatsSizer): as BytesPerSource, but under
// plan.Config.OneSlotStats with one set of result rows and no narrowed
// cells, since a stats block is reduced on the device as soon as its rows
// are final and nothing copies rows out while the next one computes. For
// the batched kernel's int32 rows that is 8 bytes per vertex instead of
// 12.
func (r *Runner) StatsBytesPerSource() int64 {
	return r.bytesPerSource(r.statsSlotOnly())
}

// statsSlotOnly reports whether RunStats allocates one result slot's rows
// only (plan.Config.OneSlotStats).
func (r *Runner) statsSlotOnly() bool { return r.batched.OneSlotStats }

// bytesPerSource is BytesPerSource, or with oneSlot the per-source
// buffers of the first result slot alone, without narrowed cells.
func (r *Runner) bytesPerSource(oneSlot bool) int64 {
	l := layoutOf(r.req.Algorithm, r.distType, r.req.WithPredecessors)
	if oneSlot {
		if r.scratchPossible() {
			l.aux = 0 // a fixed scratch (StatsFixedBytes)
		}
		return int64(r.n)*int64(l.dist+l.pred+l.aux+l.flags) + perSourceBytes
	}
	gathered, selected := r.narrowBytesPerSource()
	return int64(r.n)*int64(resultSlots*(l.dist+l.pred)+l.aux+l.flags) + perSourceBytes + resultSlots*(gathered+selected)
}

// perSourceBytes is what a source costs beside its rows: its id, its status
// word and its stats words.
const perSourceBytes = 4 + 4 + 8*statsWords

// upload copies the CSR to the device (on the device goroutine).
func (r *Runner) upload() error {
	dv := r.e.dev
	g := r.g
	var err error
	if k := r.lent; k != nil {
		r.lend(k)
	} else if dc := r.adopt; dc != nil {
		r.adopt = nil
		r.offsets, r.targets, r.weights = dc.offsets, dc.targets, dc.weights
		if r.req.Algorithm.CountsHops() {
			if err := dv.free(&r.weights); err != nil {
				return err
			}
		}
	} else {
		if r.offsets, err = dv.upload(asBytes(g.Offsets)); err != nil {
			return err
		}
		if r.targets, err = dv.upload(asBytes(g.Targets)); err != nil {
			return err
		}
	}
	if !r.req.Algorithm.CountsHops() && r.weights.ptr == 0 {
		w, err := sliceBytes(g.Weights)
		if err != nil {
			return err
		}
		if r.weights, err = dv.upload(w); err != nil {
			return err
		}
	}
	if r.req.Algorithm == graph.Edge {
		src := make([]int32, g.NumEdges())
		for u := 0; u < g.NumVertices; u++ {
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				src[k] = int32(u)
			}
		}
		if r.arcSources, err = dv.upload(asBytes(src)); err != nil {
			return err
		}
	}
	return r.uploadArcsByWeight()
}

// release frees every device buffer and the staging buffers, once the
// copies in flight have landed (on the device goroutine).
func (r *Runner) release() error {
	dv := r.e.dev
	var errs []error
	errs = append(errs, r.releaseBlock())
	errs = append(errs, r.giveBack())
	for _, b := range []*devBuf{&r.offsets, &r.targets, &r.weights, &r.arcSources, &r.targetIDs} {
		errs = append(errs, dv.free(b))
	}
	errs = append(errs, r.releaseSlots())
	errs = append(errs, r.releaseArcsByWeight())
	errs = append(errs, dv.freePinned(&r.stage))
	return errors.Join(errs...)
}

// releaseBlock frees the per-source buffers, once the copies in flight
// have landed (on the device goroutine).
func (r *Runner) releaseBlock() error {
	dv := r.e.dev
	r.leaveHubGroup()
	r.settleSlots()
	bufs := []*devBuf{&r.sources, &r.status, &r.aux, &r.flags, &r.stats}
	for i := range r.slots {
		s := &r.slots[i]
		bufs = append(bufs, &s.dist, &s.pred, &s.valid, &s.partials, &s.gathered, &s.selected)
	}
	var errs []error
	for _, b := range bufs {
		errs = append(errs, dv.free(b))
	}
	r.dist, r.pred = devBuf{}, devBuf{}
	r.capacity, r.oneSlot = 0, false
	r.hubs, r.scratch = hubState{}, 0
	return errors.Join(errs...)
}

// ensureCapacity sizes the per-source buffers for k sources: with oneSlot
// (a stats block under plan.Config.OneSlotStats) only the first result
// slot's rows, else every slot's rows and narrowed cells. Buffers that
// already hold k sources stay, unless they hold one slot and every slot
// is asked for, or more hub rows than a run sized since allows
// (SizeStatsRun: they would take memory its blocks were planned in).
func (r *Runner) ensureCapacity(k int, oneSlot bool) error {
	if k <= r.capacity && (oneSlot || !r.oneSlot) && len(r.hubs.vertices) <= r.hubRowsFor(r.capacity) {
		return nil
	}
	if err := r.releaseBlock(); err != nil {
		return err
	}
	dv := r.e.dev
	l := layoutOf(r.req.Algorithm, r.distType, r.req.WithPredecessors)
	cells := int64(k) * int64(r.n)
	type sized struct {
		buf  *devBuf
		size int64
	}
	auxBytes, scratch := cells*int64(l.aux), 0
	if oneSlot && r.scratchPossible() {
		scratch = min(k, r.scratchSources())
		auxBytes = r.scratchBytesFor(scratch)
	}
	bufs := []sized{
		{&r.sources, 4 * int64(k)},
		{&r.status, 4 * int64(k)},
		{&r.aux, auxBytes},
		{&r.flags, cells * int64(l.flags)},
		{&r.stats, 8 * statsWords * int64(k)},
	}
	gathered, selected := r.narrowBytesPerSource()
	hubRows := 0
	if oneSlot {
		hubRows = r.hubRowsFor(k)
	}
	for i := range r.slots {
		s := &r.slots[i]
		switch {
		case !oneSlot:
			bufs = append(bufs, sized{&s.dist, cells * int64(l.dist)}, sized{&s.pred, cells * int64(l.pred)},
				sized{&s.gathered, gathered * int64(k)}, sized{&s.selected, selected * int64(k)})
		case i == 0:
			// The hub rows (hubs.go) follow the block's rows.
			rows := cells + int64(hubRows)*int64(r.n)
			bufs = append(bufs, sized{&s.dist, rows * int64(l.dist)}, sized{&s.pred, cells * int64(l.pred)})
		}
	}
	for _, b := range bufs {
		var err error
		if *b.buf, err = dv.alloc(b.size); err != nil {
			if isOutOfMemory(err) {
				err = r.outOfMemory(k, r.bytesPerSource(oneSlot), err)
			}
			return errors.Join(err, r.releaseBlock())
		}
	}
	r.capacity, r.oneSlot, r.scratch = k, oneSlot, scratch
	if err := r.allocHubRows(k, hubRows); err != nil {
		return errors.Join(err, r.releaseBlock())
	}
	return nil
}

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

func (r *Runner) checkBlock(out *graph.Block) error {
	k := len(out.Sources)
	if out.NumVertices != r.n {
		return fmt.Errorf("gpu: block over %d vertices for a graph of %d", out.NumVertices, r.n)
	}
	if out.Type != r.distType {
		return fmt.Errorf("gpu: block of %s distances, runner computes %s", out.Type, r.distType)
	}
	b, err := sliceBytes(out.Dist)
	if err != nil {
		return err
	}
	if len(b) != k*r.n*r.distType.Size() {
		return fmt.Errorf("gpu: block distance slice of %d bytes, want %d", len(b), k*r.n*r.distType.Size())
	}
	if out.Pred != nil {
		if !r.req.WithPredecessors {
			return errors.New("gpu: block asks for predecessors but the runner was prepared without them")
		}
		if len(out.Pred) != k*r.n {
			return fmt.Errorf("gpu: block predecessor slice of %d, want %d", len(out.Pred), k*r.n)
		}
	}
	for _, s := range out.Sources {
		if s < 0 || int(s) >= r.n {
			return fmt.Errorf("gpu: source %d outside [0, %d)", s, r.n)
		}
	}
	return nil
}

// statsWords is the number of 8-byte words kernels/stats.cu writes per
// source: reachable, eccentricity, sum, harmonic.
const statsWords = 4

// RunStats computes the stats layout's reductions (design.md, "Outputs")
// from every source on the device: the distance rows never leave it, only
// four words per source do, and closeness is derived here from reachable
// and sum with graph.ComputeStats' expression. Integer sums, reachable
// counts and eccentricities equal graph.ComputeStats' exactly; float sums
// and harmonic sums are added in another order than the CPU's vertex order,
// so they may differ in the last bits (the same bits on every run). Errors
// are those of Run. A narrowed runner (Narrowed) reduces on the device
// too, over the targets' columns within the cutoff, as graph.ComputeStats
// does a narrowed block (gather.go); one that selects the k nearest
// refuses it. Under plan.Config.OneSlotStats its blocks allocate one
// result slot's rows (StatsBytesPerSource), and under plan.Config.HubRows
// small blocks keep the hubs' rows beside them (hubs.go).
func (r *Runner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.nearestK > 0 {
		return nil, errors.New("gpu: RunStats of a runner that selects the k nearest: the k nearest are a pairs result")
	}
	for _, s := range sources {
		if s < 0 || int(s) >= r.n {
			return nil, fmt.Errorf("gpu: source %d outside [0, %d)", s, r.n)
		}
	}
	st := graph.NewStats(sources, r.distType)
	if len(sources) == 0 {
		return st, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	words := make([]uint64, statsWords*len(sources))
	cycleSource := graph.VertexID(-1)
	tracef(r.e.dev.ordinal, "stats of %d sources", len(sources))
	defer tracef(r.e.dev.ordinal, "stats of %d sources done", len(sources))
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		if err := r.uploadTargets(); err != nil {
			return err
		}
		return r.runChunks(len(sources), func(lo, hi int) error {
			c, err := r.compute(sources[lo:hi], r.statsSlot(), r.statsSlotOnly())
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			dv := r.e.dev
			if r.Narrowed() {
				err = dv.launch("stats_narrow_"+typeSuffix(r.distType), hi-lo, r.statsNarrowArgs(hi-lo)...)
			} else {
				err = dv.launch("stats_"+typeSuffix(r.distType), hi-lo, r.dist.ptr, int32(r.n), r.sources.ptr, int32(hi-lo), r.stats.ptr)
			}
			r.kernelTime += dv.lastKernel
			if err != nil {
				return err
			}
			part := asBytes(words[statsWords*lo : statsWords*hi])
			r.downloaded.Add(int64(len(part)))
			return dv.download(part, r.stats.ptr, &r.stage)
		})
	})
	if errors.Is(err, errCycle) {
		return nil, negativeCycle(r.g, cycleSource)
	}
	if err != nil {
		return nil, err
	}
	fillStats(st, words, r.n)
	if r.Narrowed() && r.req.Targets != nil {
		narrowCloseness(st, r.req.Targets)
	}
	return st, nil
}

// fillStats decodes the words of kernels/stats.cu into st.
func fillStats(st *graph.Stats, words []uint64, n int) {
	isFloat := st.Type.IsFloat()
	for i := range st.Sources {
		w := words[statsWords*i : statsWords*(i+1)]
		reach := int64(w[0])
		st.Reachable[i] = reach
		st.Eccentricity[i] = math.Float64frombits(w[1])
		var total float64
		if isFloat {
			st.SumFloat[i] = math.Float64frombits(w[2])
			total = st.SumFloat[i]
		} else {
			st.SumInt[i] = int64(w[2])
			total = float64(st.SumInt[i])
		}
		st.Harmonic[i] = math.Float64frombits(w[3])
		if reach > 0 && total > 0 && n > 1 {
			st.Closeness[i] = (float64(reach) / total) * (float64(reach) / float64(n-1))
		}
	}
}

// statsSlot is the result slot RunStats computes into: the first, once no
// copy of an earlier Start reads it (with one slot allocated it is the
// only one with rows).
func (r *Runner) statsSlot() *resultSlot {
	s := &r.slots[0]
	s.settle()
	return s
}

// compute runs the algorithm for sources on the device goroutine, leaving
// the distances (and predecessors) in the rows of slot s, which must be
// idle, and in r.dist (and r.pred), their views; oneSlot allocates the
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
	r.dist, r.pred = r.blockRows(s), s.pred
	r.blockSources = sources
	defer func() { r.blockSources = nil }()
	if err := dv.d.cuMemcpyHtoD_v2(r.sources.ptr, ptrOf(sources), uint64(4*k)).Err("cuMemcpyHtoD_v2"); err != nil {
		return -1, err
	}
	if err := r.launch(k); err != nil {
		return -1, err
	}
	if plans[r.req.Algorithm].status {
		status := make([]int32, k)
		if err := dv.download(asBytes(status), r.status.ptr, &r.stage); err != nil {
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
	err = dv.launch("predecessors_"+typeSuffix(r.distType), k, r.offsets.ptr, r.targets.ptr, r.weights.ptr,
		int32(r.n), r.sources.ptr, int32(k), r.dist.ptr, r.aux.ptr, r.pred.ptr)
	r.kernelTime += dv.lastKernel
	return err
}
