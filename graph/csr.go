package graph

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Edges is an edge list over dense vertex ids, as a reader produces it.
// Exactly one weight slice is set, or none for an unweighted graph.
type Edges struct {
	NumVertices int
	Src, Dst    []VertexID
	// Integer weights of any input integer type, widened.
	IntWeights []int64
	// Float weights; Float32Weights keeps float32 inputs in their own type.
	Float32Weights []float32
	Float64Weights []float64
}

// Len is the number of edges (rows).
func (e *Edges) Len() int { return len(e.Src) }

// Weighted reports whether the edges carry a weight column.
func (e *Edges) Weighted() bool {
	return e.IntWeights != nil || e.Float32Weights != nil || e.Float64Weights != nil
}

// CSR is a directed graph in compressed sparse row form: the out-edges of u
// are Targets[Offsets[u]:Offsets[u+1]] with weights at the same positions.
// Rows are sorted by target; there are no self-loops and no parallel edges
// (a negative self-loop is kept aside, in NegativeLoops).
type CSR struct {
	NumVertices int
	Offsets     []EdgeOffset // len NumVertices+1
	Targets     []VertexID
	// Weights is []int32, []int64, []float32 or []float64 according to Type.
	// An unweighted graph has Type DistInt32 and every weight 1.
	Weights any
	Type    DistType
	// Weighted is false when the input had no weight column.
	Weighted bool
	// Undirected records that every input row was added in both directions.
	Undirected bool
	// MinWeight and MaxWeight bound the weights (0 for an empty graph),
	// those of NegativeLoops included.
	MinWeight, MaxWeight float64
	// NegativeLoops are the self-loops of negative weight dropped from the
	// rows, in vertex order (negative_loops.go): negative cycles, which
	// HasNegative and NegativeWeight count and NegativeLoopCycle reports.
	NegativeLoops []NegativeLoop
}

// NumEdges is the number of arcs (an undirected edge counts twice).
func (g *CSR) NumEdges() int64 { return int64(len(g.Targets)) }

// HasNegative reports whether some weight is below zero, a negative
// self-loop's included.
func (g *CSR) HasNegative() bool { return g.MinWeight < 0 }

// WeightsOf returns g.Weights as []D; it panics if D is not g.Type, which is a
// programming error, not an input error.
func WeightsOf[D Number](g *CSR) []D { return g.Weights.([]D) }

// OutDegree is the number of arcs leaving u.
func (g *CSR) OutDegree(u VertexID) int { return int(g.Offsets[u+1] - g.Offsets[u]) }

// BuildOptions tunes Build.
type BuildOptions struct {
	// Undirected adds every edge in both directions.
	Undirected bool
	// DistType overrides the distance type Build would choose; 0 chooses.
	DistType DistType
}

// ChooseDistType applies design.md's rule: integer weights give int32 when
// every sum an engine forms fits in int32 (IntSumsFit: n·max|w|, self-loops
// aside), else int64; float32 stays float32; float64 stays float64;
// unweighted graphs count hops in int32.
//
// The bound is n·max|w| rather than the longest path's (n-1)·max|w|: a
// relaxation adds one arc to a path of up to n-1 arcs before it compares,
// and the GPU kernels add without a check, so an int32 sum past the type
// would wrap.
func ChooseDistType(e *Edges) DistType {
	switch {
	case e.Float32Weights != nil:
		return DistFloat32
	case e.Float64Weights != nil:
		return DistFloat64
	case e.IntWeights != nil:
		if _, maxAbs := HeaviestIntArc(e); IntSumsFit(e.NumVertices, maxAbs, math.MaxInt32) {
			return DistInt32
		}
		return DistInt64
	}
	return DistInt32
}

// IntSumsFit reports whether n·maxAbs <= limit: then every sum a
// relaxation forms (one arc added to a path of at most n-1 arcs) stays
// within an integer type whose maximum is limit. limit itself stands for
// Infinity, which only a sum of n arcs could reach, and no distance is.
func IntSumsFit(n int, maxAbs uint64, limit uint64) bool {
	return n <= 1 || maxAbs == 0 || maxAbs <= limit/uint64(n)
}

// ExactFloatSums reports whether g has float weights that are all
// multiples of one power of two 2^-f, non-negative and finite, with
// n·max(w)·2^f ≤ 2^p: every sum of up to n weights is then a multiple of
// 2^-f below 2^(p-f), exact in a float type of p mantissa bits (24 for
// float32, 53 for float64), whatever the order of the additions. Float32
// weights in 0.1..10, for example, are multiples of 2^-27: their sums are
// exact at p = 53 on graphs of up to about 6.7 million vertices, and at
// p = 24 on none. Integer weights (g.Weights of an integer type) report
// false. Each call reads every weight once.
func ExactFloatSums(g *CSR, p int) bool {
	frac, top, ok := floatFraction(g)
	if !ok || frac >= p {
		return false
	}
	scaled := math.Ldexp(top, frac) // an integer
	if scaled > math.Ldexp(1, p) {
		return false
	}
	return IntSumsFit(g.NumVertices, uint64(scaled), uint64(1)<<p)
}

