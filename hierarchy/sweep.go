package hierarchy

// The PHAST sweep laid out for a device that sweeps many sources at once
// (package gpu): the ranks grouped into levels whose vertices depend only
// on those of earlier levels, so that one level is one parallel step, and
// the upward search spaces that seed the sweep.
//
// A down-arc x→r (x of higher rank) makes d(r) depend on d(x). The level
// of r is 0 when no down-arc enters r, else one more than the highest
// level of its tails: computed in one pass from the highest rank down,
// since every tail's rank is higher. The sweep then runs the levels in
// order, every vertex of a level at once. Positions number the vertices
// level by level (within a level by descending rank), so that a level is a
// contiguous range and its down-arcs, stored by their head's position,
// are contiguous too.

import (
	"fmt"
	"math"

	"github.com/pathctl/pathctl/graph"
)

// Sweep is a hierarchy's downward graph over positions, for a batched
// sweep. Position p holds vertex Vertex[p]; the level l is the positions
// [LevelStart[l], LevelStart[l+1]). The down-arcs into position p are
// [ArcStart[p], ArcStart[p+1]): tails ArcTail (positions of earlier
// levels) and weights ArcWeight, in the hierarchy's units (see
// Hierarchy.FractionBits).
type Sweep struct {
	Vertex     []int32 // vertex at each position
	Position   []int32 // position of each vertex
	LevelStart []int32 // len(levels)+1 bounds
	ArcStart   []int64 // len(positions)+1 bounds
	ArcTail    []int32
	ArcWeight  []int64
	// MaxWeight is the heaviest down-arc (0 without arcs).
	MaxWeight int64
}

// Levels is the number of levels: the sweep's parallel steps.
func (s *Sweep) Levels() int { return len(s.LevelStart) - 1 }

// NewSweep lays h's downward graph out by levels (see the file comment).
// O(n + arcs) time and memory.
func NewSweep(h *Hierarchy) *Sweep {
	n := h.n
	off, head, w := h.down.off, h.down.head, h.down.w
	level := make([]int32, n)
	levels := int32(0)
	for r := n - 1; r >= 0; r-- {
		l := int32(0)
		for k := off[r]; k < off[r+1]; k++ {
			l = max(l, level[head[k]]+1)
		}
		level[r] = l
		levels = max(levels, l+1)
	}
	s := &Sweep{Vertex: make([]int32, n), Position: make([]int32, n), LevelStart: make([]int32, levels+1)}
	for _, l := range level {
		s.LevelStart[l+1]++
	}
	for l := range levels {
		s.LevelStart[l+1] += s.LevelStart[l]
	}
	next := append([]int32(nil), s.LevelStart[:levels]...)
	posOfRank := make([]int32, n)
	for r := n - 1; r >= 0; r-- {
		p := next[level[r]]
		next[level[r]]++
		posOfRank[r] = p
		s.Vertex[p] = h.order[r]
		s.Position[h.order[r]] = p
	}
	s.ArcStart = make([]int64, n+1)
	for r := range n {
		s.ArcStart[posOfRank[r]+1] = off[r+1] - off[r]
	}
	for p := range n {
		s.ArcStart[p+1] += s.ArcStart[p]
	}
	s.ArcTail = make([]int32, len(head))
	s.ArcWeight = make([]int64, len(head))
	for r := range n {
		at := s.ArcStart[posOfRank[r]]
		for k := off[r]; k < off[r+1]; k++ {
			s.ArcTail[at] = posOfRank[head[k]]
			s.ArcWeight[at] = w[k]
			s.MaxWeight = max(s.MaxWeight, w[k])
			at++
		}
	}
	return s
}

// UpwardSpace runs the upward search of PHAST from s and calls visit with
// the position-free result: every vertex the search reached (by vertex
// id) and its upward distance, in the hierarchy's units. These seed a
// sweep; every other vertex starts at Infinity. It fails for s out of
// range.
func (q *Query) UpwardSpace(s graph.VertexID, visit func(v graph.VertexID, d int64)) error {
	h := q.h
	if err := h.checkVertex(s); err != nil {
		return err
	}
	dist := q.fwd
	q.fwdTouched = q.fwdTouched[:0]
	r0 := h.rank[s]
	dist[r0] = 0
	q.fwdTouched = append(q.fwdTouched, r0)
	q.fwdHeap = append(q.fwdHeap[:0], heapItem{0, r0})
	for len(q.fwdHeap) > 0 {
		it := q.fwdHeap.pop()
		u := it.v
		if it.d > dist[u] {
			continue
		}
		for k := h.up.off[u]; k < h.up.off[u+1]; k++ {
			x := h.up.head[k]
			if d := it.d + h.up.w[k]; d < dist[x] {
				if dist[x] == Infinity {
					q.fwdTouched = append(q.fwdTouched, x)
				}
				dist[x] = d
				q.fwdHeap.push(heapItem{d, x})
			}
		}
	}
	for _, r := range q.fwdTouched {
		visit(graph.VertexID(h.order[r]), dist[r])
		dist[r] = Infinity
	}
	q.fwdTouched = q.fwdTouched[:0]
	return nil
}

// DistancesBySweep computes the rows of sources as a batched sweep does,
// on the host: the upward spaces seed a vertex-major table of
// len(sources) columns, and the levels are swept in order. It is the
// reference the device's sweep is checked against, and checks the levels
// themselves (every tail of a level's arcs lies in an earlier level).
// rows[i] gets source i's distances by vertex (length NumVertices).
func (s *Sweep) DistancesBySweep(q *Query, sources []graph.VertexID, rows [][]int64) error {
	n, k := len(s.Vertex), len(sources)
	if len(rows) != k {
		return fmt.Errorf("hierarchy: %d rows for %d sources", len(rows), k)
	}
	table := make([]int64, n*k)
	for i := range table {
		table[i] = Infinity
	}
	for j, src := range sources {
		if err := q.UpwardSpace(src, func(v graph.VertexID, d int64) { table[int(s.Position[v])*k+j] = d }); err != nil {
			return err
		}
	}
	for l := range s.Levels() {
		for p := s.LevelStart[l]; p < s.LevelStart[l+1]; p++ {
			for a := s.ArcStart[p]; a < s.ArcStart[p+1]; a++ {
				tail := s.ArcTail[a]
				if tail < 0 || tail >= s.LevelStart[l] {
					return fmt.Errorf("hierarchy: position %d of level %d has a tail %d outside the earlier levels", p, l, tail)
				}
				for j := range k {
					if d := table[int(tail)*k+j]; d != Infinity && d <= math.MaxInt64-s.ArcWeight[a] && d+s.ArcWeight[a] < table[int(p)*k+j] {
						table[int(p)*k+j] = d + s.ArcWeight[a]
					}
				}
			}
		}
	}
	for j := range k {
		if len(rows[j]) != n {
			return fmt.Errorf("hierarchy: a row of %d distances for %d vertices", len(rows[j]), n)
		}
		for v := range n {
			rows[j][v] = table[int(s.Position[v])*k+j]
		}
	}
	return nil
}
