package graph

import "math"

// Block is the result of one block of sources: row i holds the distances
// from Sources[i] to every vertex, in vertex order. Unreachable vertices hold
// Infinity of the distance type.
type Block struct {
	Sources     []VertexID
	NumVertices int
	Type        DistType
	// Dist is []int32, []int64, []float32 or []float64 according to Type,
	// len(Sources)*NumVertices long, row-major.
	Dist any
	// Targets, when not nil, are the block's columns: row i holds the
	// distances from Sources[i] to Targets[j], j < len(Targets), and
	// NumVertices stays the graph's vertex count (Request.Targets).
	Targets []VertexID
	// CellTargets, when not nil, names the vertex of every cell: row i,
	// column j holds the distance to CellTargets[i*w+j], w = Width()
	// (the k nearest of each source, nearest first; Infinity where a
	// source reaches fewer).
	CellTargets []VertexID
	// Pred is nil unless predecessors were asked for; then Pred[i*n+v] is
	// the vertex before v on a shortest path from Sources[i], or -1 for the
	// source itself and unreachable vertices.
	Pred []VertexID
	// PathPred, when not nil, holds the full predecessor rows of the
	// sources (len(Sources)*NumVertices, as Pred without targets): the
	// paths of the pairs layout's path column are walked back along it.
	PathPred []VertexID
	// Recycle, when set, is called once nothing reads Dist any more: by
	// the release of the last Arrow buffer wrapping it (arrowio's matrix
	// records), so that its memory can serve a later block.
	Recycle func()
	// Valid, when not nil, is room for the validity bitmap of Dist for
	// integer distances: bit i, in Arrow's least-significant-bit order, is
	// set where Dist[i] is not Infinity ((len(Dist)+7)/8 bytes). A runner
	// that fills it (the GPU runner builds it on the device) sets ValidSet
	// and Nulls, the number of Infinity entries; otherwise whoever builds
	// records may use the room for a bitmap of its own.
	Valid    []byte
	ValidSet bool
	Nulls    int
}

// NewBlock allocates a block for sources over n vertices.
func NewBlock(sources []VertexID, n int, t DistType, withPred bool) *Block {
	b := &Block{Sources: sources, NumVertices: n, Type: t}
	size := len(sources) * n
	switch t {
	case DistInt32:
		b.Dist = make([]int32, size)
	case DistInt64:
		b.Dist = make([]int64, size)
	case DistFloat32:
		b.Dist = make([]float32, size)
	case DistFloat64:
		b.Dist = make([]float64, size)
	}
	if withPred {
		b.Pred = make([]VertexID, size)
	}
	return b
}

// DistOf returns b.Dist as []D.
func DistOf[D Number](b *Block) []D { return b.Dist.([]D) }

// Row returns the distances from Sources[i], Width() cells.
func Row[D Number](b *Block, i int) []D {
	d := DistOf[D](b)
	w := b.Width()
	return d[i*w : (i+1)*w]
}

// Width is the number of cells in one row of b: len(Targets) when the
// block holds only some targets' columns, len(CellTargets)/len(Sources)
// when every row names its own, NumVertices otherwise.
func (b *Block) Width() int {
	switch {
	case b.CellTargets != nil:
		if len(b.Sources) == 0 {
			return 0
		}
		return len(b.CellTargets) / len(b.Sources)
	case b.Targets != nil:
		return len(b.Targets)
	}
	return b.NumVertices
}

// Target is the vertex of row i, column j.
func (b *Block) Target(i, j int) VertexID {
	switch {
	case b.CellTargets != nil:
		return b.CellTargets[i*b.Width()+j]
	case b.Targets != nil:
		return b.Targets[j]
	}
	return VertexID(j)
}

// NewTargetBlock allocates a block for sources over the columns of
// targets (a graph of n vertices); nil targets gives NewBlock's block.
func NewTargetBlock(sources, targets []VertexID, n int, t DistType, withPred bool) *Block {
	if targets == nil {
		return NewBlock(sources, n, t, withPred)
	}
	b := NewBlock(sources, len(targets), t, withPred)
	b.NumVertices, b.Targets = n, targets
	return b
}

// CutoffOf is the largest distance of type D that is at most c, the bound
// of a cutoff at c in D; Infinity[D] when every distance of D is at most
// c. c must not be negative or NaN.
func CutoffOf[D Number](c float64) D {
	inf := Infinity[D]()
	if c >= float64(inf) {
		return inf
	}
	var d D
	switch any(d).(type) {
	case float32:
		f := float32(c)
		if float64(f) > c {
			f = math.Nextafter32(f, float32(math.Inf(-1)))
		}
		return D(f)
	case float64:
		return D(c)
	}
	return D(math.Floor(c))
}

// NarrowRow writes into out (and outPred, when not nil) the cells of a
// full row (dist, pred over every vertex) that targets select (every
// vertex when targets is nil, then out may be dist itself), with every
// distance above cut made Infinity and its predecessor -1.
func NarrowRow[D Number](dist []D, pred []VertexID, targets []VertexID, cut D, out []D, outPred []VertexID) {
	inf := Infinity[D]()
	if targets == nil {
		for v, d := range dist {
			if d > cut && d != inf {
				out[v] = inf
				if outPred != nil {
					outPred[v] = -1
				}
			} else {
				out[v] = d
				if outPred != nil {
					outPred[v] = pred[v]
				}
			}
		}
		return
	}
	for j, v := range targets {
		d := dist[v]
		p := VertexID(-1)
		if pred != nil {
			p = pred[v]
		}
		if d > cut {
			d, p = inf, -1
		}
		out[j] = d
		if outPred != nil {
			outPred[j] = p
		}
	}
}
