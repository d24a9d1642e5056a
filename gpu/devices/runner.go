package devices

// The multi-device runner and its block queue (see group.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// devicesRunner runs blocks on several devices: it implements the runner
// interfaces the producer drives (Run, AsyncRunner's Start, StatsRunner's
// RunStats, and ResidentRunner's device blocks, devices_resident.go)
// through one queue of blocks that the devices' workers take whole, each
// the next as it becomes idle; the producer keeps Depth blocks queued
// (startAhead, statsAhead). A block larger than a device's budget is cut
// to it, and a block that nothing else overlaps (Run, RunStats, the last)
// is shared among the devices idle when it is taken; the blocks of the
// last round, fewer than the devices, are cut into a part per device
// (TailCuts).
type devicesRunner struct {
	workers []*deviceWorker
	n       int // vertices
	threads int // of host stats reductions
	queue   *blockQueue
	wg      sync.WaitGroup
	closed  atomic.Bool
	// isRequestError reports whether an error is the request's, the same
	// on every device, rather than one device's (Config.RequestError).
	isRequestError func(error) bool
}

// The multi-device runner's part of the seam.
var (
	_ graph.Runner          = (*devicesRunner)(nil)
	_ graph.AsyncRunner     = (*devicesRunner)(nil)
	_ graph.StatsRunner     = (*devicesRunner)(nil)
	_ graph.StatsSizer      = (*devicesRunner)(nil)
	_ graph.Describer       = (*devicesRunner)(nil)
	_ graph.NarrowRunner    = (*devicesRunner)(nil)
	_ graph.NearestSelector = (*devicesRunner)(nil)
	_ graph.SourceOrderer   = (*devicesRunner)(nil)
	_ graph.StatsRunSizer   = (*devicesRunner)(nil)
	_ graph.DeviceSet       = (*devicesRunner)(nil)
)

// PlanRunner is the first device's runner, whose blocks a run plans, so
// that the blocks (and the output's record batches) are those of one
// device alone.
func (r *devicesRunner) PlanRunner() graph.Runner { return r.workers[0].runner }

// deviceWorker is one device's runner and what it did.
type deviceWorker struct {
	index  int // in the runner's workers, and the queue's
	label  string
	runner graph.Runner
	// maxChunk is the most sources of one chunk (Group.chunkMax), resized
	// when the runner selects the k nearest (SelectNearest); deviceBudget
	// is the device's budget of blocks that stay on it (Group.budgetOf).
	maxChunk     atomic.Int64
	deviceBudget int64
	// chunks and sources count what the device computed, and lastDone is
	// when its last chunk was (Unix nanoseconds; 0 before the first);
	// kernel and plan add up the device's kernel time and the host's
	// planning of them over its chunks, where its runner reports them.
	chunks, sources, lastDone, kernel, plan atomic.Int64
}

// computed counts a chunk of k sources computed on w, now.
func (w *deviceWorker) computed(k int) {
	w.chunks.Add(1)
	w.sources.Add(int64(k))
	w.lastDone.Store(time.Now().UnixNano())
	if t, ok := w.runner.(graph.DeviceTimer); ok {
		plan, _ := t.HostTimes()
		w.kernel.Add(int64(t.KernelTime()))
		w.plan.Add(int64(plan))
	}
}

// newDevicesRunner starts a worker per device runner; Close stops them
// and closes the runners.
func newDevicesRunner(workers []*deviceWorker, n, threads int, notice io.Writer, requestError func(error) bool) *devicesRunner {
	r := &devicesRunner{workers: workers, n: n, threads: threads, queue: newBlockQueue(len(workers), notice), isRequestError: requestError}
	for i, w := range workers {
		w.index = i
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.work(w)
		}()
	}
	return r
}

// DistType is the devices' distance type.
func (r *devicesRunner) DistType() graph.DistType { return r.workers[0].runner.DistType() }

// BytesPerSource is the largest of the devices' (a source costs it on
// whichever device computes it).
func (r *devicesRunner) BytesPerSource() int64 {
	var b int64
	for _, w := range r.workers {
		b = max(b, w.runner.BytesPerSource())
	}
	return b
}