// floatFraction is the most fraction bits of g's float weights and the
// largest; not ok for integer weights or a negative or infinite one.
func floatFraction(g *CSR) (frac int, top float64, ok bool) {
	switch w := g.Weights.(type) {
	case []float32:
		for _, x := range w {
			if !(x >= 0) || math.IsInf(float64(x), 0) {
				return 0, 0, false
			} else if x > 0 {
				frac, top = max(frac, fractionBits(float64(x))), max(top, float64(x))
			}
		}
	case []float64:
		for _, x := range w {
			if !(x >= 0) || math.IsInf(x, 0) {
				return 0, 0, false
			} else if x > 0 {
				frac, top = max(frac, fractionBits(x)), max(top, x)
			}
		}
	default:
		return 0, 0, false
	}
	return frac, top, true
}

// fractionBits is the least f ≥ 0 for which w·2^f is an integer (w > 0,
// finite).
func fractionBits(w float64) int {
	mant, exp := math.Frexp(w) // w = mant·2^exp, mant in [0.5, 1)
	m := uint64(math.Ldexp(mant, 53))
	return max(0, 53-exp-bits.TrailingZeros64(m))
}

// HeaviestIntArc is the row of the largest |w| among e's integer-weighted
// arcs that are not self-loops (Build drops those), and that |w|; row -1
// and 0 when there is none.
func HeaviestIntArc(e *Edges) (row int, maxAbs uint64) {
	row = -1
	for i, w := range e.IntWeights {
		a := uint64(w)
		if w < 0 {
			a = -a
		}
		loop := i < len(e.Src) && i < len(e.Dst) && e.Src[i] == e.Dst[i]
		if (row < 0 || a > maxAbs) && !loop {
			row, maxAbs = i, a
		}
	}
	return row, maxAbs
}

// fitsBelow reports whether (n-1)·w < limit, so that no simple path reaches
// the integer Infinity.
func fitsBelow(n int, w uint64, limit uint64) bool {
	if n <= 1 || w == 0 {
		return true
	}
	hops := uint64(n - 1)
	if w > limit/hops {
		return false
	}
	return hops*w < limit
}

// CheckDistType reports whether t can hold every distance of e.
func CheckDistType(e *Edges, t DistType) error {
	chosen := ChooseDistType(e)
	switch {
	case t == chosen:
		return nil
	case t == DistInt64 && chosen == DistInt32:
		return nil
	case t == DistFloat64 && chosen.IsFloat():
		return nil
	case t == DistInt32 && chosen == DistInt64:
		return fmt.Errorf("graph: distance type int32 cannot hold the path sums of %d vertices with these weights; use int64", e.NumVertices)
	case !t.IsFloat() && chosen.IsFloat():
		return fmt.Errorf("graph: distance type %s cannot hold float weights", t)
	case t.IsFloat() && !chosen.IsFloat():
		// Integer weights in float distances are exact up to 2^24 / 2^53.
		limit := uint64(1) << 24
		if t == DistFloat64 {
			limit = 1 << 53
		}
		var maxAbs uint64
		for _, w := range e.IntWeights {
			a := uint64(w)
			if w < 0 {
				a = uint64(-w)
			}
			maxAbs = max(maxAbs, a)
		}
		if e.IntWeights == nil {
			maxAbs = 1
		}
		if !fitsBelow(e.NumVertices, maxAbs, limit) {
			return fmt.Errorf("graph: distance type %s cannot hold path lengths exactly; use int64", t)
		}
		return nil
	}
	return fmt.Errorf("graph: distance type %s cannot hold %s distances", t, chosen)
}

// Build turns an edge list into a CSR: counting sort by source, rows sorted by
// target, self-loops dropped (negative ones noted in NegativeLoops),
// parallel edges reduced to the smallest weight.
// Float weights must be finite (readers reject NaN and infinities); Build
// returns an error naming the row otherwise. It runs in O(n + m log d),
// on every core from parallelMinRows rows (build_parallel.go: the same CSR
// as on one).
func Build(e *Edges, opt BuildOptions) (*CSR, error) {
	n := e.NumVertices
	if n < 0 || n > MaxVertices {
		return nil, fmt.Errorf("graph: %d vertices is more than int32 ids hold (%d)", n, MaxVertices)
	}
	if len(e.Dst) != len(e.Src) {
		return nil, fmt.Errorf("graph: %d sources but %d targets", len(e.Src), len(e.Dst))
	}
	m := len(e.Src)
	for name, l := range map[string]int{"integer": len(e.IntWeights), "float32": len(e.Float32Weights), "float64": len(e.Float64Weights)} {
		if l != 0 && l != m {
			return nil, fmt.Errorf("graph: %d %s weights for %d edges", l, name, m)
		}
	}
	t := opt.DistType
	if t == 0 {
		t = ChooseDistType(e)
	} else if err := CheckDistType(e, t); err != nil {
		return nil, err
	}
	for i := 0; i < m; i++ {
		if s, d := e.Src[i], e.Dst[i]; s < 0 || int(s) >= n || d < 0 || int(d) >= n {
			return nil, fmt.Errorf("graph: row %d: edge %d -> %d outside [0, %d)", i, s, d, n)
		}
	}
	for i, w := range e.Float32Weights {
		if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
			return nil, fmt.Errorf("graph: row %d: weight %v is not finite", i, w)
		}
	}
	for i, w := range e.Float64Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("graph: row %d: weight %v is not finite", i, w)
		}
	}
	g := &CSR{NumVertices: n, Type: t, Weighted: e.Weighted(), Undirected: opt.Undirected}
	workers := buildWorkers(n, m)
	switch t {
	case DistInt32:
		buildWith[int32](g, e, opt.Undirected, workers)
	case DistInt64:
		buildWith[int64](g, e, opt.Undirected, workers)
	case DistFloat32:
		buildWith[float32](g, e, opt.Undirected, workers)
	case DistFloat64:
		buildWith[float64](g, e, opt.Undirected, workers)
	default:
		return nil, fmt.Errorf("graph: invalid distance type %v", t)
	}
	return g, nil
}

