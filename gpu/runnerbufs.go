package gpu

// A runner's device buffers (runner.go): what one more source in a block
// costs, the CSR uploaded, and the block's buffers grown to a capacity and
// released.

import (
	"errors"

	"github.com/pathctl/pathctl/graph"
)

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
	gathered, selected := r.narrow.bytesPerSource()
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
	for _, b := range []*devBuf{&r.offsets, &r.targets, &r.weights, &r.arcSources} {
		errs = append(errs, dv.free(b))
	}
	errs = append(errs, r.narrow.release(dv))
	errs = append(errs, r.releaseSlots())
	errs = append(errs, r.releaseArcsByWeight())
	errs = append(errs, dv.freePinned(&r.stage))
	return errors.Join(errs...)
}

// releaseBlock frees the per-source buffers, once the copies in flight
// have landed (on the device goroutine).
func (r *Runner) releaseBlock() error {
	dv := r.e.dev
	r.hubs.leave()
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
	r.hubs.rows, r.scratch = hubState{}, 0
	return errors.Join(errs...)
}

// ensureCapacity sizes the per-source buffers for k sources: with oneSlot
// (a stats block under plan.Config.OneSlotStats) only the first result
// slot's rows, else every slot's rows and narrowed cells. Buffers that
// already hold k sources stay, unless they hold one slot and every slot
// is asked for, or more hub rows than a run sized since allows
// (SizeStatsRun: they would take memory its blocks were planned in).
func (r *Runner) ensureCapacity(k int, oneSlot bool) error {
	if k <= r.capacity && (oneSlot || !r.oneSlot) && len(r.hubs.rows.vertices) <= r.hubs.forBlock(r.capacity) {
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
	gathered, selected := r.narrow.bytesPerSource()
	hubRows := 0
	if oneSlot {
		hubRows = r.hubs.forBlock(k)
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
	if err := r.hubs.alloc(k, hubRows); err != nil {
		return errors.Join(err, r.releaseBlock())
	}
	return nil
}
