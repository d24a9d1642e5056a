package gpu

// Overlap of compute and copy-out (design.md, "Data flow"): while block i+1
// computes, block i travels to the host, and the caller writes block i-1.
//
// Choices:
//   - Kernels stay on the legacy default stream 0. The results leave on
//     copyStream, a non-blocking stream that never synchronises with stream
//     0 implicitly: an event recorded on stream 0 after a block's kernels,
//     which the copy stream waits for, is the one ordering between them.
//     Waits for compute use cuStreamSynchronize(0) (device.syncCompute),
//     never cuCtxSynchronize, which would wait for the copies as well.
//   - A runner holds two result slots, each a device distance row (and
//     predecessor row) per source and a pinned stage. Block i+1's kernels
//     write the other slot's rows while the copy of block i reads its own;
//     BytesPerSource counts both device rows, so the planner sizes blocks
//     with them. A slot is reused only once the copy that reads it has
//     landed in the caller's block, so the device never waits for the host
//     unless both slots are still in flight: then Start waits for the older.
//     RunStats copies no rows out (the stats are reduced on the device as
//     soon as a block's rows are final), so under plan.Config.OneSlotStats
//     its blocks allocate the first slot's rows alone and are sized by
//     StatsBytesPerSource: 1.5× the sources for the batched kernel's int32
//     rows. A Start after it reallocates both slots.
//   - One copier goroutine per device, on a locked OS thread with the
//     context current, waits for each queued copy (its events complete in
//     queue order) and moves the stage into the caller's block with
//     parallelCopy. It needs nothing from the device goroutine, so a Start
//     that waits for a slot cannot deadlock with it, and the host copy of
//     block i runs while block i+1's kernels do.
//   - Pending.Wait only waits for the copier: it makes no driver call, may
//     run on any goroutine, and reports the copy's errors.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// resultSlots is the number of result buffers a runner alternates between.
const resultSlots = 2

// resultSlot is one set of result buffers: the rows the kernels write, the
// pinned stage they are copied into, and the events around that copy.
type resultSlot struct {
	dist, pred devBuf
	// valid and partials are the validity bitmap of the rows being copied
	// and its kernel's null counts (validity.cu), grown on demand.
	valid, partials devBuf
	// gathered and selected are a narrowed block's cells (gather.go): the
	// targets' distances or the k nearest's, and the k nearest's vertices.
	gathered, selected devBuf
	// stage holds what does not go straight to pinned host memory:
	// distances, then predecessors, then the bitmap and the null counts.
	stage pinned
	// copyStart and copied are recorded on the copy stream before and after
	// the slot's copy; created on first use.
	copyStart, copied uintptr
	// busy is the copy reading the slot, until it has landed; nil when
	// idle.
	busy *copyJob
}

// idle reports whether no copy reads s any more, forgetting a finished one.
func (s *resultSlot) idle() bool {
	if s.busy == nil {
		return true
	}
	select {
	case <-s.busy.done:
		s.busy = nil
		return true
	default:
		return false
	}
}

// settle waits until no copy reads s.
func (s *resultSlot) settle() {
	if s.busy != nil {
		<-s.busy.done
		s.busy = nil
	}
}

// copyJob is one queued device-to-host copy of a block (or of one chunk of
// a block that was halved), from a slot's rows to the caller's block.
type copyJob struct {
	seq         uint64 // queue order within the runner
	stage       []byte // the part of the slot's pinned stage the copy fills
	moves       []stageMove
	start, stop uintptr
	// With a validity bitmap: the grid of its kernel, whose null counts
	// are at partials in the stage, and the block whose Nulls and ValidSet
	// the copier sets.
	grid     int
	partials int
	block    *graph.Block
	done     chan struct{} // closed once the copy landed or failed
	// Set by the copier before done closes.
	err      error
	copyTime time.Duration // device to pinned stage, by CUDA events
	moveTime time.Duration // pinned stage to the caller's block, host clock
}

// copyQueue is the number of jobs the copier's queue holds before the
// device goroutine waits to queue more (each runner has at most
// resultSlots in flight).
const copyQueue = 8

// startCopier starts the copier goroutine (on the device goroutine, once
// the context exists).
func (dv *device) startCopier() {
	dv.copies = make(chan *copyJob, copyQueue)
	dv.copierDone = make(chan struct{})
	go dv.copyLoop(dv.copies, dv.copierDone)
}