func weightAt[D Number](e *Edges, i int) D {
	switch {
	case e.IntWeights != nil:
		return D(e.IntWeights[i])
	case e.Float32Weights != nil:
		return D(e.Float32Weights[i])
	case e.Float64Weights != nil:
		return D(e.Float64Weights[i])
	}
	return 1
}

// buildWith builds g's arcs from e with workers workers: buildTyped on
// one, buildTypedParallel (build_parallel.go) on more; both give the same
// CSR. The negative self-loops both drop are noted after.
func buildWith[D Number](g *CSR, e *Edges, undirected bool, workers int) {
	if workers > 1 {
		buildTypedParallel[D](g, e, undirected, workers)
	} else {
		buildTyped[D](g, e, undirected)
	}
	g.NoteNegativeLoops(e)
}

func buildTyped[D Number](g *CSR, e *Edges, undirected bool) {
	n, m := g.NumVertices, len(e.Src)
	// Degree histogram over the arcs kept (self-loops dropped).
	counts := make([]EdgeOffset, n+1)
	for i := 0; i < m; i++ {
		s, d := e.Src[i], e.Dst[i]
		if s == d {
			continue
		}
		counts[s+1]++
		if undirected {
			counts[d+1]++
		}
	}
	for u := 0; u < n; u++ { // exclusive scan
		counts[u+1] += counts[u]
	}
	total := counts[n]
	targets := make([]VertexID, total)
	weights := make([]D, total)
	next := slices.Clone(counts[:n])
	for i := 0; i < m; i++ {
		s, d := e.Src[i], e.Dst[i]
		if s == d {
			continue
		}
		w := weightAt[D](e, i)
		targets[next[s]], weights[next[s]] = d, w
		next[s]++
		if undirected {
			targets[next[d]], weights[next[d]] = s, w
			next[d]++
		}
	}
	// Sort every row by (target, weight) and keep the first of each target.
	offsets := make([]EdgeOffset, n+1)
	var out EdgeOffset
	var row []rowArc[D]
	var sc sortScratch[D]
	for u := 0; u < n; u++ {
		lo, hi := counts[u], counts[u+1]
		row = row[:0]
		for k := lo; k < hi; k++ {
			row = append(row, rowArc[D]{targets[k], weights[k]})
		}
		sortRow(row, &sc)
		offsets[u] = out
		for k, a := range row {
			if k > 0 && row[k-1].t == a.t {
				continue
			}
			targets[out], weights[out] = a.t, a.w
			out++
		}
	}
	offsets[n] = out
	g.Offsets = offsets
	g.Targets = targets[:out:out]
	g.Weights = weights[:out:out]
	if out > 0 {
		lo, hi := weights[0], weights[0]
		for _, w := range weights[:out] {
			lo, hi = min(lo, w), max(hi, w)
		}
		g.MinWeight, g.MaxWeight = float64(lo), float64(hi)
	}
}

// WeightAt returns the weight of arc k as float64 (1 for an unweighted graph).
func (g *CSR) WeightAt(k EdgeOffset) float64 {
	switch w := g.Weights.(type) {
	case []int32:
		return float64(w[k])
	case []int64:
		return float64(w[k])
	case []float32:
		return float64(w[k])
	case []float64:
		return w[k]
	}
	return 1
}

// NegativeWeight returns the error of algorithm a on g, naming the first
// arc with a negative weight (a negative self-loop u -> u before u's other
// arcs), or nil when every weight is non-negative.
func (g *CSR) NegativeWeight(a Algorithm) *NegativeWeightError {
	if !g.HasNegative() {
		return nil
	}
	for u := 0; u < g.NumVertices; u++ {
		if w, ok := g.negativeLoopAt(VertexID(u)); ok {
			return &NegativeWeightError{Algorithm: a, From: VertexID(u), To: VertexID(u), Weight: w}
		}
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			if w := g.WeightAt(k); w < 0 {
				return &NegativeWeightError{Algorithm: a, From: VertexID(u), To: g.Targets[k], Weight: w}
			}
		}
	}
	return nil
}
