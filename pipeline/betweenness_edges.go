package pipeline

// The rows of the edge-betweenness layout from the CPU engine's per-arc
// sums (cpu.Engine.EdgeBetweenness).

import (
	"sort"

	"github.com/pathctl/pathctl/graph"
)

// betweennessEdges folds per-arc sums into the layout's edges, in CSR
// order (by source, then target, dense ids): on a directed graph every
// arc is an edge; on an undirected one each edge {u, v} is one row, u < v,
// whose value is the sum of its two arcs', as networkx sums both
// directions into its one key of the edge.
func betweennessEdges(csr *graph.CSR, arcs []float64) (src, dst []int32, values []float64) {
	rows := len(csr.Targets)
	if csr.Undirected {
		rows /= 2
	}
	src, dst, values = make([]int32, 0, rows), make([]int32, 0, rows), make([]float64, 0, rows)
	for u := range csr.NumVertices {
		lo, hi := csr.Offsets[u], csr.Offsets[u+1]
		for k := lo; k < hi; k++ {
			v := csr.Targets[k]
			x := arcs[k]
			if csr.Undirected {
				if int(v) < u {
					continue // the row of the edge is at v
				}
				x += arcs[reverseArc(csr, v, graph.VertexID(u))]
			}
			src, dst, values = append(src, int32(u)), append(dst, int32(v)), append(values, x)
		}
	}
	return src, dst, values
}

// reverseArc is the index of the arc from → to of an undirected CSR, whose
// rows are sorted by target (graph.Build) and hold both arcs of every edge.
func reverseArc(csr *graph.CSR, from, to graph.VertexID) int64 {
	lo, hi := csr.Offsets[from], csr.Offsets[from+1]
	row := csr.Targets[lo:hi]
	return lo + int64(sort.Search(len(row), func(i int) bool { return row[i] >= to }))
}