// stopCopier lets the copier finish the jobs queued and waits for it (on
// the device goroutine, the only sender).
func (dv *device) stopCopier() {
	if dv.copies == nil {
		return
	}
	close(dv.copies)
	<-dv.copierDone
	dv.copies = nil
}

// copyLoop is the copier goroutine. It never unlocks its OS thread, so the
// thread, with the context current, ends with it.
func (dv *device) copyLoop(jobs <-chan *copyJob, done chan<- struct{}) {
	defer close(done)
	runtime.LockOSThread()
	ctxErr := dv.d.cuCtxSetCurrent(dv.ctx).Err("cuCtxSetCurrent (copier)")
	for j := range jobs {
		if ctxErr != nil {
			j.err = ctxErr
		} else {
			j.err = dv.land(j)
		}
		close(j.done)
	}
	if ctxErr == nil {
		dv.d.cuCtxSetCurrent(0)
	}
}

// land waits for j's copy on the copy stream and moves the stage into the
// caller's block (on the copier goroutine).
func (dv *device) land(j *copyJob) error {
	if err := dv.d.cuEventSynchronize(j.stop).Err("cuEventSynchronize (result copy)"); err != nil {
		return err
	}
	var ms float32
	if err := dv.d.cuEventElapsedTime(&ms, j.start, j.stop).Err("cuEventElapsedTime (result copy)"); err != nil {
		return err
	}
	j.copyTime = time.Duration(float64(ms) * float64(time.Millisecond))
	t := time.Now()
	for _, m := range j.moves {
		parallelCopy(m.to, j.stage[m.at:m.at+len(m.to)])
	}
	j.moveTime = time.Since(t)
	tracef(dv.ordinal, "result copy landed (on the device %s, moved from the stage %s)", j.copyTime.Round(time.Microsecond), j.moveTime.Round(time.Microsecond))
	if j.grid > 0 {
		nulls := 0
		for _, c := range unsafe.Slice((*uint64)(unsafe.Pointer(&j.stage[j.partials])), j.grid) {
			nulls += int(c)
		}
		j.block.Nulls, j.block.ValidSet = nulls, true
	}
	return nil
}

// stageMove is a part of a copy that lands in the stage, at offset at, and
// moves on the host into to.
type stageMove struct {
	to []byte
	at int
}

// copyOut is where a queued copy delivers a block's rows: the bytes of
// their distances and predecessors, and, for a block whose bitmap the
// device builds, the bitmap's room and the block.
type copyOut struct {
	dist, pred []byte
	valid      []byte
	block      *graph.Block
}

// validOut returns out's room for the bitmap of all its distances when the
// device should build it: a block with room for it (graph.Block.Valid)
// and integer distances (floats need no bitmap), else nil.
func (r *Runner) validOut(out *graph.Block) []byte {
	if r.distType != graph.DistInt32 && r.distType != graph.DistInt64 {
		return nil
	}
	size := (len(out.Sources)*r.n + 7) / 8
	if len(out.Valid) < size {
		return nil
	}
	return out.Valid[:size]
}

// validityGrid bounds the thread blocks of the validity kernel: each adds
// its null count into its own word of partials.
const validityGrid = 1024

// queueValidity queues on stream 0 the kernel that builds the bitmap of
// the count distances at from into s.valid, with its null counts in
// s.partials, and returns its grid. When the device has no memory left
// for the bitmap it returns 0: the host builds it instead.
func (r *Runner) queueValidity(s *resultSlot, from uint64, count int) (int, error) {
	dv := r.e.dev
	words := int64(count+31) / 32
	for _, b := range []struct {
		buf  *devBuf
		size int64
	}{{&s.valid, 4 * words}, {&s.partials, 8 * validityGrid}} {
		if b.buf.size >= b.size {
			continue
		}
		if err := dv.free(b.buf); err != nil {
			return 0, err
		}
		buf, err := dv.alloc(b.size)
		if isOutOfMemory(err) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		*b.buf = buf
	}
	grid := int(min((words*32+threadsPerBlock-1)/threadsPerBlock, validityGrid))
	name := "validity_" + typeSuffix(r.distType)
	if err := dv.launchAsync(name, grid, from, uint64(count), s.valid.ptr, s.partials.ptr); err != nil {
		return 0, err
	}
	return grid, nil
}

