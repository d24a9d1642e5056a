package gen

// Road generator: a rows×cols grid of intersections, vertex (r, c) with id
// r·cols + c as in Grid, whose streets have a hierarchy of speeds and some
// one-way streets, so that benchmarks have road-like graphs without
// downloads. Row r and column c are
//
//   - highways (RoadHighwayKmh) where the index is a multiple of
//     RoadHighwayEvery,
//   - arterials (RoadArterialKmh) at the other multiples of
//     RoadArterialEvery,
//   - local streets (RoadLocalKmh) elsewhere; the last row and column are
//     local but always two-way.
//
// Every block is RoadBlockMetres long, perturbed by a factor drawn from
// [0.75, 1.25), and its weight is the travel time, length / speed, in
// tenths of a second (at least 1) or, with WithFloatWeights, in seconds
// as a float64 (the range is ignored). Highways and arterials are two-way.
// A local street is one-way by segments: the blocks of one row (column)
// between two consecutive arterial columns (rows), a fraction oneway of
// such segments chosen by the seed, each in a direction the seed chooses.
// Every segment ends at an arterial, a highway or the two-way last line,
// and those form a two-way grid, so the graph stays strongly connected
// whatever the fraction.
//
// Arc order: the blocks as Grid orders its edges (horizontal row by row,
// then vertical); a two-way block gives two arcs (low id → high id, then
// back), a one-way block one. Each block's draws depend only on the seed
// and its index, so the output is the same whatever the thread count.

import (
	"fmt"
	"math"
)

// The road hierarchy: speeds in km/h, the spacing of the lines of each
// class, and the nominal length of a block.
const (
	RoadLocalKmh      = 30.0
	RoadArterialKmh   = 50.0
	RoadHighwayKmh    = 90.0
	RoadArterialEvery = 8
	RoadHighwayEvery  = 32
	RoadBlockMetres   = 100.0
)

// Stream purposes of the road generator (beside those of rng.go).
const (
	purposeRoadLength uint64 = 101 + iota
	purposeRoadOneWay
)

// roadClass is the speed class of row or column i, in km/h; the last line
// (i == last) is local.
func roadClass(i int64) float64 {
	switch {
	case i%RoadHighwayEvery == 0:
		return RoadHighwayKmh
	case i%RoadArterialEvery == 0:
		return RoadArterialKmh
	}
	return RoadLocalKmh
}

// Road returns the rows×cols road-like grid described above, a fraction
// oneway (0 to 1) of its local street segments one-way. Unweighted drops
// the weights; WithRMATParams, WithVertexPermutation and
// WithUndirectedPairs do not apply. Time and memory O(rows·cols). It fails
// for negative sizes, a fraction outside [0, 1], more vertices than int32
// ids hold, or arcs over WithMemoryLimit.
func Road(rows, cols int, oneway float64, seed uint64, opts ...Option) (*EdgeList, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("gen: road size %d×%d is negative", rows, cols)
	}
	if !(oneway >= 0 && oneway <= 1) {
		return nil, fmt.Errorf("gen: one-way fraction %v is not between 0 and 1", oneway)
	}
	if rows != 0 && int64(cols) > math.MaxInt32/int64(rows) {
		return nil, fmt.Errorf("gen: road %d×%d has more vertices than int32 ids hold", rows, cols)
	}
	R, C := int64(rows), int64(cols)
	horizontal := R * max(C-1, 0)
	edges := horizontal + max(R-1, 0)*C
	if err := cfg.checkMemory(fmt.Sprintf("road %d×%d", rows, cols), 2*edges); err != nil {
		return nil, err
	}
	// block describes block k: its ends, its speed class, and its
	// direction (0 two-way, 1 u → v only, 2 v → u only).
	block := func(k int64) (u, v int64, kmh float64, dir uint8) {
		var line, along, last int64 // the block's row (column), its place along it, the last line
		if k < horizontal {
			r, c := k/(C-1), k%(C-1)
			u, v = r*C+c, r*C+c+1
			line, along, last = r, c, R-1
		} else {
			u = k - horizontal
			v = u + C
			line, along, last = u%C, u/C, C-1
		}
		kmh = roadClass(line)
		if kmh != RoadLocalKmh || line == last || oneway == 0 {
			return u, v, kmh, 0
		}
		// The segment: this line's blocks between two arterial crossings;
		// horizontal and vertical segments are told apart by the low bit.
		segment := (line*(max(R, C)/RoadArterialEvery+1)+along/RoadArterialEvery)<<1 | btou(k >= horizontal)
		r := newStream(seed, purposeRoadOneWay, uint64(segment))
		if r.float() < oneway {
			return u, v, kmh, 1 + uint8(r.next()&1)
		}
		return u, v, kmh, 0
	}
	// Pass 1: the arcs of each chunk, then where each chunk starts.
	chunks := (edges + chunkSize - 1) / chunkSize
	start := make([]int64, chunks+1)
	forChunks(edges, func(chunk, lo, hi int64) {
		var n int64
		for k := lo; k < hi; k++ {
			_, _, _, dir := block(k)
			n += 2 - int64(min(dir, 1))
		}
		start[chunk+1] = n
	})
	for i := range chunks {
		start[i+1] += start[i]
	}
	arcs := start[chunks]
	e := &EdgeList{Src: make([]int64, arcs), Dst: make([]int64, arcs), NumVertices: R * C}
	cfg.allocWeights(e, arcs)
	// Pass 2: the arcs and their travel times.
	forChunks(edges, func(chunk, lo, hi int64) {
		at := start[chunk]
		for k := lo; k < hi; k++ {
			u, v, kmh, dir := block(k)
			r := newStream(seed, purposeRoadLength, uint64(k))
			seconds := RoadBlockMetres * (0.75 + 0.5*r.float()) / (kmh / 3.6)
			put := func(a, b int64) {
				e.Src[at], e.Dst[at] = a, b
				switch cfg.weights {
				case intWeights:
					e.Weights[at] = max(1, int64(math.Round(seconds*10)))
				case floatWeights:
					e.FloatWeights[at] = seconds
				}
				at++
			}
			if dir != 2 {
				put(u, v)
			}
			if dir != 1 {
				put(v, u)
			}
		}
	})
	return e, nil
}

// btou is 1 for true, 0 for false.
func btou(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
