package plan

import "github.com/pathctl/pathctl/graph"

// minsMaxDegree bounds the out-degree of a source derived by a minimum:
// the minimum reads that many rows of n distances, which costs far less
// than a source of the kernel. Not measured on its own; the minimums as a
// whole are in docs/benchmarks-history.md, "What changed (kernel time of one block of
// every source, ...)" (R-MAT 16 leaves 43 % of its non-leaf vertices out,
// the 256×256 grid half).
const minsMaxDegree = 64

// planMins moves the sources of plan that a minimum can derive out of the
// kernel's list into plan.Mins: every one of whose arcs (s, p, w) reaches
// a source p of the block that the kernel computes, so that with
// non-negative weights d(s, t) = min over the arcs of w + d(p, t) for
// t ≠ s. The sources left out form an independent set (none reaches
// another), chosen greedily by rising out-degree, at most minsMaxDegree
// arcs each. A block only gains where it holds the neighbours too: the
// stats layout's block of every source, or large blocks.
//
// src is the block in row order. Only sources the kernel computes in their
// own row can serve as heads: leaves and the parents computed in a leaf's
// row (outside the block) cannot, and the parents leaves read must stay
// in the kernel. Vertices with a resident row (resRow: 1 + the row; nil
// for none) serve as heads too, whatever the block does with them.
func planMins(g *graph.CSR, src []int32, plan *Block, resRow []int32) {
	const (
		free = iota
		kept // a derived source or a leaf reads its row
		left // derived by a minimum
	)
	n := g.NumVertices
	rowOf := make([]int32, n) // 1 + the row of a vertex the kernel computes in its own row
	dup := map[int32]bool{}
	kernelRows := plan.Rows
	for i, s := range plan.Sources {
		row := int32(i)
		if kernelRows != nil {
			row = kernelRows[i]
		}
		if src[row] == s {
			if rowOf[s] != 0 {
				dup[s] = true // a source twice in the block: its rows stay in the kernel
			}
			rowOf[s] = row + 1
		}
	}
	state := make([]uint8, n)
	for s := range dup {
		state[s] = kept
	}
	for _, d := range plan.Derive {
		if d.Dst != d.Src && int(d.Src) < len(src) { // not a resident row
			state[src[d.Src]] = kept
		}
	}
	order := make([]int32, 0, len(plan.Sources))
	for _, s := range plan.Sources {
		if d := g.OutDegree(graph.VertexID(s)); d > 0 && d <= minsMaxDegree && rowOf[s] != 0 {
			order = append(order, s)
		}
	}
	pos := byDegree(g, order, false)
	sorted := make([]int32, len(order))
	for i, j := range pos {
		sorted[i] = order[j]
	}
	order = sorted
	for _, s := range order {
		if state[s] != free {
			continue
		}
		lo, hi := g.Offsets[s], g.Offsets[s+1]
		ok := true
		for _, p := range g.Targets[lo:hi] {
			if (rowOf[p] == 0 || state[p] == left) && (resRow == nil || resRow[p] == 0) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		state[s] = left
		first := int32(len(plan.MinArcs))
		for e := lo; e < hi; e++ {
			p := g.Targets[e]
			if resRow != nil && resRow[p] != 0 {
				plan.MinArcs = append(plan.MinArcs, MinArc{resRow[p] - 1, int64(e)})
				continue
			}
			state[p] = kept
			plan.MinArcs = append(plan.MinArcs, MinArc{rowOf[p] - 1, int64(e)})
		}
		plan.Mins = append(plan.Mins, MinDerivation{rowOf[s] - 1, s, first, int32(hi - lo)})
	}
	if len(plan.Mins) == 0 {
		return
	}
	// Not nil even where every source is derived: nil Rows would mean the
	// sources' own rows, nothing derived.
	sources, rows := []int32{}, []int32{}
	for i, s := range plan.Sources {
		if state[s] == left && rowOf[s] != 0 {
			continue
		}
		sources = append(sources, s)
		if kernelRows != nil {
			rows = append(rows, kernelRows[i])
		} else {
			rows = append(rows, int32(i))
		}
	}
	plan.Sources, plan.Rows = sources, rows
}
