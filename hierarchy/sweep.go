package hierarchy

// The PHAST sweep laid out for a device that sweeps many sources at once
// (package gpu): the ranks grouped into levels whose vertices depend only
// on those of earlier levels, so that one level is one parallel step. The
// device runs the upward phase as a sweep too: the upward distances from
// s are a DP over the arcs to higher ranks in rising rank, in levels of
// their own, where the CPU's PHAST runs a Dijkstra that touches only the
// search space. For a block of thousands of sources the sweep's O(arcs)
// per source on the device beats the host's searches.
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
	"runtime"

	"github.com/pathctl/pathctl/graph"
)

// Sweep is a hierarchy's downward graph over positions, for a batched
// sweep. Position p holds vertex Vertex[p]; the level l is the positions
// [LevelStart[l], LevelStart[l+1]). The down-arcs into position p are
// [ArcStart[p], ArcStart[p+1]): tails ArcTail (positions of earlier
// levels) and weights ArcWeight, in the hierarchy's units (see
// Hierarchy.FractionBits), as int32: the device's sweeps add them to
// int32 distances.
type Sweep struct {
	Vertex     []int32 // vertex at each position
	Position   []int32 // position of each vertex
	LevelStart []int32 // len(levels)+1 bounds
	ArcStart   []int64 // len(positions)+1 bounds
	ArcTail    []int32
	ArcWeight  []int32
	// The upward phase: the level u is the positions UpOrder[i] for i in
	// [UpLevelStart[u], UpLevelStart[u+1]); the arcs into UpOrder[i] from
	// lower ranks are [UpArcStart[i], UpArcStart[i+1]): tails UpArcTail
	// (positions of earlier upward levels) and weights UpArcWeight.
	UpLevelStart []int32
	UpOrder      []int32
	UpArcStart   []int64
	UpArcTail    []int32
	UpArcWeight  []int32
	// MaxWeight is the heaviest arc of either phase (0 without arcs).
	MaxWeight int64
}

// UpLevels is the number of levels of the upward phase.
func (s *Sweep) UpLevels() int { return len(s.UpLevelStart) - 1 }

// Levels is the number of levels: the sweep's parallel steps.
func (s *Sweep) Levels() int { return len(s.LevelStart) - 1 }

// NewSweep lays h's downward graph out by levels (see the file comment),
// once per hierarchy: a hierarchy kept with a graph serves every run's
// sweep from the same layout. It fails when an arc is heavier than an
// int32 holds. O(n + arcs) time and memory on the first call, the arcs
// laid on every core; the Sweep is read-only.
func NewSweep(h *Hierarchy) (*Sweep, error) {
	h.derived.sweepOnce.Do(func() {
		heaviest := max(heaviestArc(h.up.w), heaviestArc(h.down.w))
		if heaviest > math.MaxInt32 {
			h.derived.sweepErr = fmt.Errorf("hierarchy: the heaviest arc, %d, is past int32", heaviest)
			return
		}
		h.derived.sweep = laySweep(h)
		h.derived.sweep.MaxWeight = heaviest
	})
	return h.derived.sweep, h.derived.sweepErr
}

// heaviestArc is the largest of w, 0 for none.
func heaviestArc(w []int64) int64 {
	var top int64
	for _, x := range w {
		top = max(top, x)
	}
	return top
}

// laySweep is NewSweep's layout. The levels are a DP in rank order, on one
// core (a pass over the arcs); the arcs are copied into place on every
// core, each rank's arcs in their order in h.
func laySweep(h *Hierarchy) *Sweep {
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
	s := &Sweep{Vertex: make([]int32, n), Position: make([]int32, n)}
	var posOfRank []int32
	s.LevelStart, posOfRank = byLevel(level, levels, true)
	inSpans(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p := posOfRank[r]
			s.Vertex[p] = h.order[r]
			s.Position[h.order[r]] = p
		}
	})
	s.ArcStart = arcStarts(posOfRank, func(r int) int64 { return off[r+1] - off[r] })
	s.ArcTail = make([]int32, len(head))
	s.ArcWeight = make([]int32, len(head))
	inSpans(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			at := s.ArcStart[posOfRank[r]]
			for k := off[r]; k < off[r+1]; k++ {
				s.ArcTail[at] = posOfRank[head[k]]
				s.ArcWeight[at] = int32(w[k])
				at++
			}
		}
	})
	s.layUpward(h, posOfRank)
	return s
}

