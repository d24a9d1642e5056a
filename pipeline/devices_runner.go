package pipeline

// The multi-device runner and its block queue (see devices.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

// devicesRunner runs every block on several devices: it implements the
// runner interfaces the producer drives (Run, and AsyncRunner's Start and
// StatsRunner's RunStats) by cutting the block into chunks that the
// devices' workers take from one queue.
type devicesRunner struct {
	workers []*deviceWorker
	n       int // vertices
	threads int // of host stats reductions
	queue   *blockQueue
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// The multi-device runner's part of the seam.
var (
	_ graph.Runner       = (*devicesRunner)(nil)
	_ graph.AsyncRunner  = (*devicesRunner)(nil)
	_ graph.StatsRunner  = (*devicesRunner)(nil)
	_ graph.StatsSizer   = (*devicesRunner)(nil)
	_ graph.Describer    = (*devicesRunner)(nil)
	_ graph.NarrowRunner = (*devicesRunner)(nil)
)

// deviceWorker is one device's runner and what it did.
type deviceWorker struct {
	label  string
	runner graph.Runner
	// maxChunk is the most sources of one chunk (multiEngine.chunkMax).
	maxChunk int
	// chunks and sources count what the device computed.
	chunks, sources atomic.Int64
}

// newDevicesRunner starts a worker per device runner; Close stops them
// and closes the runners.
func newDevicesRunner(workers []*deviceWorker, n, threads int, notice io.Writer) *devicesRunner {
	r := &devicesRunner{workers: workers, n: n, threads: threads, queue: newBlockQueue(len(workers), notice)}
	for _, w := range workers {
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

// Run computes out on the devices and returns when every row is in place.
func (r *devicesRunner) Run(ctx context.Context, out *graph.Block) error {
	j, err := r.submit(&deviceJob{ctx: ctx, kind: jobRun, out: out}, len(out.Sources))
	if err != nil {
		return err
	}
	return j.Wait()
}

// Start queues out's chunks and returns; out may be read once Wait has
// returned nil.
func (r *devicesRunner) Start(ctx context.Context, out *graph.Block) (graph.Waiter, error) {
	return r.submit(&deviceJob{ctx: ctx, kind: jobStart, out: out}, len(out.Sources))
}

// RunStats reduces the sources' rows on the devices (each device's
// StatsRunner, or its rows reduced on the host).
func (r *devicesRunner) RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error) {
	j := &deviceJob{ctx: ctx, kind: jobStats, sources: sources, stats: graph.NewStats(sources, r.DistType())}
	if _, err := r.submit(j, len(sources)); err != nil {
		return nil, err
	}
	if err := j.Wait(); err != nil {
		return nil, err
	}
	return j.stats, nil
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

var errDevicesClosed = errors.New("pipeline: the multi-device runner is closed")

// submit queues the chunks of a job of rows rows: sharesPerDevice shares
// per device still working, each a multiple of 8 rows (the validity bitmap
// of a chunk then starts on a byte); a device cuts a share larger than its
// chunks.
func (r *devicesRunner) submit(j *deviceJob, rows int) (*deviceJob, error) {
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
	if err := r.queue.push(j, rows); err != nil {
		return nil, err
	}
	return j, nil
}

// work takes chunks until the queue closes or the device fails.
func (r *devicesRunner) work(w *deviceWorker) {
	for {
		c, ok := r.queue.take(w.maxChunk)
		if !ok {
			return
		}
		valid, nulls, err := r.compute(w, c)
		if err != nil && !isRequestError(err) {
			r.queue.giveBack(c, fmt.Errorf("pipeline: device %s: %w", w.label, err))
			return
		}
		if err == nil {
			w.chunks.Add(1)
			w.sources.Add(int64(c.hi - c.lo))
		}
		c.job.finish(err, valid, nulls)
	}
}

// compute runs chunk c on w's device. It returns the rows whose validity
// bits the device set, and their nulls.
func (r *devicesRunner) compute(w *deviceWorker, c chunk) (validRows, nulls int, err error) {
	j := c.job
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
		return errors.New("pipeline: a device returned no stats for its chunk")
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
		return fmt.Errorf("pipeline: a device reduced %s stats, the run %s", part.Type, s.Type)
	}
	return nil
}

// jobKind is how a job's chunks run on a device.
type jobKind int

const (
	jobRun   jobKind = iota // Run (narrowed blocks: the device's Run only)
	jobStart                // AsyncRunner.Start where the device has it
	jobStats                // StatsRunner.RunStats where the device has it
)

// deviceJob is one block submitted to the devices: it is the Waiter of
// Start.
type deviceJob struct {
	ctx     context.Context
	kind    jobKind
	out     *graph.Block // jobRun, jobStart
	sources []graph.VertexID
	stats   *graph.Stats // jobStats

	mu        sync.Mutex
	pending   int // chunks queued or running
	err       error
	validRows int
	nulls     int
	done      chan struct{}
}

// Wait returns once every chunk has landed or been dropped.
func (j *deviceJob) Wait() error {
	<-j.done
	return j.err
}

func (j *deviceJob) failed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err != nil
}

// finish counts one chunk done (with err, or dropped after another's).
func (j *deviceJob) finish(err error, validRows, nulls int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil && j.err == nil {
		j.err = err
	}
	j.validRows += validRows
	j.nulls += nulls
	j.pending--
	if j.pending > 0 {
		return
	}
	if j.out != nil && j.err == nil && j.out.Valid != nil && j.validRows == len(j.out.Sources) {
		j.out.ValidSet, j.out.Nulls = true, j.nulls
	}
	close(j.done)
}

// chunk is rows [lo, hi) of a job.
type chunk struct {
	job    *deviceJob
	lo, hi int
}

// blockQueue is the queue of chunks the devices share, oldest first.
type blockQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks []chunk
	alive  int // workers that have not failed
	faults []error
	closed bool
	notice io.Writer
}

