package pipeline

// Matrix rows computed at their place in the output.
//
// A matrix written into memory (a memfd or a file on tmpfs) is one record
// batch whose values the writer maps before the run
// (arrowio.ResultWriter.MatrixValues). With a runner whose device copies
// land in page-locked host memory (graph.HostPinner: the GPU runner), the
// blocks' distances need not be made anywhere else and copied into the
// file afterwards: the output's own pages are registered with the driver
// in chunks, and each block's Dist is the slice of them where its rows
// belong, so that the device copies every row straight into its final
// place and the writer copies nothing (R-MAT 16: 8.4 GiB that the writer
// otherwise populated and copied in about 3 s).
//
// Registration pins, and so populates, every page it covers; it runs
// ahead of the blocks, in chunks of inPlaceChunk bytes, on
// inPlaceRegistrars goroutines that start with the run, so that it
// overlaps the device's kernels (the writer populates the same pages ahead
// in parallel, arrowio's prefill, which leaves registration to pin pages
// already there). A block waits only for the chunks its rows lie in. Once
// every row of a chunk has been emitted, the chunk is unregistered in the
// background; the rest are unregistered at the end of the run, before Run
// returns and the writer unmaps the file. A chunk the driver refuses stops
// the registrations: that block and every later one take memory of their
// own (the block pool, as without an output in memory), which the writer
// copies; -v says so.

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// inPlaceChunk is the bytes of output registered with the driver at a
// time: a multiple of the page size, small enough that the first block
// waits little for its rows' pages, large enough that the driver's calls
// stay few (8.4 GiB in 68 calls).
const inPlaceChunk = 128 << 20

// inPlaceRegistrars is the goroutines registering chunks side by side: a
// registration that finds its pages missing populates them on one core.
const inPlaceRegistrars = 4

// inPlaceRows hands out blocks whose distances are the output's own rows,
// registered with the device ahead of them.
type inPlaceRows struct {
	values   []byte // every row, row-major, in source order
	rowBytes int
	chunk    int // bytes registered at a time (inPlaceChunk)
	pin      graph.HostPinner
	log      io.Writer
	chunks   []pinChunk

	next      atomic.Int64 // the next chunk to register
	stop      atomic.Bool  // no further registration
	failed    atomic.Bool  // a chunk was refused: no further block in place
	registrar sync.WaitGroup
	unpinning sync.WaitGroup
	pinTime   atomic.Int64 // nanoseconds spent in PinHost, over every registrar
	began     time.Time
	ended     atomic.Int64 // chunks whose registration has ended
	lastEnd   atomic.Int64 // nanoseconds from began to the last registration's end
	waited    atomic.Int64 // nanoseconds blocks waited for their chunks

	mu       sync.Mutex
	placed   int // blocks handed out in place
	fellBack int // blocks refused a place
	failure  error
}

// pinChunk is a range of the output's values registered as one.
type pinChunk struct {
	lo, hi int
	// done closes once the chunk's registration has ended; pinned says
	// whether it succeeded.
	done   chan struct{}
	pinned bool
	// left is the bytes of the chunk whose rows have not been emitted
	// (guarded by inPlaceRows.mu); at 0 the chunk is unregistered.
	left     int
	unpinned bool
}

// newInPlaceRows starts registering values, the output's rows of rowBytes
// bytes each, with pin, chunk bytes at a time (a multiple of the page
// size where values starts a page).
func newInPlaceRows(values []byte, rowBytes, chunk int, pin graph.HostPinner, log io.Writer) *inPlaceRows {
	r := &inPlaceRows{values: values, rowBytes: rowBytes, chunk: chunk, pin: pin, log: log, began: time.Now()}
	for lo := 0; lo < len(values); lo += chunk {
		hi := min(len(values), lo+chunk)
		r.chunks = append(r.chunks, pinChunk{lo: lo, hi: hi, done: make(chan struct{}), left: hi - lo})
	}
	for range min(inPlaceRegistrars, len(r.chunks)) {
		r.registrar.Add(1)
		go r.register()
	}
	return r
}

// register registers the chunks in order, one at a time, until none is
// left, the run ends or the driver refuses one.
func (r *inPlaceRows) register() {
	defer r.registrar.Done()
	for {
		i := int(r.next.Add(1) - 1)
		if i >= len(r.chunks) {
			return
		}
		c := &r.chunks[i]
		if !r.stop.Load() && !r.failed.Load() {
			t0 := time.Now()
			err := r.pin.PinHost(r.values[c.lo:c.hi])
			r.pinTime.Add(int64(time.Since(t0)))
			if err != nil {
				r.mu.Lock()
				if r.failure == nil {
					r.failure = err
				}
				r.mu.Unlock()
				r.failed.Store(true)
			}
			c.pinned = err == nil
		}
		if r.ended.Add(1) == int64(len(r.chunks)) {
			r.lastEnd.Store(int64(time.Since(r.began)))
		}
		close(c.done)
	}
}

