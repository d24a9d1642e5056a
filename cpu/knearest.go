package cpu

// The k nearest of every source (the pipeline's --k-nearest), selected
// during auto's searches instead of from full rows (pipeline's
// nearestSelector): the searches settle vertices in distance order, so
// each stops once it holds k candidates (other vertices than its source,
// or the targets' where there are some) and settles a vertex beyond the
// k-th's distance; every tie of the k-th is then held, and sorting the
// candidates by distance, then vertex, gives the k nearest as the
// pipeline's host selection does. A search then costs what it settles
// (and their arcs), not the graph: its row stays all Infinity between
// searches, reset through the arcs of the vertices it settled, every
// distance it set having been set through one of them.

import (
	"cmp"
	"slices"

	"github.com/pathctl/pathctl/graph"
)

// nearSearch is a worker's state of the k-nearest searches.
type nearSearch[D graph.Number] struct {
	k     int
	src   graph.VertexID
	isCol []bool // the targets (runner.isCol), nil for every vertex
	// sel are the candidates settled so far, bound the k-th's distance
	// once k are held.
	sel   []nearCand[D]
	bound D
	// settled are the vertices settled (reached, for a breadth-first
	// search) so far; row is the search's full row, all Infinity between
	// searches when clean.
	settled []graph.VertexID
	row     []D
	clean   bool
}

// nearCand is a candidate of the k nearest.
type nearCand[D graph.Number] struct {
	d D
	v graph.VertexID
}

// settle records u settled at distance d (in the search's order, never
// below an earlier one) and reports whether the search may stop: k
// candidates are held and d lies beyond the k-th's distance.
func (ns *nearSearch[D]) settle(u graph.VertexID, d D) bool {
	ns.settled = append(ns.settled, u)
	if len(ns.sel) >= ns.k && d > ns.bound {
		return true
	}
	if u != ns.src && (ns.isCol == nil || ns.isCol[u]) {
		ns.sel = append(ns.sel, nearCand[D]{d, u})
		if len(ns.sel) == ns.k {
			ns.bound = d
		}
	}
	return false
}

// SelectNearest makes the runner's blocks hold the k nearest of every
// source (k columns named by CellTargets, nearest first, ties by vertex,
// Infinity and -1 where a source reaches fewer), selected during auto's
// searches, and reports whether it will: not under another algorithm,
// negative weights (bellman-ford) or predecessors.
func (r *runner[D]) SelectNearest(k int) bool {
	if k < 1 || r.algo != graph.Auto || r.auto == autoBellmanFord || r.withPred || r.roundF32 {
		return false
	}
	r.nearestK = k
	if r.cols == nil {
		r.workBytes += int64(r.n) * int64(graph.TypeOf[D]().Size()) // the search's full row
	}
	r.describe += "; each search stops once it holds the k nearest"
	return true
}

// NearestDeclined says, for --verbose, where the runner selects the k
// nearest itself (SelectNearest), when it did not.
func (r *runner[D]) NearestDeclined() string {
	return "the cpu engine selects them during auto's searches, for non-negative weights, without paths or predecessors, and not for float32 weights (chosen on the rounded rows)"
}

// solveNearest computes row i of out, a block of the k nearest
// (SelectNearest), through ws's near search.
func (r *runner[D]) solveNearest(ws *workspace[D], out *graph.Block, dist []D, i int) error {
	ns := ws.near
	if ns == nil {
		ns = &nearSearch[D]{k: r.nearestK}
		if r.cols != nil {
			ns.isCol = r.isCol // the candidates are the targets
		}
		ws.near = ns
	}
	inf := graph.Infinity[D]()
	if !ns.clean {
		ns.row = grow(&ns.row, r.n)
		fill(ns.row, inf)
		ns.clean = true
	}
	ns.src, ns.sel, ns.settled = out.Sources[i], ns.sel[:0], ns.settled[:0]
	if err := r.solve(ws, ns.src, ns.row, nil); err != nil {
		ns.clean = false // an interrupted search: the next fills its row
		return err
	}
	slices.SortFunc(ns.sel, func(a, b nearCand[D]) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(a.v, b.v)
	})
	k := r.nearestK
	for c := range k {
		at := i*k + c
		if c < len(ns.sel) {
			dist[at], out.CellTargets[at] = ns.sel[c].d, ns.sel[c].v
		} else {
			dist[at], out.CellTargets[at] = inf, -1
		}
	}
	for _, u := range ns.settled {
		ns.row[u] = inf
		for _, v := range r.targets[r.offsets[u]:r.offsets[u+1]] {
			ns.row[v] = inf
		}
	}
	return nil
}