// takeSlot returns an idle result slot, waiting for the older copy in
// flight when none is (on the device goroutine).
func (r *Runner) takeSlot() *resultSlot {
	var oldest *resultSlot
	for i := range r.slots {
		s := &r.slots[i]
		if s.idle() {
			return s
		}
		if oldest == nil || s.busy.seq < oldest.busy.seq {
			oldest = s
		}
	}
	oldest.settle()
	return oldest
}

// settleSlots waits until no copy reads any slot.
func (r *Runner) settleSlots() {
	for i := range r.slots {
		r.slots[i].settle()
	}
}

// queueCopy queues, on the copy stream and after the kernels queued so far
// on stream 0, the copy of s's rows into out (on the device goroutine). s
// must be idle.
func (r *Runner) queueCopy(s *resultSlot, out copyOut) (*copyJob, error) {
	return r.queueCopyFrom(s, s.dist.ptr, s.pred.ptr, out)
}

// queueCopyFrom is queueCopy from the device rows at fromDist and fromPred
// (another slot's rows, for a Resident block). Distances and predecessors
// whose destinations lie in memory PinHost pinned go straight there;
// otherwise they go through s's stage and the copier moves them on. With
// out.valid, the validity kernel runs first and its bitmap and null counts
// travel through the stage.
func (r *Runner) queueCopyFrom(s *resultSlot, fromDist, fromPred uint64, out copyOut) (*copyJob, error) {
	dv := r.e.dev
	d := dv.d
	if dv.copies == nil {
		return nil, errClosed
	}
	grid := 0
	if out.valid != nil {
		var err error
		if grid, err = r.queueValidity(s, fromDist, len(out.dist)/r.distType.Size()); err != nil {
			return nil, err
		}
	}
	type part struct {
		to   []byte
		from uint64
	}
	parts := []part{{out.dist, fromDist}, {out.pred, fromPred}}
	if grid > 0 {
		parts = append(parts, part{out.valid, s.valid.ptr})
	}
	// Pinned destinations are copied into piece by piece, one piece per
	// registered range they cross (pinnedPieces).
	distPieces := dv.pinnedPieces(out.dist)
	var predPieces [][]byte
	if len(out.pred) > 0 {
		predPieces = dv.pinnedPieces(out.pred)
	}
	direct := distPieces != nil && (len(out.pred) == 0 || predPieces != nil)
	var moves []stageMove
	size := 0
	for i, p := range parts {
		if len(p.to) > 0 && (!direct || i == 2) {
			moves = append(moves, stageMove{to: p.to, at: size})
			size += len(p.to)
		}
	}
	partials := size
	if grid > 0 {
		size += 8 * grid
	}
	if err := dv.ensurePinned(&s.stage, int64(size)); err != nil {
		return nil, err
	}
	for _, ev := range []*uintptr{&s.copyStart, &s.copied} {
		if *ev == 0 {
			if err := d.cuEventCreate(ev, 0).Err("cuEventCreate"); err != nil {
				return nil, err
			}
		}
	}
	if err := d.cuEventRecord(dv.computeDone, 0).Err("cuEventRecord"); err != nil {
		return nil, err
	}
	err := d.cuStreamWaitEvent(dv.copyStream, dv.computeDone, 0).Err("cuStreamWaitEvent")
	if err == nil {
		err = d.cuEventRecord(s.copyStart, dv.copyStream).Err("cuEventRecord")
	}
	copyTo := func(to unsafe.Pointer, from uint64, n int) {
		if err == nil && n > 0 {
			err = d.cuMemcpyDtoHAsync_v2(to, from, uint64(n), dv.copyStream).Err("cuMemcpyDtoHAsync_v2")
		}
	}
	m := 0
	for i, p := range parts {
		if len(p.to) == 0 {
			continue
		}
		if direct && i < 2 {
			pieces := distPieces
			if i == 1 {
				pieces = predPieces
			}
			from := p.from
			for _, piece := range pieces {
				copyTo(unsafe.Pointer(unsafe.SliceData(piece)), from, len(piece))
				from += uint64(len(piece))
			}
			continue
		}
		copyTo(unsafe.Add(s.stage.p, moves[m].at), p.from, len(p.to))
		m++
	}
	if grid > 0 {
		copyTo(unsafe.Add(s.stage.p, partials), s.partials.ptr, 8*grid)
	}
	if err == nil {
		err = d.cuEventRecord(s.copied, dv.copyStream).Err("cuEventRecord")
	}
	if err != nil {
		// Whatever was queued must be over before the slot is reused.
		return nil, errors.Join(err, d.cuStreamSynchronize(dv.copyStream).Err("cuStreamSynchronize (copy stream)"))
	}
	r.copySeq++
	copied := 8 * grid
	for _, p := range parts {
		copied += len(p.to)
	}
	r.downloaded.Add(int64(copied))
	j := &copyJob{
		seq:   r.copySeq,
		stage: unsafe.Slice((*byte)(s.stage.p), size),
		moves: moves,
		start: s.copyStart, stop: s.copied,
		done: make(chan struct{}),
		grid: grid, partials: partials, block: out.block,
	}
	s.busy = j
	dv.copies <- j
	return j, nil
}