// block returns the block of the sources of b over n vertices whose
// distances are the output's rows b.Start to b.End, once the chunks they
// lie in are registered; nil where they cannot be (a chunk refused: the
// caller makes the block elsewhere). Its Recycle counts the rows as
// emitted.
func (r *inPlaceRows) block(b SourceBlock, sources []graph.VertexID, n int, t graph.DistType) *graph.Block {
	lo, hi := b.Start*r.rowBytes, b.End*r.rowBytes
	ok := !r.failed.Load() && hi <= len(r.values) && lo < hi
	t0 := time.Now()
	for i := lo / r.chunk; ok && i < len(r.chunks) && r.chunks[i].lo < hi; i++ {
		<-r.chunks[i].done
		ok = r.chunks[i].pinned
	}
	r.waited.Add(int64(time.Since(t0)))
	r.mu.Lock()
	if !ok {
		r.fellBack++
		r.mu.Unlock()
		return nil
	}
	r.placed++
	r.mu.Unlock()
	size := (b.End - b.Start) * n
	blk := &graph.Block{Sources: sources, NumVertices: n, Type: t, Dist: distView(r.values[lo:hi], t, size)}
	if t == graph.DistInt32 || t == graph.DistInt64 {
		blk.Valid = make([]byte, (size+7)/8) // the device builds the bitmap there
	}
	var once sync.Once
	blk.Recycle = func() { once.Do(func() { r.emitted(lo, hi) }) }
	return blk
}

// emitted counts the bytes [lo, hi) of the values as emitted, and
// unregisters, in the background, every chunk that has none left.
func (r *inPlaceRows) emitted(lo, hi int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := lo / r.chunk; i < len(r.chunks) && r.chunks[i].lo < hi; i++ {
		c := &r.chunks[i]
		c.left -= min(hi, c.hi) - max(lo, c.lo)
		if c.left == 0 {
			r.unpinLocked(c)
		}
	}
}

// unpinLocked unregisters c in the background where it was registered
// and still is (r.mu held).
func (r *inPlaceRows) unpinLocked(c *pinChunk) {
	select {
	case <-c.done:
	default:
		return // still registering: close unregisters it
	}
	if !c.pinned || c.unpinned {
		return
	}
	c.unpinned = true
	r.unpinning.Add(1)
	go func() {
		defer r.unpinning.Done()
		_ = r.pin.UnpinHost(r.values[c.lo:c.hi]) // a failure leaves it to the engine's Close
	}()
}

// close stops the registrations and unregisters every chunk still
// registered, once no block's copy writes into them any more (after
// every block started has landed); it says on the log how the blocks
// went.
func (r *inPlaceRows) close() {
	r.stop.Store(true)
	r.registrar.Wait()
	r.mu.Lock()
	for i := range r.chunks {
		r.unpinLocked(&r.chunks[i])
	}
	r.mu.Unlock()
	r.unpinning.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.log, "pathctl: in place: %d blocks copied by the device straight into the output's rows, %d through memory of their own; registering %d chunks of up to %d MiB took %s on %d goroutines, the last done %s after the first began; the blocks waited %s for them\n",
		r.placed, r.fellBack, len(r.chunks), r.chunk>>20, time.Duration(r.pinTime.Load()).Round(time.Millisecond), min(inPlaceRegistrars, len(r.chunks)),
		time.Duration(r.lastEnd.Load()).Round(time.Millisecond), time.Duration(r.waited.Load()).Round(time.Millisecond))
	if r.failure != nil {
		fmt.Fprintf(r.log, "pathctl: in place: the output's rows could not be page-locked (%v); the writer copied the rows of the blocks after\n", r.failure)
	}
}

// distView is b, size distances of type t, as the slice type of t.
func distView(b []byte, t graph.DistType, size int) any {
	p := unsafe.Pointer(unsafe.SliceData(b))
	switch t {
	case graph.DistInt64:
		return unsafe.Slice((*int64)(p), size)
	case graph.DistFloat32:
		return unsafe.Slice((*float32)(p), size)
	case graph.DistFloat64:
		return unsafe.Slice((*float64)(p), size)
	}
	return unsafe.Slice((*int32)(p), size)
}
