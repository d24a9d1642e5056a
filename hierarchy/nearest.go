package hierarchy

// The nearest of many sources through the hierarchy: one upward search
// from every source at once, then one downward sweep, as PHAST does for
// one source. Each vertex carries a (distance, source) label, the smaller
// distance first and among equal ones the smaller source id; adding an
// arc's weight keeps the order, so the upward Dijkstra and the sweep take
// the least label of every up-down path, which is the nearest source of
// the graph's distances (for each source the least up-down path is its
// distance). O(search spaces' union + n + arcs), whatever the number of
// sources.

import (
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// Nearest fills dist and source (each of length NumVertices) with every
// vertex's distance to the nearest of sources and that source, ties to
// the smaller source id; Infinity and -1 where no source reaches.
// Distances are in units of 2^-FractionBits (see Float). It fails for a
// source out of range or buffers of another length.
func (h *Hierarchy) Nearest(sources []graph.VertexID, dist []int64, source []graph.VertexID) error {
	if len(dist) != h.n || len(source) != h.n {
		return fmt.Errorf("hierarchy: %d distances and %d sources for %d vertices", len(dist), len(source), h.n)
	}
	for _, s := range sources {
		if err := h.checkVertex(s); err != nil {
			return err
		}
	}
	// By rank: the label of each vertex.
	d := make([]int64, h.n)
	from := make([]graph.VertexID, h.n)
	for r := range d {
		d[r], from[r] = Infinity, -1
	}
	better := func(r int32, dr int64, s graph.VertexID) bool {
		return dr < d[r] || (dr == d[r] && s < from[r])
	}
	// 1. The upward search from every source at once. A label that ties
	// in distance but names a smaller source enters the queue again, so
	// that it spreads as far as a shorter one would.
	var heap distHeap
	for _, s := range sources {
		if r := h.rank[s]; better(r, 0, s) {
			d[r], from[r] = 0, s
			heap.push(heapItem{0, r})
		}
	}
	for len(heap) > 0 {
		it := heap.pop()
		u := it.v
		if it.d > d[u] {
			continue
		}
		for k := h.up.off[u]; k < h.up.off[u+1]; k++ {
			x := h.up.head[k]
			if dx := it.d + h.up.w[k]; better(x, dx, from[u]) {
				d[x], from[x] = dx, from[u]
				heap.push(heapItem{dx, x})
			}
		}
	}
	// 2. The downward sweep, from the highest rank down: the tails of the
	// arcs into r rank higher, swept before r.
	off, head, w := h.down.off, h.down.head, h.down.w
	for r := h.n - 1; r >= 0; r-- {
		best, by := d[r], from[r]
		for k := off[r]; k < off[r+1]; k++ {
			x := head[k]
			if dx := d[x]; dx != Infinity {
				if c := dx + w[k]; c < best || (c == best && from[x] < by) {
					best, by = c, from[x]
				}
			}
		}
		d[r], from[r] = best, by
		v := h.order[r]
		dist[v], source[v] = best, by
	}
	return nil
}
