package pipeline

// Queries narrower than all pairs (design.md): the targets' columns, a
// cutoff, and the k nearest of each source. Runners that are
// graph.NarrowRunners (the CPU's; the GPU's, which gather the targets on
// the device, when no predecessors are asked for) honour targets and cutoff
// themselves; other runners run full rows that hostNarrowed gathers and
// clips on the host. The k nearest are selected here, except by a runner
// that selects them itself (graph.NearestSelector: the GPU's, on the device).
// Both host steps spread a block's rows over the cores in chunks
// (graph.ForRowChunks), with results equal to a serial run's.
//
// A NarrowRunner whose blocks started ahead and stats honour the narrowing
// too (graph.AheadNarrower: the GPU's) runs narrowed blocks like full ones,
// started ahead (block i+1's kernels while block i travels) and stats
// reduced on the device, in blocks sized for the narrowed output
// (blocks.go).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// ErrUnknownTarget is wrapped, beside ErrInvalid, by the error of a
// target id the graph does not have.
var ErrUnknownTarget = errors.New("unknown target")

// ErrUnknownSource is wrapped, beside ErrInvalid, by the error of a
// source id the graph does not have: `source "ID": ...`, its text the word
// before the id.
var ErrUnknownSource = errors.New("source")

// checkQuery checks the narrowing options of opt (normalize calls it).
func checkQuery(opt Options) error {
	if opt.HasCutoff && (math.IsNaN(opt.Cutoff) || opt.Cutoff < 0) {
		return fmt.Errorf("%w: cutoff %v: a cutoff is a distance of 0 or more", ErrInvalid, opt.Cutoff)
	}
	if opt.K < 0 {
		return fmt.Errorf("%w: k nearest %d: k is 1 or more", ErrInvalid, opt.K)
	}
	if opt.K > 0 && opt.Layout != arrowio.LayoutPairs {
		return fmt.Errorf("%w: the k nearest are a pairs result (with rank), not %s", ErrInvalid, opt.Layout)
	}
	if opt.Targets != nil && len(opt.Targets) == 0 {
		return fmt.Errorf("%w: an empty list of targets", ErrInvalid)
	}
	if opt.WithPaths && opt.Layout != arrowio.LayoutPairs {
		return fmt.Errorf("%w: paths are part of the pairs layout only, not %s", ErrInvalid, opt.Layout)
	}
	if opt.WithPaths && opt.Algorithm == graph.BFSLevel {
		return fmt.Errorf("%w: bfs-level stores no predecessors to rebuild paths from; the bfs algorithm does", ErrInvalid)
	}
	return checkNearest(opt)
}

// engineRequest is what the engine is asked for: req, or for paths of a
// narrowed request full rows, which the host narrows (the paths are walked
// back along the full predecessor rows); their searches may stop once the
// targets are final (Request.StopAt).
func engineRequest(req graph.Request, paths bool) graph.Request {
	if paths && req.Narrowed() {
		req.StopAt = req.Targets
		req.Targets, req.Cutoff, req.HasCutoff = nil, 0, false
	}
	return req
}

// engineSelects asks runner to select opt's k nearest itself (the GPU,
// on the device), where it can; it reports whether it will. Paths and
// predecessors need full rows on the host.
func engineSelects(runner graph.Runner, opt Options) bool {
	sel, ok := runner.(graph.NearestSelector)
	return ok && opt.K > 0 && !opt.WithPaths && !opt.WithPredecessors && sel.SelectNearest(opt.K)
}

// nearestNote is what the run's description adds for the k nearest: who
// selects them, and why the host does where the engine could.
func nearestNote(runner graph.Runner, opt Options, selected bool) string {
	_, could := runner.(graph.NearestSelector)
	switch {
	case opt.K <= 0:
		return ""
	case selected:
		return "; the k nearest selected by the engine"
	case could:
		if d, ok := runner.(graph.NearestDecliner); ok {
			return "; the k nearest selected on the host from full rows (" + d.NearestDeclined() + ")"
		}
		return "; the k nearest selected on the host from full rows"
	}
	return ""
}

