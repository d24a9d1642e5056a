package graph

// Nearest is the answer of the nearest layout: for every vertex, its
// distance to the nearest of a set of sources and which source that is
// (ties to the smaller source id).
type Nearest struct {
	Type DistType
	// Dist is []int32, []int64, []float32 or []float64 according to Type,
	// one distance per vertex, Infinity where no source reaches.
	Dist any
	// Source is the nearest source of every vertex, -1 where none reaches.
	Source []VertexID
}
