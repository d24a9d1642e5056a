package pipeline

import (
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// blockPool keeps the distance arrays of matrix blocks whose records have
// been released (graph.Block.Recycle), so that later blocks reuse their
// memory. Fresh memory costs a page fault on the first write of every
// page, and for the GPU's copies into the blocks that was most of their
// time (H100, R-MAT 16 matrix: 1.29 s of moves for 8.4 GiB). Records a
// consumer keeps are never recycled; their blocks simply do not come back.
type blockPool struct {
	mu   sync.Mutex
	free []any // []int32, []int64, []float32 or []float64, at full length
}

// blockPoolMax bounds the arrays the pool keeps: the blocks in flight.
const blockPoolMax = 4

// block returns a block for sources over n vertices whose Dist comes from
// the pool where an array of type t is large enough (its contents are
// stale: the runner must write every element), and whose Recycle gives the
// array back.
func (p *blockPool) block(sources []graph.VertexID, n int, t graph.DistType, withPred bool) *graph.Block {
	size := len(sources) * n
	var full, dist any
	p.mu.Lock()
	for i, f := range p.free {
		if d, ok := reslice(f, t, size); ok {
			full, dist = f, d
			p.free = append(p.free[:i], p.free[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	var b *graph.Block
	if dist == nil {
		b = graph.NewBlock(sources, n, t, withPred)
		full = b.Dist
	} else {
		b = &graph.Block{Sources: sources, NumVertices: n, Type: t, Dist: dist}
		if withPred {
			b.Pred = make([]graph.VertexID, size)
		}
	}
	var once sync.Once
	b.Recycle = func() { once.Do(func() { p.put(full) }) }
	return b
}

func (p *blockPool) put(d any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < blockPoolMax {
		p.free = append(p.free, d)
	}
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
