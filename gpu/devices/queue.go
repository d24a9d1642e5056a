package devices

// The queue of blocks the devices share (runner.go): the jobs submitted,
// the chunks they are cut into, and the queue the workers take them from,
// which hands a failed device's chunk to the others.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// jobKind is how a job's chunks run on a device.
type jobKind int

const (
	jobRun         jobKind = iota // Run (narrowed blocks: the device's Run only)
	jobStart                      // AsyncRunner.Start where the device has it
	jobStats                      // StatsRunner.RunStats where the device has it
	jobBetweenness                // BetweennessRunner's passes (betweenness.go)
)

// deviceJob is one block submitted to the devices: it is the Waiter of
// Start.
type deviceJob struct {
	ctx     context.Context
	kind    jobKind
	out     *graph.Block // jobRun, jobStart
	sources []graph.VertexID
	stats   *graph.Stats // jobStats
	brandes *brandesJob  // jobBetweenness

	mu        sync.Mutex
	pending   int // chunks queued or running
	err       error
	validRows int
	nulls     int
	done      chan struct{}
}

// Stats is a stats job's stats, valid once Wait has returned nil.
func (j *deviceJob) Stats() *graph.Stats { return j.stats }

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

// chunk is rows [lo, hi) of a job. A shared chunk may be cut among the
// devices idle when it is taken.
type chunk struct {
	job    *deviceJob
	lo, hi int
	share  bool
}

// blockQueue is the queue of chunks the devices share, oldest first.
type blockQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks []chunk
	alive  int // workers that have not failed
	// idle counts the workers that hold no chunk (isIdle), including
	// those not yet in take.
	idle   int
	isIdle []bool
	// retired marks the workers that failed (giveBack, retire).
	retired []bool
	faults  []error
	closed  bool
	notice  io.Writer
}

func newBlockQueue(workers int, notice io.Writer) *blockQueue {
	if notice == nil {
		notice = io.Discard
	}
	q := &blockQueue{alive: workers, idle: workers, isIdle: make([]bool, workers), retired: make([]bool, workers), notice: notice}
	for i := range q.isIdle {
		q.isIdle[i] = true
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues j's rows rows as chunks cut at cuts (increasing offsets
// within the rows, multiples of 8, so that each chunk's validity bitmap
// starts on a byte), shared where share is set. Once every device has
// failed it refuses, with their errors.
func (q *blockQueue) push(j *deviceJob, rows int, share bool, cuts []int) error {
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
	j.mu.Lock()
	lo := 0
	for _, hi := range append(slices.Clip(cuts), rows) {
		if hi <= lo || hi > rows {
			continue
		}
		q.chunks = append(q.chunks, chunk{job: j, lo: lo, hi: hi, share: share})
		j.pending++
		lo = hi
	}
	j.mu.Unlock()
	q.cond.Broadcast()
	return nil
}

// take returns the oldest chunk, or its first rows, leaving the rest at
// the front: at most maxRows rows (where above 0; a multiple of 8 where
// above 8, so that the rest's validity bitmap starts on a byte), and of a
// shared chunk an equal part for this device and each idle one. Chunks of
// a job that failed are dropped. worker is the taker's index. Where wait
// is set the worker holds no chunk (it counts as idle) and waits for one;
// otherwise it returns none at once where the queue is empty or another
// worker is idle, and that one should take it. got is false when no chunk
// is returned; open is false once the queue is closed.
func (q *blockQueue) take(worker, maxRows int, wait bool) (c chunk, got, open bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.retired[worker] {
		return chunk{}, false, false
	}
	if wait && !q.isIdle[worker] {
		q.isIdle[worker] = true
		q.idle++
	}
	for {
		if q.retired[worker] { // left out while it waited (retire)
			return chunk{}, false, false
		}
		others := q.idle
		if q.isIdle[worker] {
			others--
		}
		if !wait && others > 0 {
			return chunk{}, false, !q.closed
		}
		for len(q.chunks) > 0 && !q.closed {
			c := q.chunks[0]
			if c.job.failed() {
				q.chunks = q.chunks[1:]
				c.job.finish(nil, 0, 0)
				continue
			}
			rows := c.hi - c.lo
			cut := rows
			if c.share && others > 0 {
				cut = roundUp8((rows + others) / (others + 1))
			}
			if maxRows > 0 && cut > maxRows {
				cut = maxRows
				if cut > 8 {
					cut -= cut % 8
				}
			}
			if cut < rows {
				rest := c
				rest.lo = c.lo + cut
				c.hi = rest.lo
				q.chunks[0] = rest
				c.job.mu.Lock()
				c.job.pending++
				c.job.mu.Unlock()
			} else {
				q.chunks = q.chunks[1:]
			}
			if q.isIdle[worker] {
				q.isIdle[worker] = false
				q.idle--
			}
			return c, true, true
		}
		if q.closed || !wait {
			return chunk{}, false, !q.closed
		}
		q.cond.Wait()
	}
}

func roundUp8(n int) int { return (n + 7) / 8 * 8 }

// giveBack returns the chunk of a device that failed with err to the
// front of the queue; the device takes no more. The last device to fail
// fails every chunk left with the errors of all.
func (q *blockQueue) giveBack(worker int, c chunk, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.isIdle[worker] { // cannot be: a failing worker holds c
		q.isIdle[worker] = false
		q.idle--
	}
	q.retired[worker] = true
	q.alive--
	q.faults = append(q.faults, err)
	if q.alive > 0 {
		fmt.Fprintf(q.notice, "pathctl: %v; its blocks go to the other devices\n", err)
	}
	q.requeueLocked(c)
}

// retire leaves out a worker that failed with err outside the queue (a
// device block): it takes no more chunks. It reports whether a device is
// left; after the last, every chunk left fails with the errors of all.
func (q *blockQueue) retire(worker int, err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.retired[worker] {
		return q.alive > 0
	}
	q.retired[worker] = true
	if q.isIdle[worker] {
		q.isIdle[worker] = false
		q.idle--
	}
	q.alive--
	q.faults = append(q.faults, err)
	q.cond.Broadcast()
	if q.alive > 0 {
		fmt.Fprintf(q.notice, "pathctl: %v; its blocks go to the other devices\n", err)
		return true
	}
	all := errors.Join(q.faults...)
	for _, c := range q.chunks {
		c.job.finish(all, 0, 0)
	}
	q.chunks = nil
	return false
}

// retiredOrFailed reports whether a worker takes no more chunks.
func (q *blockQueue) retiredOrFailed(worker int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.retired[worker]
}

// requeue returns to the front of the queue a chunk that a device which
// has already failed (giveBack) had started.
func (q *blockQueue) requeue(c chunk) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.requeueLocked(c)
}

func (q *blockQueue) requeueLocked(c chunk) {
	if q.alive > 0 && !q.closed {
		q.chunks = append([]chunk{c}, q.chunks...)
		q.cond.Broadcast()
		return
	}
	all := errDevicesClosed
	if !q.closed {
		all = errors.Join(q.faults...)
	}
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