// StatsBytesPerSource is the largest of the devices' bytes per source of
// a stats block (graph.StatsSizer where a device's runner has it, else its
// BytesPerSource).
func (r *devicesRunner) StatsBytesPerSource() int64 {
	var b int64
	for _, w := range r.workers {
		per := w.runner.BytesPerSource()
		if s, ok := w.runner.(graph.StatsSizer); ok {
			per = s.StatsBytesPerSource()
		}
		b = max(b, per)
	}
	return b
}

// StatsFixedBytes is the largest of the devices' fixed bytes of a stats
// block (graph.StatsSizer where a device's runner has it, else 0).
func (r *devicesRunner) StatsFixedBytes() int64 {
	var b int64
	for _, w := range r.workers {
		if s, ok := w.runner.(graph.StatsSizer); ok {
			b = max(b, s.StatsFixedBytes())
		}
	}
	return b
}

// SizeStatsRun sizes the rows each device keeps beside the run's stats
// blocks (graph.StatsRunSizer, where its runner has it), on each device's
// budget.
func (r *devicesRunner) SizeStatsRun(sources int, budget int64) {
	for _, w := range r.workers {
		if s, ok := w.runner.(graph.StatsRunSizer); ok {
			s.SizeStatsRun(sources, budget)
		}
	}
}

// Shares says what each device computed since start, for --verbose: its
// chunks and sources, and when its last chunk was done. Devices that
// finish far apart say that the work was not shared evenly.
func (r *devicesRunner) Shares(start time.Time) string {
	var b strings.Builder
	for i, w := range r.workers {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "device %s: %d sources in %d chunks", w.label, w.sources.Load(), w.chunks.Load())
		if t := w.lastDone.Load(); t != 0 {
			fmt.Fprintf(&b, ", the last done at %s", time.Unix(0, t).Sub(start).Round(time.Millisecond))
		}
		if k, p := w.kernel.Load(), w.plan.Load(); k > 0 || p > 0 {
			fmt.Fprintf(&b, " (kernels %s, planning them %s)", time.Duration(k).Round(time.Millisecond), time.Duration(p).Round(time.Millisecond))
		}
	}
	return b.String()
}

// Describe is the first device's description and the device count.
func (r *devicesRunner) Describe() string {
	d := "auto"
	if ds, ok := r.workers[0].runner.(graph.Describer); ok {
		d = ds.Describe()
	}
	return fmt.Sprintf("%s, on %d devices", d, len(r.workers))
}

// Narrowed is true where every device's runner honours targets and cutoff.
func (r *devicesRunner) Narrowed() bool {
	for _, w := range r.workers {
		nr, ok := w.runner.(graph.NarrowRunner)
		if !ok || !nr.Narrowed() {
			return false
		}
	}
	return true
}

// SelectNearest makes every device's runner select the k nearest on its
// device (graph.NearestSelector) and reports true, or false where one
// cannot (its refusals depend on k and the request, the same on every
// device). Each device's chunks are then sized as its selection's blocks
// are (graph.SelectedSizing: one result slot with the fixed rows beside
// them), as the pipeline plans the host's blocks (planNarrowed); a chunk
// some worker took before keeps the old size.
func (r *devicesRunner) SelectNearest(k int) bool {
	for _, w := range r.workers {
		if _, ok := w.runner.(graph.NearestSelector); !ok {
			return false
		}
	}
	for _, w := range r.workers {
		if !w.runner.(graph.NearestSelector).SelectNearest(k) {
			return false
		}
		sizing := graph.SelectedSizing(w.runner)
		if most := sizing.MaxSources(sizing.Usable(w.deviceBudget)); most > 0 {
			w.maxChunk.Store(int64(most))
		}
	}
	return true
}

// Run computes out on the devices and returns when every row is in place.
// Nothing else is queued meanwhile (the producer runs such blocks one at a
// time), so the devices idle when out is taken share it.
func (r *devicesRunner) Run(ctx context.Context, out *graph.Block) error {
	j, err := r.submit(&deviceJob{ctx: ctx, kind: jobRun, out: out}, len(out.Sources), true, nil)
	if err != nil {
		return err
	}
	return j.Wait()
}

// Start queues out, which one device computes whole (where its budget
// holds it), and returns; out may be read once Wait has returned nil.
func (r *devicesRunner) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	return r.StartCut(ctx, out, nil)
}

// StartCut is Start, with out cut at cuts (TailCuts), each part
// computed whole by one device.
func (r *devicesRunner) StartCut(ctx context.Context, out *graph.Block, cuts []int) (graph.Waiter, error) {
	return r.submit(&deviceJob{ctx: ctx, kind: jobStart, out: out}, len(out.Sources), false, cuts)
}