// layUpward lays the upward arcs out by upward level: the level of a rank
// is 0 without arcs from lower ranks, else one more than its tails'
// highest, found in one pass in rising rank (every tail's rank is lower).
// The arcs are then gathered by their heads: each core owns a range of
// heads and takes, from one pass over every arc in rising tail rank, those
// into its range, so that a head's arcs keep their tails' order.
func (s *Sweep) layUpward(h *Hierarchy, posOfRank []int32) {
	n := h.n
	off, head, w := h.up.off, h.up.head, h.up.w
	level := make([]int32, n)
	in := make([]int64, n) // arcs into each rank
	levels := int32(0)
	for u := range n {
		levels = max(levels, level[u]+1)
		for k := off[u]; k < off[u+1]; k++ {
			x := head[k]
			level[x] = max(level[x], level[u]+1)
			in[x]++
		}
	}
	var index []int32 // of each rank in UpOrder
	s.UpLevelStart, index = byLevel(level, levels, false)
	s.UpOrder = make([]int32, n)
	inSpans(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s.UpOrder[index[r]] = posOfRank[r]
		}
	})
	s.UpArcStart = arcStarts(index, func(r int) int64 { return in[r] })
	s.UpArcTail = make([]int32, len(head))
	s.UpArcWeight = make([]int32, len(head))
	next := in // reused: where each head's next arc goes
	inSpans(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			next[r] = s.UpArcStart[index[r]]
		}
	})
	owners := min(runtime.GOMAXPROCS(0), max(n/(1<<12), 1))
	parallel(owners, owners, func(_, o int) {
		first, last := int32(n*o/owners), int32(n*(o+1)/owners)
		for u := range n {
			tail := posOfRank[u]
			for k := off[u]; k < off[u+1]; k++ {
				if x := head[k]; x >= first && x < last {
					at := next[x]
					next[x]++
					s.UpArcTail[at] = tail
					s.UpArcWeight[at] = int32(w[k])
				}
			}
		}
	})
}

// inSpans calls work(lo, hi) over spans of [0, count) on every core.
func inSpans(count int, work func(lo, hi int)) {
	const span = 1 << 15
	spans := (count + span - 1) / span
	parallel(min(runtime.GOMAXPROCS(0), max(spans, 1)), spans, func(_, i int) {
		work(i*span, min((i+1)*span, count))
	})
}

// byLevel numbers the ranks level by level, within a level in falling
// rank (descending) or rising rank: the bounds of each level's numbers
// (levels+1 of them) and each rank's number.
func byLevel(level []int32, levels int32, descending bool) (start, slot []int32) {
	start = make([]int32, levels+1)
	for _, l := range level {
		start[l+1]++
	}
	for l := range levels {
		start[l+1] += start[l]
	}
	next := append([]int32(nil), start[:levels]...)
	slot = make([]int32, len(level))
	for i := range level {
		r := i
		if descending {
			r = len(level) - 1 - i
		}
		slot[r] = next[level[r]]
		next[level[r]]++
	}
	return start, slot
}

// arcStarts is the bounds of the arcs of each slot, rank r's arcs
// (arcs(r) of them) at slot[r].
func arcStarts(slot []int32, arcs func(r int) int64) []int64 {
	start := make([]int64, len(slot)+1)
	for r, i := range slot {
		start[i+1] = arcs(r)
	}
	for i := range slot {
		start[i+1] += start[i]
	}
	return start
}

// DistancesBySweep computes the rows of sources as the device's batched
// sweep does, on the host: each source at 0 in a vertex-major table of
// len(sources) columns, the upward levels, then the downward levels. It is
// the reference the device's sweep is checked against, and checks the
// levels themselves (every tail of a level's arcs lies in an earlier level
// of its phase). rows[i] gets source i's distances by vertex (length
// NumVertices), in the hierarchy's units.
func (s *Sweep) DistancesBySweep(sources []graph.VertexID, rows [][]int64) error {
	n, k := len(s.Vertex), len(sources)
	if len(rows) != k {
		return fmt.Errorf("hierarchy: %d rows for %d sources", len(rows), k)
	}
	table := make([]int64, n*k)
	for i := range table {
		table[i] = Infinity
	}
	for j, src := range sources {
		if src < 0 || int(src) >= n {
			return fmt.Errorf("hierarchy: vertex %d out of range [0, %d)", src, n)
		}
		table[int(s.Position[src])*k+j] = 0
	}
	relax := func(p, tail int32, weight int32) {
		w := int64(weight)
		for j := range k {
			if d := table[int(tail)*k+j]; d != Infinity && d <= math.MaxInt64-w && d+w < table[int(p)*k+j] {
				table[int(p)*k+j] = d + w
			}
		}
	}
	// The upward phase: a tail's level must come before its head's, which
	// the positions of the levels swept so far record.
	swept := make([]bool, n)
	for l := range s.UpLevels() {
		for i := s.UpLevelStart[l]; i < s.UpLevelStart[l+1]; i++ {
			p := s.UpOrder[i]
			for a := s.UpArcStart[i]; a < s.UpArcStart[i+1]; a++ {
				if !swept[s.UpArcTail[a]] {
					return fmt.Errorf("hierarchy: upward level %d reads position %d before its level", l, s.UpArcTail[a])
				}
				relax(p, s.UpArcTail[a], s.UpArcWeight[a])
			}
		}
		for i := s.UpLevelStart[l]; i < s.UpLevelStart[l+1]; i++ {
			swept[s.UpOrder[i]] = true
		}
	}
	for l := range s.Levels() {
		for p := s.LevelStart[l]; p < s.LevelStart[l+1]; p++ {
			for a := s.ArcStart[p]; a < s.ArcStart[p+1]; a++ {
				if tail := s.ArcTail[a]; tail < 0 || tail >= s.LevelStart[l] {
					return fmt.Errorf("hierarchy: position %d of level %d has a tail %d outside the earlier levels", p, l, tail)
				}
				relax(p, s.ArcTail[a], s.ArcWeight[a])
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
