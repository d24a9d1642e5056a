package gen

// R-MAT generator (Chakrabarti, Zhan and Faloutsos, "R-MAT: A recursive model
// for graph mining", SDM 2004), with the Graph500 parameters and habits:
//
//   - 2^scale vertices and edgeFactor·2^scale arcs;
//   - each arc descends scale levels of the adjacency matrix, picking at each
//     level the quadrant (0,0), (0,1), (1,0), (1,1) with probabilities a, b,
//     c, d; there is no per-level noise;
//   - vertex ids are relabelled by a seeded bijection (idScrambler), so that
//     the hubs are spread over the id range rather than packed at id 0;
//   - self-loops and duplicate arcs are kept, as Graph500 keeps them (the
//     readers of pathctl drop self-loops and keep the lightest duplicate).
//
// Each level draws 32 random bits, so one 64-bit draw serves two levels;
// 32 bits resolve the probabilities to 2^-32, far below their own precision.

import (
	"fmt"
	"math"
)

// MaxScale is the largest R-MAT scale: 2^30 vertices, so that the ids fit
// the int32 dense ids of package graph.
const MaxScale = 30

// RMAT returns an R-MAT graph of 2^scale vertices and edgeFactor·2^scale
// arcs (twice that with WithUndirectedPairs), weighted 1..100 unless an
// option says otherwise. Time O(m·scale) spread over GOMAXPROCS goroutines,
// memory O(m + n). It fails for scale outside [0, MaxScale], a negative edge
// factor, initiator probabilities that are negative or sum above 1, or an
// empty weight range, or columns over WithMemoryLimit (ErrTooLarge).
func RMAT(scale, edgeFactor int, seed uint64, opts ...Option) (*EdgeList, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if scale < 0 || scale > MaxScale {
		return nil, fmt.Errorf("gen: rmat scale %d out of range [0, %d]", scale, MaxScale)
	}
	if edgeFactor < 0 {
		return nil, fmt.Errorf("gen: rmat edge factor %d is negative", edgeFactor)
	}
	a, b, c := cfg.a, cfg.b, cfg.c
	if a < 0 || b < 0 || c < 0 || math.IsNaN(a+b+c) || a+b+c > 1 {
		return nil, fmt.Errorf("gen: rmat probabilities a=%g b=%g c=%g must be non-negative with a+b+c <= 1", a, b, c)
	}
	n := int64(1) << scale
	if int64(edgeFactor) > math.MaxInt64/4/n {
		return nil, fmt.Errorf("gen: rmat with scale %d and edge factor %d has too many edges", scale, edgeFactor)
	}
	m := int64(edgeFactor) * n
	if err := cfg.checkMemory(fmt.Sprintf("rmat scale %d edge factor %d", scale, edgeFactor), m*cfg.arcsPerEdge()); err != nil {
		return nil, err
	}
	e, stride := cfg.newEdgeList(n, m)

	// Cumulative thresholds on 32-bit draws.
	const scale32 = 1 << 32
	tA := uint64(a * scale32)
	tAB := uint64((a + b) * scale32)
	tABC := uint64((a + b + c) * scale32)

	scrambler := newIDScrambler(scale, seed)
	forChunks(m, func(chunk, lo, hi int64) {
		r := newStream(seed, purposeEndpoints, uint64(chunk))
		for k := lo; k < hi; k++ {
			var u, v int64
			var bitsLeft int
			var draw uint64
			for range scale {
				if bitsLeft == 0 {
					draw, bitsLeft = r.next(), 2
				}
				x := draw & 0xffffffff
				draw >>= 32
				bitsLeft--
				// Branch-free quadrant choice: (t-x-1)>>63 is 1 exactly when x >= t,
				// as x < 2^32 and t <= 2^32. Quadrants in order (0,0), (0,1), (1,0), (1,1).
				geA, geAB, geABC := int64((tA-x-1)>>63), int64((tAB-x-1)>>63), int64((tABC-x-1)>>63)
				bu := geAB
				bv := geA - geAB + geABC
				u = u<<1 | bu
				v = v<<1 | bv
			}
			if cfg.permute {
				u, v = scrambler.apply(u), scrambler.apply(v)
			}
			e.Src[k*stride], e.Dst[k*stride] = u, v
			if stride == 2 {
				e.Src[k*stride+1], e.Dst[k*stride+1] = v, u
			}
		}
		cfg.fillWeights(e, seed, chunk, lo, hi, stride)
	})
	return e, nil
}

// idScrambler is a seeded bijection on [0, 2^scale): two rounds of an affine
// map modulo 2^scale (odd multiplier, so invertible) followed by an
// xor-shift of the high half onto the low half (invertible too). Like the
// scramble function of the Graph500 reference code, it relabels vertices
// without a table, so that relabelling costs no cache misses.
type idScrambler struct {
	mask, mul1, add1, mul2, add2 uint64
	shift                        uint
}

func newIDScrambler(scale int, seed uint64) idScrambler {
	r := newStream(seed, purposePermutation, 0)
	return idScrambler{
		mask: uint64(1)<<scale - 1,
		mul1: r.next() | 1, add1: r.next(),
		mul2: r.next() | 1, add2: r.next(),
		shift: uint(max(1, (scale+1)/2)),
	}
}

// apply returns the new label of vertex x.
func (s *idScrambler) apply(x int64) int64 {
	y := (uint64(x)*s.mul1 + s.add1) & s.mask
	y ^= y >> s.shift
	y = (y*s.mul2 + s.add2) & s.mask
	y ^= y >> s.shift
	return int64(y)
}