// RunStats reduces the sources' rows on the devices (each device's
// StatsRunner, or its rows reduced on the host), shared among the devices
// idle when they are taken.
func (r *devicesRunner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	j, err := r.submit(&deviceJob{ctx: ctx, kind: jobStats, sources: sources, stats: graph.NewStats(sources, r.DistType())}, len(sources), true, nil)
	if err != nil {
		return nil, err
	}
	if err := j.Wait(); err != nil {
		return nil, err
	}
	return j.stats, nil
}

// StartStats queues the stats of sources, cut at cuts (TailCuts), each
// part reduced whole by one device (where its budget holds it), and
// returns. The job's stats may be read once Wait has returned
// nil.
func (r *devicesRunner) StartStats(ctx context.Context, sources []graph.VertexID, cuts []int) (graph.StatsWaiter, error) {
	return r.submitStats(&deviceJob{ctx: ctx, kind: jobStats, sources: sources, stats: graph.NewStats(sources, r.DistType())}, len(sources), false, cuts)
}

// cutLastRound switches TailCuts on. Off, every block is computed whole,
// the last round included: a cut can leave a part too small for the
// batched kernel's phases (under plan.Config's SeedsMinShare of the
// vertices), which costs it more per source than the idle time it saves
// where the blocks are few and alike.
const cutLastRound = true

// TailCuts is where block i of blocks is cut on the devices (offsets in
// the block, multiples of 8): nowhere, but in the last round. The last
// round is the blocks left once every device has had its last whole
// block: the last (blocks mod devices) blocks, or the last devices blocks
// where that is 0. Its rows are cut into a range per device, of equal
// rows, so that no device idles while others compute the last whole
// blocks: three equal blocks on two devices take two blocks' time whole,
// one and a half cut; four, the last a remainder, take the time of two
// blocks whole, and of half the four cut. Where the last round's blocks
// are equal and as many as the devices, the ranges are the blocks, which
// stay whole, and so does a block a cut would leave a piece of under a
// sixteenth of a device's share (equal blocks that differ by a few rows,
// evenBlocks). The record batches stay the host blocks'.
func (r *devicesRunner) TailCuts(i int, blocks []graph.SourceBlock) []int {
	return TailCuts(len(r.workers), i, blocks)
}

// TailCuts is where block i of blocks is cut on n devices
// (devicesRunner.TailCuts).
func TailCuts(n, i int, blocks []graph.SourceBlock) []int {
	if !cutLastRound {
		return nil
	}
	k := len(blocks)
	round := k % n
	if round == 0 {
		round = min(n, k)
	}
	first := k - round
	if i < first || n < 2 {
		return nil
	}
	start, rows := blocks[first].Start, blocks[k-1].End-blocks[first].Start
	b := blocks[i]
	slack := max(8, rows/(16*n))
	var cuts []int
	for m := 1; m < n; m++ {
		at := start + (rows*m+n/2)/n - b.Start
		if at <= 0 || at >= b.End-b.Start {
			continue // on a block's boundary, or in another block
		}
		at -= at % 8
		if at >= slack && b.End-b.Start-at >= slack && (len(cuts) == 0 || cuts[len(cuts)-1] < at) {
			cuts = append(cuts, at)
		}
	}
	return cuts
}

// Depth is the number of blocks the producer keeps submitted so that no
// device waits for one: with stats, one computing per device and one
// queued; with blocks started ahead, each device also starts its next
// block before its results land (the one-device overlap, schedule.go).
func (r *devicesRunner) Depth(stats bool) int {
	if stats {
		return len(r.workers) + 1
	}
	return 2 * len(r.workers)
}

// Close stops the workers and closes the devices' runners.
func (r *devicesRunner) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.queue.close()
	r.wg.Wait()
	var errs []error
	for _, w := range r.workers {
		errs = append(errs, w.runner.Close())
	}
	return errors.Join(errs...)
}

var errDevicesClosed = errors.New("devices: the multi-device runner is closed")