// narrowRunner returns runner, or for a narrowed request that runner does
// not honour (or was not asked to: paths), a runner that narrows its full
// rows on the host. A runner that honours it but also has ways of running
// full rows (fullRows: the GPU's) runs through engineNarrowed, which
// leaves it Run only, or, for a graph.AheadNarrower, engineNarrowedAhead,
// which also leaves it Start and RunStats.
func narrowRunner(runner graph.Runner, req graph.Request, n int, paths bool) graph.Runner {
	if !req.Narrowed() {
		return runner
	}
	if nr, ok := runner.(graph.NarrowRunner); ok && nr.Narrowed() && !paths {
		if !fullRows(runner) {
			return runner
		}
		en := &engineNarrowed{Runner: runner, algo: req.Algorithm}
		np, ok := runner.(graph.AheadNarrower)
		async, isAsync := runner.(graph.AsyncRunner)
		stats, isStats := runner.(graph.StatsRunner)
		if ok && isAsync && isStats && np.NarrowsAhead() {
			return &engineNarrowedAhead{engineNarrowed: en, async: async, stats: stats}
		}
		return en
	}
	return &hostNarrowed{inner: runner, req: req, n: n, paths: paths}
}

// narrowedRowBytes is the host memory of one source's row in a run whose
// engine narrows the rows itself and starts them ahead (blocks.go plans
// such runs for their small output): its targets' cells, or its k
// nearest's (selected: engineSelects said so); 0 for every other run,
// full rows included (a cutoff alone).
func narrowedRowBytes(runner graph.Runner, targets []graph.VertexID, k int, selected bool) int64 {
	size := int64(runner.DistType().Size())
	if selected {
		return int64(k) * (size + 4)
	}
	if _, ok := runner.(*engineNarrowedAhead); ok && targets != nil {
		return int64(len(targets)) * size
	}
	return 0
}

// fullRows reports whether runner has a way of running blocks other than
// Run, whose results are full rows of every vertex: the stats reduced on
// the device, blocks started ahead, resident device blocks.
func fullRows(runner graph.Runner) bool {
	_, stats := runner.(graph.StatsRunner)
	_, async := runner.(graph.AsyncRunner)
	_, resident := runner.(graph.ResidentRunner)
	return stats || async || resident
}

// engineNarrowed is a NarrowRunner (the GPU's) seen through Run only: it
// hides the inner runner's StatsRunner, AsyncRunner, ResidentRunner and
// HostPinner, whose blocks are full rows, so that every block of a
// narrowed request runs through Run, one at a time, and arrives narrowed.
// Its description and device times are the inner runner's.
type engineNarrowed struct {
	graph.Runner
	algo graph.Algorithm
}

// Narrowed is true: the inner runner honours the request.
func (e *engineNarrowed) Narrowed() bool { return true }

// Describe names the inner runner's kernel and the engine's narrowing.
func (e *engineNarrowed) Describe() string {
	return describe(e.Runner, e.algo) + "; targets and cutoff applied by the engine"
}

// KernelTime is the inner runner's, 0 when it reports none.
func (e *engineNarrowed) KernelTime() time.Duration {
	if t, ok := e.Runner.(graph.DeviceTimer); ok {
		return t.KernelTime()
	}
	return 0
}

// HostTimes is the inner runner's, 0 when it reports none.
func (e *engineNarrowed) HostTimes() (plan, alloc time.Duration) {
	if t, ok := e.Runner.(graph.DeviceTimer); ok {
		return t.HostTimes()
	}
	return 0, 0
}

// engineNarrowedAhead is engineNarrowed for a graph.AheadNarrower: its
// blocks also start ahead (graph.AsyncRunner) and reduce their stats on
// the device (graph.StatsRunner), narrowed; ComputeResident and PinHost,
// of full rows, stay hidden.
type engineNarrowedAhead struct {
	*engineNarrowed
	async graph.AsyncRunner
	stats graph.StatsRunner
}

// Start is the inner runner's: a narrowed block started ahead.
func (e *engineNarrowedAhead) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	return e.async.Start(ctx, out)
}

// RunStats is the inner runner's: stats over the targets within the
// cutoff, reduced on the device.
func (e *engineNarrowedAhead) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	return e.stats.RunStats(ctx, sources)
}

// StatsBytesPerSource is the inner runner's (graph.StatsSizer), or its
// BytesPerSource where it has none.
func (e *engineNarrowedAhead) StatsBytesPerSource() int64 {
	if s, ok := e.stats.(graph.StatsSizer); ok {
		return s.StatsBytesPerSource()
	}
	return e.BytesPerSource()
}

// StatsFixedBytes is the inner runner's (graph.StatsSizer), or 0.
func (e *engineNarrowedAhead) StatsFixedBytes() int64 {
	if s, ok := e.stats.(graph.StatsSizer); ok {
		return s.StatsFixedBytes()
	}
	return 0
}