// releaseSlots frees the slots' stages and events once no copy reads them
// (on the device goroutine; their device rows go with releaseBlock).
func (r *Runner) releaseSlots() error {
	dv := r.e.dev
	r.settleSlots()
	var errs []error
	for i := range r.slots {
		s := &r.slots[i]
		errs = append(errs, dv.freePinned(&s.stage))
		for _, ev := range []*uintptr{&s.copyStart, &s.copied} {
			if *ev != 0 {
				errs = append(errs, dv.d.cuEventDestroy_v2(*ev).Err("cuEventDestroy_v2"))
				*ev = 0
			}
		}
	}
	return errors.Join(errs...)
}

// Pending is a block whose kernels have run and whose results are on their
// way to the caller's block. Wait for it before reading the block.
type Pending struct {
	jobs       []*copyJob
	kernelTime time.Duration
	host       hostTimes
}

// HostTimes is the host's time in planning the block's kernels and in
// allocating device memory for it.
func (p *Pending) HostTimes() (plan, alloc time.Duration) { return p.host.plan, p.host.alloc }

// Wait blocks until the block's distances (and predecessors) are in the
// block given to Start, and returns the errors of the copies. It makes no
// driver call, may be called from any goroutine, and returns the same
// again when called twice.
func (p *Pending) Wait() error {
	var errs []error
	for _, j := range p.jobs {
		<-j.done
		errs = append(errs, j.err)
	}
	return errors.Join(errs...)
}

// KernelTime is the device time of the block's kernels, by CUDA events.
func (p *Pending) KernelTime() time.Duration { return p.kernelTime }

// CopyTime is the device time of the block's copies from device to pinned
// host memory, by CUDA events on the copy stream; valid after Wait.
func (p *Pending) CopyTime() time.Duration {
	var t time.Duration
	for _, j := range p.jobs {
		t += j.copyTime
	}
	return t
}

// MoveTime is the host time spent moving the block from pinned memory into
// the caller's block; valid after Wait.
func (p *Pending) MoveTime() time.Duration {
	var t time.Duration
	for _, j := range p.jobs {
		t += j.moveTime
	}
	return t
}

// Start runs the kernels for every source of out.Sources, as Run does, and
// returns once they are done and the copy of their results to out is
// queued on the copy stream: the caller may Start the next block at once,
// whose kernels then run while this block travels, and must call the
// Pending's Wait before reading out. The runner alternates between two
// result slots; a Start that finds both in flight (two Starts not yet
// landed) first waits for the older. Errors are Run's (checked block,
// cancellation noticed before the launch, a *graph.NegativeCycleError for a
// reachable negative cycle); when Start fails, nothing is left writing to
// out. Errors of the copy itself come from Wait. A narrowed runner's
// blocks (its targets' columns, its k nearest) start the same way, their
// narrowed cells alone copied (gather.go).
func (r *Runner) Start(ctx context.Context, out *graph.Block) (*Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.narrowsBlocks() {
		return r.startNarrowed(ctx, out)
	}
	if err := r.checkBlock(out); err != nil {
		return nil, err
	}
	out.ValidSet, out.Nulls = false, 0
	p := &Pending{}
	if len(out.Sources) == 0 {
		return p, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	k := len(out.Sources)
	dist, _ := sliceBytes(out.Dist)
	rowBytes := r.n * r.distType.Size()
	cycleSource := graph.VertexID(-1)
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		return r.runChunks(k, func(lo, hi int) error {
			s := r.takeSlot()
			c, err := r.compute(out.Sources[lo:hi], s, false)
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			cp := copyOut{dist: dist[lo*rowBytes : hi*rowBytes]}
			if out.Pred != nil {
				cp.pred = asBytes(out.Pred[lo*r.n : hi*r.n])
			} else if lo == 0 && hi == k {
				// The bitmap of a block that was halved is the host's.
				cp.valid, cp.block = r.validOut(out), out
			}
			j, err := r.queueCopy(s, cp)
			if err != nil {
				return err
			}
			p.jobs = append(p.jobs, j)
			return nil
		})
	})
	return r.started(p, err, cycleSource)
}