// submit queues job j of rows rows, cut at cuts (increasing offsets,
// multiples of 8); share lets the devices idle when a piece is taken cut
// it among them.
func (r *devicesRunner) submit(j *deviceJob, rows int, share bool, cuts []int) (*deviceJob, error) {
	if err := j.ctx.Err(); err != nil {
		return nil, err
	}
	if r.closed.Load() {
		return nil, errDevicesClosed
	}
	j.done = make(chan struct{})
	if j.out != nil {
		j.out.ValidSet, j.out.Nulls = false, 0
	}
	if err := r.queue.push(j, rows, share, cuts); err != nil {
		return nil, err
	}
	return j, nil
}

// submitStats is submit for a stats job, whose error is nil where the
// job is (no nil *deviceJob in a non-nil StatsWaiter).
func (r *devicesRunner) submitStats(j *deviceJob, rows int, share bool, cuts []int) (graph.StatsWaiter, error) {
	j, err := r.submit(j, rows, share, cuts)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// startedChunk is a chunk whose rows are on their way from w's device.
type startedChunk struct {
	c   chunk
	sub *graph.Block
	w   graph.Waiter
}

// work takes chunks until the queue closes or the device fails. A device
// whose runner is an AsyncRunner starts its next block before the
// previous one's results have landed, as one device alone does
// (startAhead): it takes that block only where no other device is idle.
func (r *devicesRunner) work(w *deviceWorker) {
	async, _ := w.runner.(graph.AsyncRunner)
	var pending *startedChunk
	for {
		c, got, open := r.queue.take(w.index, int(w.maxChunk.Load()), pending == nil)
		if !got {
			if pending == nil {
				return // closed
			}
			if !r.land(w, pending) {
				return
			}
			pending = nil
			if !open {
				return
			}
			continue
		}
		if async != nil && c.job.kind == jobStart {
			s, err := r.start(async, c)
			if pending != nil {
				if !r.land(w, pending) {
					// The device failed: nothing may write to c's rows
					// once they are handed over.
					if s != nil {
						_ = s.w.Wait()
					}
					r.queue.requeue(c)
					return
				}
				pending = nil
			}
			if err != nil {
				if !r.isRequestError(err) {
					r.queue.giveBack(w.index, c, fmt.Errorf("devices: device %s: %w", w.label, err))
					return
				}
				c.job.finish(err, 0, 0)
				continue
			}
			pending = s
			continue
		}
		if pending != nil {
			if !r.land(w, pending) {
				r.queue.requeue(c)
				return
			}
			pending = nil
		}
		valid, nulls, err := r.compute(w, c)
		if err != nil && !r.isRequestError(err) {
			r.queue.giveBack(w.index, c, fmt.Errorf("devices: device %s: %w", w.label, err))
			return
		}
		r.done(w, c, err, valid, nulls)
	}
}

// done counts chunk c computed on w (or failed with a request error).
func (r *devicesRunner) done(w *deviceWorker, c chunk, err error, valid, nulls int) {
	if err == nil {
		w.computed(c.hi - c.lo)
	}
	c.job.finish(err, valid, nulls)
}

// start starts chunk c (of a jobStart job) on an AsyncRunner.
func (r *devicesRunner) start(async graph.AsyncRunner, c chunk) (*startedChunk, error) {
	sub := subBlock(c.job.out, c.lo, c.hi)
	wt, err := async.Start(c.job.ctx, sub)
	if err != nil {
		return nil, err
	}
	return &startedChunk{c: c, sub: sub, w: wt}, nil
}

// land waits for a started chunk's results and finishes it. It reports
// false where the device failed: the chunk went back to the queue, and the
// device takes no more.
func (r *devicesRunner) land(w *deviceWorker, s *startedChunk) bool {
	err := s.w.Wait()
	if err != nil && !r.isRequestError(err) {
		r.queue.giveBack(w.index, s.c, fmt.Errorf("devices: device %s: %w", w.label, err))
		return false
	}
	valid, nulls := 0, 0
	if err == nil && s.sub.ValidSet {
		valid, nulls = s.c.hi-s.c.lo, s.sub.Nulls
	}
	r.done(w, s.c, err, valid, nulls)
	return true
}

// compute runs chunk c on w's device to the end. It returns the rows whose
// validity bits the device set, and their nulls.
func (r *devicesRunner) compute(w *deviceWorker, c chunk) (validRows, nulls int, err error) {
	j := c.job
	if j.kind == jobBetweenness {
		return 0, 0, j.brandes.compute(w, j, c)
	}
	if j.kind == jobStats {
		src := j.sources[c.lo:c.hi]
		var st *graph.Stats
		if sr, ok := w.runner.(graph.StatsRunner); ok {
			st, err = sr.RunStats(j.ctx, src)
		} else {
			blk := graph.NewBlock(src, r.n, w.runner.DistType(), false)
			if err = w.runner.Run(j.ctx, blk); err == nil {
				st = graph.ComputeStatsThreads(blk, r.threads)
			}
		}
		if err == nil {
			err = copyStats(j.stats, c.lo, st)
		}
		return 0, 0, err
	}
	sub := subBlock(j.out, c.lo, c.hi)
	if a, ok := w.runner.(graph.AsyncRunner); ok && j.kind == jobStart {
		var wt graph.Waiter
		if wt, err = a.Start(j.ctx, sub); err == nil {
			err = wt.Wait()
		}
	} else {
		err = w.runner.Run(j.ctx, sub)
	}
	if err == nil && sub.ValidSet {
		return c.hi - c.lo, sub.Nulls, nil
	}
	return 0, 0, err
}

// subBlock is a view of rows [lo, hi) of b: its distances, predecessors
// and, where row lo starts on a byte, its validity bitmap.
func subBlock(b *graph.Block, lo, hi int) *graph.Block {
	w := b.Width()
	sub := &graph.Block{Sources: b.Sources[lo:hi], NumVertices: b.NumVertices, Type: b.Type, Targets: b.Targets}
	if b.CellTargets != nil { // the k nearest: w cells of named vertices a row
		sub.CellTargets = b.CellTargets[lo*w : hi*w]
	}
	switch d := b.Dist.(type) {
	case []int32:
		sub.Dist = d[lo*w : hi*w]
	case []int64:
		sub.Dist = d[lo*w : hi*w]
	case []float32:
		sub.Dist = d[lo*w : hi*w]
	case []float64:
		sub.Dist = d[lo*w : hi*w]
	}
	if b.Pred != nil {
		sub.Pred = b.Pred[lo*w : hi*w]
	}
	if b.Valid != nil && (lo*w)%8 == 0 {
		if end := (hi*w + 7) / 8; end <= len(b.Valid) {
			sub.Valid = b.Valid[lo*w/8 : end]
		}
	}
	return sub
}

// copyStats puts part's rows into s from row lo.
func copyStats(s *graph.Stats, lo int, part *graph.Stats) error {
	if part == nil || len(part.Reachable) != len(part.Sources) {
		return errors.New("devices: a device returned no stats for its chunk")
	}
	copy(s.Reachable[lo:], part.Reachable)
	copy(s.Eccentricity[lo:], part.Eccentricity)
	copy(s.Closeness[lo:], part.Closeness)
	copy(s.Harmonic[lo:], part.Harmonic)
	switch {
	case s.SumInt != nil && part.SumInt != nil:
		copy(s.SumInt[lo:], part.SumInt)
	case s.SumFloat != nil && part.SumFloat != nil:
		copy(s.SumFloat[lo:], part.SumFloat)
	default:
		return fmt.Errorf("devices: a device reduced %s stats, the run %s", part.Type, s.Type)
	}
	return nil
}

// BlockOrder is the device's order on one device (graph.SourceOrderer),
// and on several the given order with the hubs first where the devices
// keep hub rows (hubOrderer), else none: cut from the breadth-first
// order, one device's blocks held the hubs and their neighbourhoods and
// the other's the periphery, and the two finished apart (R-MAT 18 stats
// on two H200s: 2.96 s as given, 3.11 s in that order; docs/benchmarks-history.md,
// "Issues 18 and 19: stats sources in breadth-first order").
func (d *devicesRunner) BlockOrder(sources []graph.VertexID, block int) []int32 {
	if len(d.workers) != 1 {
		if o, ok := d.workers[0].runner.(hubOrderer); ok {
			return o.HubOrder(sources, block)
		}
		return nil
	}
	if o, ok := d.workers[0].runner.(graph.SourceOrderer); ok {
		return o.BlockOrder(sources, block)
	}
	return nil
}

// hubOrderer is a device runner that keeps hub rows beside its stats
// blocks (the GPU's, gpu.Runner.HubOrder): the given order with the hubs
// among the sources first, whose rows a block then copies in one piece;
// nil where blocks of block sources keep none.
type hubOrderer interface {
	HubOrder(sources []graph.VertexID, block int) []int32
}
