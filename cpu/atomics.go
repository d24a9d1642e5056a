package cpu

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// The atomic operations of the seeds' table (CAS, MIN) on distances of any
// type: a distance is moved as its 32- or 64-bit pattern, so floats compare
// numerically but swap by bits.

func loadDist[D graph.Number](p *D) D {
	if unsafe.Sizeof(*p) == 4 {
		bits := atomic.LoadUint32((*uint32)(unsafe.Pointer(p)))
		return *(*D)(unsafe.Pointer(&bits))
	}
	bits := atomic.LoadUint64((*uint64)(unsafe.Pointer(p)))
	return *(*D)(unsafe.Pointer(&bits))
}

func casDist[D graph.Number](p *D, old, v D) bool {
	if unsafe.Sizeof(*p) == 4 {
		return atomic.CompareAndSwapUint32((*uint32)(unsafe.Pointer(p)),
			*(*uint32)(unsafe.Pointer(&old)), *(*uint32)(unsafe.Pointer(&v)))
	}
	return atomic.CompareAndSwapUint64((*uint64)(unsafe.Pointer(p)),
		*(*uint64)(unsafe.Pointer(&old)), *(*uint64)(unsafe.Pointer(&v)))
}

// atomicMin lowers *p to v when v is smaller (the seeds' atomicMin) and
// reports whether it did. It reads first and swaps only to lower, so a
// relaxation that loses costs one load.
func atomicMin[D graph.Number](p *D, v D) bool {
	for {
		old := loadDist(p)
		if v >= old {
			return false
		}
		if casDist(p, old, v) {
			return true
		}
	}
}

// claim sets a flag from 0 to 1 and reports whether this caller did, so
// that a vertex enters a list once per round however many relax it.
func claim(flag *uint32) bool {
	return atomic.LoadUint32(flag) == 0 && atomic.CompareAndSwapUint32(flag, 0, 1)
}

// addPositive returns d + w for w >= 0, saturating at inf (integers only
// overflow past paths longer than any simple path; floats never do).
func addPositive[D graph.Number](d, w, inf D) D {
	s := d + w
	if s < d {
		return inf
	}
	return s
}

// addSigned returns d + w for a w of either sign, saturating at inf above
// and at the type's smallest value below (reached only around a negative
// cycle, which is then reported).
func addSigned[D graph.Number](d, w, inf, lowest D) D {
	s := d + w
	if w >= 0 {
		if s < d {
			return inf
		}
	} else if s > d {
		return lowest
	}
	return s
}

func lowestOf[D graph.Number]() D {
	var z D
	switch any(z).(type) {
	case int32:
		x := int32(-1 << 31)
		return D(x)
	case int64:
		x := int64(-1 << 63)
		return D(x)
	}
	return -graph.Infinity[D]()
}

// forChunks runs body over [0, items) split into par contiguous chunks, one
// goroutine each (the caller runs the first), and waits for all of them.
// helper is the chunk's index, for per-helper output lists.
func forChunks(par, items int, body func(helper, lo, hi int)) {
	if par <= 1 || items < 2*par {
		body(0, 0, items)
		return
	}
	var wg sync.WaitGroup
	step := (items + par - 1) / par
	for h := 1; h < par; h++ {
		lo, hi := h*step, min((h+1)*step, items)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(h, lo, hi)
		}()
	}
	body(0, 0, min(step, items))
	wg.Wait()
}

// forParts runs body(h) for every h in [0, par), one goroutine each (the
// caller runs h = 0), and waits.
func forParts(par int, body func(h int)) {
	if par <= 1 {
		body(0)
		return
	}
	var wg sync.WaitGroup
	for h := 1; h < par; h++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(h)
		}()
	}
	body(0)
	wg.Wait()
}
