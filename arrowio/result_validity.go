package arrowio

import (
	bits8 "math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// validity is the bitmap of a matrix block: in the block's own room
// (graph.Block.Valid), in a buffer of its own, or neither when no entry is
// null.
type validity struct {
	room  []byte
	buf   *memory.Buffer
	nulls int
}

// blockValidity is the bitmap of blk's distances d: the one the runner
// built (ValidSet), else one built here, in the block's room when it has
// one.
func blockValidity[D int32 | int64](blk *graph.Block, d []D, mem memory.Allocator) validity {
	size := int(bitutil.BytesForBits(int64(len(d))))
	switch {
	case blk.ValidSet && blk.Nulls == 0:
		return validity{}
	case blk.ValidSet && len(blk.Valid) >= size:
		return validity{room: blk.Valid[:size], nulls: blk.Nulls}
	case len(blk.Valid) >= size:
		if nulls := infBits(d, blk.Valid[:size]); nulls > 0 {
			return validity{room: blk.Valid[:size], nulls: nulls}
		}
		return validity{}
	}
	buf, nulls := infValidity(d, mem)
	return validity{buf: buf, nulls: nulls}
}

// recycler is the allocator of the buffers that wrap a block's memory:
// the last Release of the last of them calls Free, which hands the memory
// back through the block's Recycle. It allocates nothing itself.
type recycler struct {
	left    *atomic.Int32 // buffers not yet freed
	recycle func()
}

// newCount is a counter of buffers left, from n.
func newCount(n int32) *atomic.Int32 {
	c := &atomic.Int32{}
	c.Store(n)
	return c
}

func (r recycler) Allocate(size int) []byte { return memory.DefaultAllocator.Allocate(size) }
func (r recycler) Reallocate(size int, b []byte) []byte {
	return memory.DefaultAllocator.Reallocate(size, b)
}
func (r recycler) Free([]byte) {
	if r.left.Add(-1) == 0 {
		r.recycle()
	}
}

// infValidity returns a validity bitmap clearing the Infinity entries of d,
// and their count; no bitmap when none is Infinity.
func infValidity[D int32 | int64](d []D, mem memory.Allocator) (*memory.Buffer, int) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(d)))))
	nulls := infBits(d, buf.Bytes())
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

// infBits fills bits, (len(d)+7)/8 bytes, with the validity bitmap of d
// (Infinity entries cleared) and returns their count. A block holds up to
// gigabytes of distances, so the bitmap is built a byte (8 entries) at a
// time by one goroutine per core over ranges of whole bitmap words.
func infBits[D int32 | int64](d []D, bits []byte) int {
	const perByte = 8
	const chunk = 1 << 20 // entries per piece of work, a multiple of 8
	pieces := (len(d) + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), pieces)
	counts := make([]int, max(workers, 1))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inf := graph.Infinity[D]()
			nulls := 0
			for {
				p := int(next.Add(1) - 1)
				if p >= pieces {
					break
				}
				lo, hi := p*chunk, min((p+1)*chunk, len(d))
				i := lo
				for ; i+perByte <= hi; i += perByte {
					// Eight comparisons without branches: most bytes
					// mix reachable and unreachable entries unpredictably.
					e := d[i : i+perByte : i+perByte]
					b := set(e[0] != inf) | set(e[1] != inf)<<1 | set(e[2] != inf)<<2 | set(e[3] != inf)<<3 |
						set(e[4] != inf)<<4 | set(e[5] != inf)<<5 | set(e[6] != inf)<<6 | set(e[7] != inf)<<7
					bits[i/perByte] = b
					nulls += perByte - bits8.OnesCount8(b)
				}
				if i < hi {
					var b byte
					for j, x := range d[i:hi] {
						b |= set(x != inf) << j
					}
					bits[i/perByte] = b
					nulls += hi - i - bits8.OnesCount8(b)
				}
			}
			counts[w] = nulls
		}()
	}
	wg.Wait()
	nulls := 0
	for _, c := range counts {
		nulls += c
	}
	return nulls
}

// set is 1 for true and 0 for false, without a branch.
func set(b bool) byte {
	if b {
		return 1
	}
	return 0
}