func newBlockQueue(workers int, notice io.Writer) *blockQueue {
	if notice == nil {
		notice = io.Discard
	}
	q := &blockQueue{alive: workers, notice: notice}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// sharesPerDevice is the number of chunks a block is cut into per device:
// more than one, so that a device that finishes its first early takes
// part of a slower device's share instead of waiting for it (the sources
// of a block differ in cost: R-MAT hubs against leaves).
const sharesPerDevice = 2

// push queues the chunks of j's rows rows, sharesPerDevice per device
// alive. Once every device has failed it refuses, with their errors.
func (q *blockQueue) push(j *deviceJob, rows int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return errDevicesClosed
	case q.alive == 0:
		return errors.Join(q.faults...)
	}
	if rows == 0 {
		close(j.done)
		return nil
	}
	parts := sharesPerDevice * q.alive
	share := (rows + parts - 1) / parts
	share = (share + 7) / 8 * 8
	j.mu.Lock()
	for lo := 0; lo < rows; lo += share {
		q.chunks = append(q.chunks, chunk{job: j, lo: lo, hi: min(lo+share, rows)})
		j.pending++
	}
	j.mu.Unlock()
	q.cond.Broadcast()
	return nil
}

// take waits for the oldest chunk and returns at most maxRows rows of it,
// leaving the rest at the front; chunks of a job that failed are dropped.
// It returns false once the queue is closed.
func (q *blockQueue) take(maxRows int) (chunk, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.chunks) > 0 && !q.closed {
			c := q.chunks[0]
			if c.job.failed() {
				q.chunks = q.chunks[1:]
				c.job.finish(nil, 0, 0)
				continue
			}
			if maxRows > 0 && c.hi-c.lo > maxRows {
				rest := c
				rest.lo = c.lo + maxRows
				c.hi = rest.lo
				q.chunks[0] = rest
				c.job.mu.Lock()
				c.job.pending++
				c.job.mu.Unlock()
			} else {
				q.chunks = q.chunks[1:]
			}
			return c, true
		}
		if q.closed {
			return chunk{}, false
		}
		q.cond.Wait()
	}
}

// giveBack returns the chunk of a device that failed with err to the
// front of the queue; the device takes no more. The last device to fail
// fails every chunk left with the errors of all.
func (q *blockQueue) giveBack(c chunk, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.alive--
	q.faults = append(q.faults, err)
	if q.alive > 0 {
		fmt.Fprintf(q.notice, "pathctl: %v; its blocks go to the other devices\n", err)
		q.chunks = append([]chunk{c}, q.chunks...)
		q.cond.Broadcast()
		return
	}
	all := errors.Join(q.faults...)
	c.job.finish(all, 0, 0)
	for _, c := range q.chunks {
		c.job.finish(all, 0, 0)
	}
	q.chunks = nil
}

// close fails the chunks left and wakes the workers, which then stop.
func (q *blockQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, c := range q.chunks {
		c.job.finish(errDevicesClosed, 0, 0)
	}
	q.chunks = nil
	q.cond.Broadcast()
}