// hostNarrowed runs full rows on its inner runner and keeps the request's
// targets' columns and the distances within its cutoff. It hides the inner
// runner's optional interfaces (the GPU's stats on the device, its blocks
// started ahead): the full rows must land on the host first. The
// device-to-host bytes stay n per source.
type hostNarrowed struct {
	inner graph.Runner
	req   graph.Request
	n     int
	paths bool // keep the full predecessor rows as the block's PathPred
}

func (h *hostNarrowed) DistType() graph.DistType { return h.inner.DistType() }
func (h *hostNarrowed) Close() error             { return h.inner.Close() }

// BytesPerSource adds the narrowed row to the inner runner's full row.
func (h *hostNarrowed) BytesPerSource() int64 {
	w := int64(h.n)
	if h.req.Targets != nil {
		w = int64(len(h.req.Targets))
	}
	b := h.inner.BytesPerSource() + w*int64(h.DistType().Size())
	if h.req.WithPredecessors {
		b += 4 * w
	}
	return b
}

// Describe names the inner runner's kernel and the host-side narrowing.
func (h *hostNarrowed) Describe() string {
	return describe(h.inner, h.req.Algorithm) + "; targets and cutoff applied on the host"
}

func (h *hostNarrowed) Run(ctx context.Context, out *graph.Block) error {
	full := graph.NewBlock(out.Sources, h.n, h.DistType(), out.Pred != nil)
	if err := h.inner.Run(ctx, full); err != nil {
		return err
	}
	if h.paths {
		out.PathPred = full.Pred
	}
	switch out.Type {
	case graph.DistInt32:
		narrowBlock[int32](full, out, h.req)
	case graph.DistInt64:
		narrowBlock[int64](full, out, h.req)
	case graph.DistFloat32:
		narrowBlock[float32](full, out, h.req)
	default:
		narrowBlock[float64](full, out, h.req)
	}
	return nil
}

// narrowBlock writes into out the narrowed rows of full (req's targets
// and cutoff), chunks of rows on up to req.Threads goroutines
// (graph.ForRowChunks); each row is narrowed on its own, so the result
// does not depend on the threads.
func narrowBlock[D graph.Number](full, out *graph.Block, req graph.Request) {
	cut := graph.Infinity[D]()
	if req.HasCutoff {
		cut = graph.CutoffOf[D](req.Cutoff)
	}
	n, w := full.NumVertices, out.Width()
	graph.ForRowChunks(len(out.Sources), w, req.Threads, func(first, end int) {
		for i := first; i < end; i++ {
			var pred, outPred []graph.VertexID
			if out.Pred != nil {
				pred, outPred = full.Pred[i*n:(i+1)*n], out.Pred[i*w:(i+1)*w]
			}
			graph.NarrowRow(graph.Row[D](full, i), pred, req.Targets, cut, graph.Row[D](out, i), outPred)
		}
	})
}

// nearestOf keeps the k nearest vertices of every row of blk other than
// its source (ties by vertex order), nearest first: a block of k columns
// whose CellTargets name them, Infinity where a source reaches fewer. Rows
// are spread over every core (nearestOfThreads with threads 0).
func nearestOf(blk *graph.Block, k int) *graph.Block { return nearestOfThreads(blk, k, 0) }

// nearestOfThreads is nearestOf on up to threads goroutines (threads ≤ 0:
// runtime.GOMAXPROCS), chunks of rows each (graph.ForRowChunks; one
// goroutine below graph.SerialRowCells cells). Each row's selection reads
// that row only and writes that row of the result only, in column order,
// so the result does not depend on threads. It takes
// O(len(Sources) · Width() · log k) time, O(k) extra space per goroutine.
func nearestOfThreads(blk *graph.Block, k, threads int) *graph.Block {
	switch blk.Type {
	case graph.DistInt32:
		return selectNearest[int32](blk, k, threads)
	case graph.DistInt64:
		return selectNearest[int64](blk, k, threads)
	case graph.DistFloat32:
		return selectNearest[float32](blk, k, threads)
	}
	return selectNearest[float64](blk, k, threads)
}

