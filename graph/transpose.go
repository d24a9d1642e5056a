package graph

// Transpose returns the CSR of g with every arc reversed: the arcs into v
// become v's out-arcs, so distances from s in the transpose are the
// distances to s in g (--reverse). It builds new offsets, targets and
// weights by a counting sort over the arcs, O(n + m) time and memory; the
// edge table is not read again. An undirected graph is its own transpose
// and is returned as it is.
func Transpose(g *CSR) *CSR {
	if g.Undirected {
		return g
	}
	n := g.NumVertices
	t := &CSR{NumVertices: n, Type: g.Type, Weighted: g.Weighted, MinWeight: g.MinWeight, MaxWeight: g.MaxWeight,
		NegativeLoops: g.NegativeLoops} // a loop at v is one in the transpose too
	t.Offsets = make([]EdgeOffset, n+1)
	for _, v := range g.Targets {
		t.Offsets[v+1]++
	}
	for v := range n {
		t.Offsets[v+1] += t.Offsets[v]
	}
	next := make([]EdgeOffset, n)
	copy(next, t.Offsets[:n])
	t.Targets = make([]VertexID, len(g.Targets))
	switch w := g.Weights.(type) {
	case []int32:
		t.Weights = transposeArcs(g, t, next, w)
	case []int64:
		t.Weights = transposeArcs(g, t, next, w)
	case []float32:
		t.Weights = transposeArcs(g, t, next, w)
	case []float64:
		t.Weights = transposeArcs(g, t, next, w)
	}
	return t
}

func transposeArcs[D Number](g, t *CSR, next []EdgeOffset, w []D) []D {
	out := make([]D, len(w))
	for u := range g.NumVertices {
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			v := g.Targets[k]
			at := next[v]
			next[v]++
			t.Targets[at] = VertexID(u)
			out[at] = w[k]
		}
	}
	return out
}
