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
//     rows. A runner that selects the k nearest does the same
//     (narrowing.selectsInOneSlot): its cells, a few per source, are
//     copied from the first slot, and the next block waits for that copy
//     alone. A Start of
//     full rows after them reallocates both slots.
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
	"time"

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

// takeSlot returns an idle result slot, waiting for the older copy in
// flight when none is (on the device goroutine).
func (bb *blockBufs) takeSlot() *resultSlot {
	var oldest *resultSlot
	for i := range bb.slots {
		s := &bb.slots[i]
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
func (bb *blockBufs) settleSlots() {
	for i := range bb.slots {
		bb.slots[i].settle()
	}
}

// statsSlot is the result slot RunStats computes into: the first, once no
// copy of an earlier Start reads it (with one slot allocated it is the
// only one with rows).
func (bb *blockBufs) statsSlot() *resultSlot {
	s := &bb.slots[0]
	s.settle()
	return s
}

// releaseSlots frees the slots' stages and events once no copy reads them
// (on the device goroutine; their device rows go with releaseBlock).
func (bb *blockBufs) releaseSlots() error {
	dv := bb.dv
	bb.settleSlots()
	var errs []error
	for i := range bb.slots {
		s := &bb.slots[i]
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
	if r.narrow.blocks() {
		return r.startNarrowed(ctx, out)
	}
	if err := checkFullBlock(out, r.n, r.buf.blockType(), r.req.WithPredecessors); err != nil {
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
	rowBytes := r.n * r.buf.blockType().Size() // out's row, of the values the copy converts to
	cycleSource := graph.VertexID(-1)
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		return runChunks(k, &r.buf.fit, r.releaseBlock, func(lo, hi int) error {
			s := r.buf.takeSlot()
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
				cp.valid, cp.block = r.buf.validOut(out), out
			}
			j, err := r.buf.queueCopy(s, cp)
			if err != nil {
				return err
			}
			p.jobs = append(p.jobs, j)
			return nil
		})
	})
	return p.started(r, err, cycleSource)
}

// startNarrowed is Start for a runner whose blocks are narrowed
// (narrowing.blocks, gather.go): per chunk of sources, the rows are
// computed into an idle result slot, gathered and clipped (or the k
// nearest selected) into that slot's own buffers, and the copy of those
// cells to out is queued on the copy stream. Blocks of the k nearest
// selected in one slot (narrowing.selectsInOneSlot) compute into the
// first slot, once the copy of the block before has left it, beside the
// hub rows.
// Errors are Start's.
func (r *Runner) startNarrowed(ctx context.Context, out *graph.Block) (*Pending, error) {
	q := &r.narrow
	if err := q.checkBlock(out); err != nil {
		return nil, err
	}
	out.ValidSet, out.Nulls = false, 0
	p := &Pending{}
	k := len(out.Sources)
	if k == 0 {
		return p, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	dist, _ := sliceBytes(out.Dist)
	w := q.outWidth()
	rowBytes := w * r.distType.Size()
	cycleSource := graph.VertexID(-1)
	dv := r.e.dev
	err := dv.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		if err := q.uploadTargets(dv); err != nil {
			return err
		}
		oneSlot := q.selectsInOneSlot(r.bk.cfg.OneSlotStats)
		return runChunks(k, &r.buf.fit, r.releaseBlock, func(lo, hi int) error {
			s := r.buf.statsSlot()
			if !oneSlot {
				s = r.buf.takeSlot()
			}
			c, err := r.compute(out.Sources[lo:hi], s, oneSlot)
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			from, took, err := q.narrowRows(dv, s, hi-lo, r.buf.sources.ptr, r.bk.cuts())
			r.kernelTime += took
			if err != nil {
				return err
			}
			cp := copyOut{dist: dist[lo*rowBytes : hi*rowBytes]}
			if q.nearestK > 0 {
				cp.pred = asBytes(out.CellTargets[lo*w : hi*w])
			} else if q.req.Targets == nil && lo == 0 && hi == k {
				cp.valid, cp.block = r.buf.validOut(out), out // full rows, clipped
			}
			j, err := r.buf.queueCopyFrom(s, from, s.selected.ptr, cp)
			if err != nil {
				return err
			}
			p.jobs = append(p.jobs, j)
			return nil
		})
	})
	return p.started(r, err, cycleSource)
}

// started ends r's Start (or narrowed start) of p whose launches returned
// err: p takes the runner's timings; on an error the chunks already queued
// land before it returns, and errCycle becomes the negative cycle through
// cycleSource.
func (p *Pending) started(r *Runner, err error, cycleSource graph.VertexID) (*Pending, error) {
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
	if err := r.narrow.errFullRows("ComputeResident"); err != nil {
		return nil, err
	}
	if err := checkSources(sources, r.n); err != nil {
		return nil, err
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
		r.buf.settleSlots()
		res.slot = r.buf.takeSlot()
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
	if err := checkFullBlock(out, r.n, r.buf.blockType(), r.req.WithPredecessors); err != nil {
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
		c.valid, c.block = r.buf.validOut(out), out
	}
	rowBytes := uint64(r.n * r.distType.Size())
	err := r.e.dev.do(func() error {
		j, err := r.buf.queueCopyFrom(r.buf.takeSlot(), res.slot.dist.ptr+uint64(lo)*rowBytes, res.slot.pred.ptr+uint64(lo)*uint64(4*r.n), c)
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
