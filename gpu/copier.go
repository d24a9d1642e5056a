package gpu

// The copier and the copies it lands (overlap.go): the copier goroutine
// that waits for each queued device-to-host copy and moves the stage into
// the caller's block, the jobs it takes, and the queueing of a slot's rows
// (with the validity kernel's bitmap) on the copy stream.

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

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

// copier is a device's copier goroutine: jobs feeds it the copies queued
// on the copy stream, in queue order (nil while it is not running), and
// done closes when it has stopped.
type copier struct {
	jobs chan *copyJob
	done chan struct{}
}

// start starts the copier goroutine of dv (on the device goroutine, once
// the context exists).
func (c *copier) start(dv *device) {
	c.jobs = make(chan *copyJob, copyQueue)
	c.done = make(chan struct{})
	go c.loop(dv, c.jobs, c.done)
}

// stop lets the copier finish the jobs queued and waits for it (on the
// device goroutine, the only sender).
func (c *copier) stop() {
	if c.jobs == nil {
		return
	}
	close(c.jobs)
	<-c.done
	c.jobs = nil
}

// loop is the copier goroutine of dv. It never unlocks its OS thread, so
// the thread, with the context current, ends with it.
func (c *copier) loop(dv *device, jobs <-chan *copyJob, done chan<- struct{}) {
	defer close(done)
	runtime.LockOSThread()
	ctxErr := dv.d.cuCtxSetCurrent(dv.ctx).Err("cuCtxSetCurrent (copier)")
	for j := range jobs {
		if ctxErr != nil {
			j.err = ctxErr
		} else {
			j.err = j.land(dv)
		}
		close(j.done)
	}
	if ctxErr == nil {
		dv.d.cuCtxSetCurrent(0)
	}
}

// land waits for j's copy on dv's copy stream and moves the stage into
// the caller's block (on the copier goroutine).
func (j *copyJob) land(dv *device) error {
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
func (bb *blockBufs) validOut(out *graph.Block) []byte {
	if bb.blockType() != graph.DistInt32 && bb.blockType() != graph.DistInt64 {
		return nil
	}
	size := (len(out.Sources)*bb.n + 7) / 8
	if len(out.Valid) < size {
		return nil
	}
	return out.Valid[:size]
}

// blockType is the type of the values of the blocks bb fills: the
// distances', or the one they are converted to (values).
func (bb *blockBufs) blockType() graph.DistType {
	if bb.values != 0 {
		return bb.values
	}
	return bb.distType
}

// convertKernel is the kernel of convert.cu that rewrites distances of
// type from as values of type to in place, "" where there is none: int32
// as float32 and int64 as float64, exactly, and float64 rounded to float32
// (a float32 result computed in float64, Request.RoundFloat32), whose
// values then take half the rows' bytes.
func convertKernel(from, to graph.DistType) string {
	switch {
	case from == graph.DistInt32 && to == graph.DistFloat32:
		return "convert_i32_f32"
	case from == graph.DistInt64 && to == graph.DistFloat64:
		return "convert_i64_f64"
	case from == graph.DistFloat64 && to == graph.DistFloat32:
		return "narrow_f64_f32"
	}
	return ""
}

// convertGrid bounds the thread blocks of the conversion kernel, whose
// threads stride over the rows.
const convertGrid = 8192

// narrowHead is the entries convert.cu's narrow_f64_f32_head narrows in
// its one thread block (narrowPerThread per thread).
const narrowHead = 8 * threadsPerBlock

// queueConvert queues on stream 0 the kernels that rewrite the count
// distances at from as bb.values, in place, before their copy. A
// narrowing (float64 to float32) packs value i into bytes [4i, 4i+4),
// inside entry i/2: the head launch narrows the first narrowHead entries,
// then each launch narrows as many entries again as are narrowed, whose
// values land only in entries already read (convert.cu).
func (bb *blockBufs) queueConvert(from uint64, count int) error {
	name := convertKernel(bb.distType, bb.values)
	grid := func(cells int64) int { return int(min((cells+threadsPerBlock-1)/threadsPerBlock, convertGrid)) }
	if bb.values.Size() == bb.distType.Size() {
		return bb.dv.launchAsync(name, grid(int64(count)), from, uint64(count))
	}
	if err := bb.dv.launchAsync(name+"_head", 1, from, uint64(count)); err != nil {
		return err
	}
	for lo := int64(narrowHead); lo < int64(count); lo *= 2 {
		hi := min(2*lo, int64(count))
		if err := bb.dv.launchAsync(name, grid(hi-lo), from, uint64(lo), uint64(hi)); err != nil {
			return err
		}
	}
	return nil
}

// validityGrid bounds the thread blocks of the validity kernel: each adds
// its null count into its own word of partials.
const validityGrid = 1024

// queueValidity queues on stream 0 the kernel that builds the bitmap of
// the count distances at from into s.valid, with its null counts in
// s.partials, and returns its grid. When the device has no memory left
// for the bitmap it returns 0: the host builds it instead.
func (bb *blockBufs) queueValidity(s *resultSlot, from uint64, count int) (int, error) {
	dv := bb.dv
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
	name := "validity_" + typeSuffix(bb.distType)
	if err := dv.launchAsync(name, grid, from, uint64(count), s.valid.ptr, s.partials.ptr); err != nil {
		return 0, err
	}
	return grid, nil
}

// queueCopy queues, on the copy stream and after the kernels queued so far
// on stream 0, the copy of s's rows into out (on the device goroutine). s
// must be idle.
func (bb *blockBufs) queueCopy(s *resultSlot, out copyOut) (*copyJob, error) {
	return bb.queueCopyFrom(s, s.dist.ptr, s.pred.ptr, out)
}

// queueCopyFrom is queueCopy from the device rows at fromDist and fromPred
// (another slot's rows, for a Resident block). Distances and predecessors
// whose destinations lie in memory PinHost pinned go straight there;
// otherwise they go through s's stage and the copier moves them on. Where
// the values are converted (bb.values), the conversion kernel rewrites
// the rows in place first. With out.valid, the validity kernel runs first and its bitmap and null counts
// travel through the stage.
func (bb *blockBufs) queueCopyFrom(s *resultSlot, fromDist, fromPred uint64, out copyOut) (*copyJob, error) {
	dv := bb.dv
	d := dv.d
	if dv.copier.jobs == nil {
		return nil, errClosed
	}
	cells := len(out.dist) / bb.blockType().Size()
	if bb.values != 0 {
		if err := bb.queueConvert(fromDist, cells); err != nil {
			return nil, err
		}
	}
	grid := 0
	if out.valid != nil {
		var err error
		if grid, err = bb.queueValidity(s, fromDist, cells); err != nil {
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
	// registered range they cross (hostPins.pieces).
	distPieces := dv.pins.pieces(out.dist)
	var predPieces [][]byte
	if len(out.pred) > 0 {
		predPieces = dv.pins.pieces(out.pred)
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
	bb.copySeq++
	copied := 8 * grid
	for _, p := range parts {
		copied += len(p.to)
	}
	bb.downloaded.Add(int64(copied))
	j := &copyJob{
		seq:   bb.copySeq,
		stage: unsafe.Slice((*byte)(s.stage.p), size),
		moves: moves,
		start: s.copyStart, stop: s.copied,
		done: make(chan struct{}),
		grid: grid, partials: partials, block: out.block,
	}
	s.busy = j
	dv.copier.jobs <- j
	return j, nil
}
