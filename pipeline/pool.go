package pipeline

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/graph"
)

// blockPool keeps the distance arrays (and validity bitmaps) of matrix
// blocks whose records have been released (graph.Block.Recycle), so that
// later blocks reuse their memory. Fresh memory costs a page fault on the
// first write of every page, and for the GPU's copies into the blocks that
// was most of their time (H100, R-MAT 16 matrix: 1.29 s of moves for 8.4
// GiB). On the CPU it also keeps the blocks written from lingering as
// garbage (R-MAT 14 matrix on the 2-core development machine: the
// binary's peak RSS 207 -> 135 MB, 4.74-4.83 -> 4.57-4.66 s). Records a
// consumer keeps are never recycled; their blocks simply do not come back.
//
// With a graph.HostPinner (the GPU runner) the pool page-locks the arrays it
// makes, up to blockPoolMax of them, so that the device copies straight
// into them; prefill makes them while the device computes, and close
// unlocks them.
type blockPool struct {
	mu   sync.Mutex
	free []pooled
	// pin, when set, page-locks the arrays the pool makes; pinned are the
	// arrays it locked, unlocked by close or when the pool drops them.
	pin    graph.HostPinner
	pinned [][]byte
	closed bool
	// keep, when above blockPoolMax, bounds the arrays the pool keeps
	// (not those it pins): the blocks in flight of several devices.
	keep int
	// filling is the prefill in progress, which block waits for.
	filling sync.WaitGroup
}

// pooled is one block's memory at full length: its distances ([]int32,
// []int64, []float32 or []float64) and, for integer distances, the room
// for their validity bitmap.
type pooled struct {
	dist  any
	valid []byte
}

// blockPoolMax bounds the arrays the pool keeps, and those it pins: the
// blocks in flight.
const blockPoolMax = 4

// block returns a block for sources over n vertices whose Dist (and
// Valid) come from the pool where an array of type t is large enough (its
// contents are stale: the runner must write every element), and whose
// Recycle gives them back.
func (p *blockPool) block(sources []graph.VertexID, n int, t graph.DistType, withPred bool) *graph.Block {
	p.filling.Wait()
	size := len(sources) * n
	var full pooled
	var dist any
	p.mu.Lock()
	for i, f := range p.free {
		if d, ok := reslice(f.dist, t, size); ok {
			full, dist = f, d
			p.free = append(p.free[:i], p.free[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if dist == nil {
		full = p.fresh(t, size)
		dist = full.dist
	}
	b := &graph.Block{Sources: sources, NumVertices: n, Type: t, Dist: dist}
	if v := (size + 7) / 8; len(full.valid) >= v {
		b.Valid = full.valid[:v]
	}
	if withPred {
		b.Pred = make([]graph.VertexID, size)
	}
	var once sync.Once
	b.Recycle = func() { once.Do(func() { p.put(full) }) }
	return b
}

// fresh makes the memory of a block of size entries of type t, pinned
// while fewer than blockPoolMax arrays are (a failed pin leaves it
// unpinned: its copies then go through the runner's stage).
func (p *blockPool) fresh(t graph.DistType, size int) pooled {
	f := pooled{dist: newDist(t, size)}
	if t == graph.DistInt32 || t == graph.DistInt64 {
		f.valid = make([]byte, (size+7)/8)
	}
	if p.pin == nil {
		return f
	}
	p.mu.Lock()
	room := !p.closed && len(p.pinned) < blockPoolMax
	p.mu.Unlock()
	if b := distBytes(f.dist); room && len(b) > 0 && p.pin.PinHost(b) == nil {
		p.mu.Lock()
		p.pinned = append(p.pinned, b)
		p.mu.Unlock()
	}
	return f
}

// prefill makes count blocks' memory of size entries of type t in the
// background (pinning it is slow: it touches every page), so that it
// overlaps the device's kernels; block waits for it.
func (p *blockPool) prefill(count, size int, t graph.DistType) {
	count = min(count, blockPoolMax)
	p.filling.Add(1)
	go func() {
		defer p.filling.Done()
		for range count {
			p.put(p.fresh(t, size))
		}
	}()
}

func (p *blockPool) put(f pooled) {
	p.mu.Lock()
	if !p.closed && len(p.free) < max(blockPoolMax, p.keep) {
		p.free = append(p.free, f)
		p.mu.Unlock()
		return
	}
	var unpin []byte
	if b := distBytes(f.dist); len(b) > 0 {
		for i, q := range p.pinned {
			if &q[0] == &b[0] {
				unpin = q
				p.pinned = append(p.pinned[:i], p.pinned[i+1:]...)
				break
			}
		}
	}
	p.mu.Unlock()
	if unpin != nil {
		_ = p.pin.UnpinHost(unpin) // failing leaves it locked until the engine closes
	}
}

// close drops the pooled memory and unlocks every array the pool pinned;
// blocks still alive in records stay valid, and their Recycle then drops
// them.
func (p *blockPool) close() {
	p.filling.Wait()
	p.mu.Lock()
	p.closed = true
	p.free = nil
	pinned := p.pinned
	p.pinned = nil
	p.mu.Unlock()
	for _, b := range pinned {
		_ = p.pin.UnpinHost(b)
	}
}

// newDist allocates size distances of type t.
func newDist(t graph.DistType, size int) any {
	switch t {
	case graph.DistInt64:
		return make([]int64, size)
	case graph.DistFloat32:
		return make([]float32, size)
	case graph.DistFloat64:
		return make([]float64, size)
	}
	return make([]int32, size)
}

// distBytes is the memory of a distance slice.
func distBytes(d any) []byte {
	switch s := d.(type) {
	case []int32:
		return arrow.GetBytes(s)
	case []int64:
		return arrow.GetBytes(s)
	case []float32:
		return arrow.GetBytes(s)
	case []float64:
		return arrow.GetBytes(s)
	}
	return nil
}

// reslice returns the first size elements of d when d is the slice type of
// t and holds that many.
func reslice(d any, t graph.DistType, size int) (any, bool) {
	switch s := d.(type) {
	case []int32:
		return s[:min(size, len(s))], t == graph.DistInt32 && len(s) >= size
	case []int64:
		return s[:min(size, len(s))], t == graph.DistInt64 && len(s) >= size
	case []float32:
		return s[:min(size, len(s))], t == graph.DistFloat32 && len(s) >= size
	case []float64:
		return s[:min(size, len(s))], t == graph.DistFloat64 && len(s) >= size
	}
	return nil, false
}
