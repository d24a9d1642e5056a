package gpu

// A runner's device buffers (runner.go): what one more source in a block
// costs, the CSR uploaded, and the block's buffers grown to a capacity and
// released.

import (
	"errors"
	"sync/atomic"

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
// (FreeMemory) has them out already. A runner that selects the k nearest
// in one result slot (narrowing.selectsInOneSlot) counts that slot's
// buffers alone.
func (r *Runner) BytesPerSource() int64 {
	return r.bytesPerSource(r.narrow.selectsInOneSlot(r.bk.cfg.OneSlotStats))
}

// StatsBytesPerSource is the device memory one more source in a block of
// RunStats costs (graph.StatsSizer): as BytesPerSource, but under
// plan.Config.OneSlotStats with one set of result rows and no narrowed
// cells, since a stats block is reduced on the device as soon as its rows
// are final and nothing copies rows out while the next one computes. For
// the batched kernel's int32 rows that is 8 bytes per vertex instead of
// 12.
func (r *Runner) StatsBytesPerSource() int64 {
	return r.bytesPerSource(r.bk.cfg.OneSlotStats)
}

// bytesPerSource is BytesPerSource, or with oneSlot the per-source
// buffers of the first result slot alone, with the selected cells of the
// k nearest (oneSlotCells) and no other narrowed cells.
func (r *Runner) bytesPerSource(oneSlot bool) int64 {
	l := layoutOf(r.req.Algorithm, r.distType, r.req.WithPredecessors)
	gathered, selected := r.narrow.bytesPerSource()
	if oneSlot {
		if r.bk.scratchPossible() {
			l.aux = 0 // a fixed scratch (StatsFixedBytes)
		}
		gathered, selected = r.narrow.oneSlotCells()
		return int64(r.n)*int64(l.dist+l.pred+l.aux+l.flags) + perSourceBytes + gathered + selected
	}
	return int64(r.n)*int64(resultSlots*(l.dist+l.pred)+l.aux+l.flags) + perSourceBytes + resultSlots*(gathered+selected)
}

// perSourceBytes is what a source costs beside its rows: its id, its status
// word and its stats words.
const perSourceBytes = 4 + 4 + 8*statsWords

// release frees every device buffer and the staging buffers, once the
// copies in flight have landed (on the device goroutine).
func (r *Runner) release() error {
	dv := r.e.dev
	var errs []error
	errs = append(errs, r.releaseBlock())
	errs = append(errs, r.csr.release(dv, &r.e.graphs.mu))
	errs = append(errs, r.narrow.release(dv))
	errs = append(errs, r.buf.release())
	errs = append(errs, r.ch.release(dv))
	errs = append(errs, r.bc.release(dv))
	return errors.Join(errs...)
}

// releaseBlock frees the per-source buffers, once the copies in flight
// have landed, and forgets the hub rows they held (on the device
// goroutine).
func (r *Runner) releaseBlock() error {
	r.hubs.leave()
	r.buf.settleSlots()
	err := r.buf.freeBlock()
	r.hubs.rows = hubState{}
	return err
}

// ensureCapacity sizes the per-source buffers for k sources: with oneSlot
// (a stats block under plan.Config.OneSlotStats, or a block of the k
// nearest selected in one slot) only the first result slot's rows and
// selected cells, else every slot's rows and narrowed cells. Buffers that
// already hold k sources stay, unless they hold one slot and every slot
// is asked for, or more hub rows than a run sized since allows
// (SizeStatsRun: they would take memory its blocks were planned in).
func (r *Runner) ensureCapacity(k int, oneSlot bool) error {
	if k <= r.buf.capacity && (oneSlot || !r.buf.oneSlot) && len(r.hubs.rows.vertices) <= r.hubs.forBlock(r.buf.capacity) {
		return nil
	}
	if err := r.releaseBlock(); err != nil {
		return err
	}
	b := blockShape{k: k, oneSlot: oneSlot, l: layoutOf(r.req.Algorithm, r.distType, r.req.WithPredecessors)}
	b.auxBytes = int64(k) * int64(r.n) * int64(b.l.aux)
	if oneSlot && r.bk.scratchPossible() {
		b.scratch = min(k, r.bk.scratchSources())
		b.auxBytes = r.bk.scratchBytesFor(b.scratch)
	}
	b.gathered, b.selected = r.narrow.bytesPerSource()
	if oneSlot {
		b.gathered, b.selected = r.narrow.oneSlotCells()
		b.hubRows = r.hubs.forBlock(k)
	}
	if err := r.buf.allocBlock(b); err != nil {
		if isOutOfMemory(err) {
			err = outOfMemory(r.e.dev, k, r.bytesPerSource(oneSlot), err)
		}
		return errors.Join(err, r.releaseBlock())
	}
	if err := r.hubs.alloc(k, b.hubRows); err != nil {
		return errors.Join(err, r.releaseBlock())
	}
	return nil
}

// blockBufs is a runner's per-source device buffers for capacity
// sources, grown on demand (Runner.ensureCapacity), and its two result
// slots (overlap.go) with the copies that take their rows to the host
// (copier.go): the device, the graph's size and the distance type they
// are sized by, what they hold now, and what they learnt (fit) and
// counted (downloaded).
type blockBufs struct {
	dv       *device
	n        int
	distType graph.DistType
	// values, when set, is the type the blocks' values are converted to
	// on the device before each copy to the host (Runner.ConvertValues,
	// convert.cu): float32 over int32 distances, float64 over int64.
	values graph.DistType

	// capacity is the sources the buffers hold; oneSlot is set when only
	// the first result slot's rows were allocated (a stats block under
	// plan.Config.OneSlotStats: RunStats).
	capacity int
	oneSlot  bool
	sources  devBuf // int32 per source
	status   devBuf // int32 per source: 1 where a negative cycle showed
	aux      devBuf // predist, packed cells or BFS levels
	flags    devBuf // changed / pending / frontier bytes
	stats    devBuf // statsWords 8-byte words per source (RunStats)
	stage    pinned // host staging for small synchronous downloads
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
	// scratch is the sources of one slice of the batched kernel's scratch
	// working distances in aux (scratch.go); 0 for a working row per
	// source.
	scratch int
	// downloaded counts the result bytes copied to the host
	// (DownloadedBytes).
	downloaded atomic.Int64
}

// blockShape is what a block's buffers hold: k sources, with oneSlot
// only the first result slot's rows (and hubRows hub rows past them,
// hubs.go) and the k nearest's cells, else every slot's rows and narrowed
// cells (gathered and selected bytes per source); the algorithm's layout,
// and aux bytes of working rows, a scratch's of slices of scratch sources where scratch is
// above 0.
type blockShape struct {
	k                  int
	oneSlot            bool
	l                  layout
	auxBytes           int64
	scratch            int
	gathered, selected int64
	hubRows            int
}

// allocBlock allocates the buffers of a block of shape b into freed
// buffers (freeBlock) and records their capacity (on the device
// goroutine). It returns the first allocation's error, leaving what it
// allocated for freeBlock.
func (bb *blockBufs) allocBlock(b blockShape) error {
	k := b.k
	cells := int64(k) * int64(bb.n)
	type sized struct {
		buf  *devBuf
		size int64
	}
	bufs := []sized{
		{&bb.sources, 4 * int64(k)},
		{&bb.status, 4 * int64(k)},
		{&bb.aux, b.auxBytes},
		{&bb.flags, cells * int64(b.l.flags)},
		{&bb.stats, 8 * statsWords * int64(k)},
	}
	for i := range bb.slots {
		s := &bb.slots[i]
		switch {
		case !b.oneSlot:
			bufs = append(bufs, sized{&s.dist, cells * int64(b.l.dist)}, sized{&s.pred, cells * int64(b.l.pred)},
				sized{&s.gathered, b.gathered * int64(k)}, sized{&s.selected, b.selected * int64(k)})
		case i == 0:
			// The hub rows (hubs.go) follow the block's rows.
			rows := cells + int64(b.hubRows)*int64(bb.n)
			bufs = append(bufs, sized{&s.dist, rows * int64(b.l.dist)}, sized{&s.pred, cells * int64(b.l.pred)},
				sized{&s.gathered, b.gathered * int64(k)}, sized{&s.selected, b.selected * int64(k)})
		}
	}
	for _, b := range bufs {
		var err error
		if *b.buf, err = bb.dv.alloc(b.size); err != nil {
			return err
		}
	}
	bb.capacity, bb.oneSlot, bb.scratch = k, b.oneSlot, b.scratch
	return nil
}

// freeBlock frees the per-source buffers and the slots' rows, which no
// copy may read any more (settleSlots), and forgets their capacity (on
// the device goroutine).
func (bb *blockBufs) freeBlock() error {
	bufs := []*devBuf{&bb.sources, &bb.status, &bb.aux, &bb.flags, &bb.stats}
	for i := range bb.slots {
		s := &bb.slots[i]
		bufs = append(bufs, &s.dist, &s.pred, &s.valid, &s.partials, &s.gathered, &s.selected)
	}
	var errs []error
	for _, b := range bufs {
		errs = append(errs, bb.dv.free(b))
	}
	bb.dist, bb.pred = devBuf{}, devBuf{}
	bb.capacity, bb.oneSlot, bb.scratch = 0, false, 0
	return errors.Join(errs...)
}

// release frees the slots' stages and events and the staging buffer,
// once no copy reads them (on the device goroutine; the rows go with
// freeBlock).
func (bb *blockBufs) release() error {
	return errors.Join(bb.releaseSlots(), bb.dv.freePinned(&bb.stage))
}
