package graph

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
	// Pred is nil unless predecessors were asked for; then Pred[i*n+v] is
	// the vertex before v on a shortest path from Sources[i], or -1 for the
	// source itself and unreachable vertices.
	Pred []VertexID
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

// Row returns the distances from Sources[i].
func Row[D Number](b *Block, i int) []D {
	d := DistOf[D](b)
	return d[i*b.NumVertices : (i+1)*b.NumVertices]
}