// started ends a Start (or a narrowed start) whose launches returned err:
// p takes the runner's timings; on an error the chunks already queued land
// before it returns, and errCycle becomes the negative cycle through
// cycleSource.
func (r *Runner) started(p *Pending, err error, cycleSource graph.VertexID) (*Pending, error) {
	p.kernelTime, p.host = r.kernelTime, r.host
	if err != nil {
		_ = p.Wait()
		if errors.Is(err, errCycle) {
			return nil, negativeCycle(r.g, cycleSource)
		}
		return nil, err
	}
	return p, nil
}

// Resident is a block of sources computed into device memory in one go,
// whose rows then travel to the host piecewise (Start): the blocks a host
// can hold at once are far smaller than what the device holds, and the
// batched kernel's derivations work best on one block of many sources
// (package pipeline uses it for the matrix layout). Its rows live in one
// of the runner's result slots until Close or the runner's next block.
type Resident struct {
	r          *Runner
	slot       *resultSlot
	sources    []graph.VertexID
	kernelTime time.Duration
	host       hostTimes
}

// HostTimes is Pending.HostTimes for the device block.
func (res *Resident) HostTimes() (plan, alloc time.Duration) { return res.host.plan, res.host.alloc }

// ComputeResident runs the kernels for every source of sources into one
// result slot and keeps the rows there. It waits for the copies in flight
// first, which may still read the slot. Errors are Run's; a block that
// does not fit in device memory is not halved but fails with an
// *OutOfMemoryError.
func (r *Runner) ComputeResident(ctx context.Context, sources []graph.VertexID) (*Resident, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.errNarrowed("ComputeResident"); err != nil {
		return nil, err
	}
	for _, s := range sources {
		if s < 0 || int(s) >= r.n {
			return nil, fmt.Errorf("gpu: source %d outside [0, %d)", s, r.n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	res := &Resident{r: r, sources: sources}
	if len(sources) == 0 {
		return res, nil
	}
	cycleSource := graph.VertexID(-1)
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		r.settleSlots()
		res.slot = r.takeSlot()
		c, err := r.compute(sources, res.slot, false)
		cycleSource = c
		return err
	})
	res.kernelTime, res.host = r.kernelTime, r.host
	switch {
	case err != nil:
		return nil, err
	case cycleSource >= 0:
		return nil, negativeCycle(r.g, cycleSource)
	}
	return res, nil
}

// KernelTime is the device time of the block's kernels.
func (res *Resident) KernelTime() time.Duration { return res.kernelTime }

// Start queues the copy of the rows of sources[lo:hi] into out (whose
// Sources must be those) on the copy stream, through whichever result
// slot's stage is idle, as Runner.Start does; Wait on the Pending before
// reading out.
func (res *Resident) Start(ctx context.Context, lo, hi int, out *graph.Block) (*Pending, error) {
	r := res.r
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if lo < 0 || hi > len(res.sources) || lo > hi || len(out.Sources) != hi-lo {
		return nil, fmt.Errorf("gpu: rows [%d, %d) of a resident block of %d for a block of %d sources", lo, hi, len(res.sources), len(out.Sources))
	}
	for i, s := range out.Sources {
		if s != res.sources[lo+i] {
			return nil, fmt.Errorf("gpu: block row %d is source %d, the resident row %d", i, s, res.sources[lo+i])
		}
	}
	if err := r.checkBlock(out); err != nil {
		return nil, err
	}
	out.ValidSet, out.Nulls = false, 0
	p := &Pending{}
	if hi == lo {
		return p, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	dist, _ := sliceBytes(out.Dist)
	c := copyOut{dist: dist}
	if out.Pred != nil {
		c.pred = asBytes(out.Pred)
	} else {
		c.valid, c.block = r.validOut(out), out
	}
	rowBytes := uint64(r.n * r.distType.Size())
	err := r.e.dev.do(func() error {
		j, err := r.queueCopyFrom(r.takeSlot(), res.slot.dist.ptr+uint64(lo)*rowBytes, res.slot.pred.ptr+uint64(lo)*uint64(4*r.n), c)
		if err == nil {
			p.jobs = append(p.jobs, j)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