func selectNearest[D graph.Number](blk *graph.Block, k, threads int) *graph.Block {
	rows := len(blk.Sources)
	out := graph.NewBlock(blk.Sources, k, blk.Type, blk.Pred != nil)
	out.NumVertices = blk.NumVertices
	out.CellTargets = make([]graph.VertexID, rows*k)
	out.PathPred = blk.PathPred
	w := blk.Width()
	graph.ForRowChunks(rows, w, threads, func(first, end int) {
		heap := make(nearHeap[D], 0, k)
		for i := first; i < end; i++ {
			heap = nearestRow(blk, i, k, heap[:0])
			writeNearest(blk, out, i, k, &heap)
		}
	})
	return out
}

// nearestRow offers every reached cell of row i of blk other than the
// source to heap, which then holds the row's k nearest.
func nearestRow[D graph.Number](blk *graph.Block, i, k int, heap nearHeap[D]) nearHeap[D] {
	inf := graph.Infinity[D]()
	src := blk.Sources[i]
	w := blk.Width()
	cols := blk.Targets // nil: column j is vertex j
	if blk.CellTargets != nil {
		cols = blk.CellTargets[i*w : (i+1)*w]
	}
	// bound is the largest distance held once k are: a cell beyond it is
	// dropped before its vertex is looked at.
	bound := inf
	for j, d := range graph.Row[D](blk, i) {
		if d > bound || d == inf {
			continue
		}
		v := graph.VertexID(j)
		if cols != nil {
			v = cols[j]
		}
		if v == src {
			continue
		}
		c := nearCell[D]{d: d, v: v, col: int32(j)}
		if len(heap) == k && !heap[0].after(c) {
			continue // offer would drop it: no better than the k held
		}
		heap.offer(c, k)
		if len(heap) == k {
			bound = heap[0].d
		}
	}
	return heap
}

// writeNearest pops the heap of row i, largest first, into the back of
// row i of out, and fills the cells beyond the candidates with Infinity.
func writeNearest[D graph.Number](blk, out *graph.Block, i, k int, heap *nearHeap[D]) {
	inf := graph.Infinity[D]()
	dist := graph.DistOf[D](out)
	w := blk.Width()
	for c := k - 1; c >= 0; c-- {
		at := i*k + c
		if c >= len(*heap) {
			dist[at], out.CellTargets[at] = inf, -1
			if out.Pred != nil {
				out.Pred[at] = -1
			}
			continue
		}
		top := heap.pop()
		dist[at], out.CellTargets[at] = top.d, top.v
		if out.Pred != nil {
			out.Pred[at] = blk.Pred[i*w+int(top.col)]
		}
	}
}

// nearCell is a candidate of the k nearest: distance, vertex, and column
// in the full block.
type nearCell[D graph.Number] struct {
	d   D
	v   graph.VertexID
	col int32
}

// after orders candidates by distance, then vertex.
func (a nearCell[D]) after(b nearCell[D]) bool {
	return a.d > b.d || (a.d == b.d && a.v > b.v)
}

// nearHeap is a binary max-heap (by after) of at most k candidates.
type nearHeap[D graph.Number] []nearCell[D]

// offer adds c when fewer than k are held or c comes before the largest.
func (h *nearHeap[D]) offer(c nearCell[D], k int) {
	s := *h
	if len(s) < k {
		s = append(s, c)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !s[i].after(s[p]) {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return
	}
	if !s[0].after(c) {
		return
	}
	s[0] = c
	s.down(0)
}

func (h nearHeap[D]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		big := l
		if r := l + 1; r < len(h) && h[r].after(h[l]) {
			big = r
		}
		if !h[big].after(h[i]) {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// pop removes and returns the largest candidate.
func (h *nearHeap[D]) pop() nearCell[D] {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	if len(s) > 0 {
		s.down(0)
	}
	*h = s
	return top
}

// checkNearest checks the options of the nearest layout.
func checkNearest(opt Options) error {
	switch {
	case opt.Layout != arrowio.LayoutNearest:
		return nil
	case opt.Sources == nil:
		return fmt.Errorf("%w: the nearest layout needs sources: the vertices whose nearest is asked for are measured against them", ErrInvalid)
	case opt.Targets != nil || opt.K > 0:
		return fmt.Errorf("%w: the nearest layout answers for every vertex; targets and k do not apply", ErrInvalid)
	case opt.WithPredecessors:
		return fmt.Errorf("%w: the nearest layout has no predecessor column", ErrInvalid)
	case opt.Algorithm.CountsHops():
		return fmt.Errorf("%w: the nearest layout runs on the weights; %s counts hops (use --unweighted for hop counts)", ErrInvalid, opt.Algorithm)
	}
	return nil
}
