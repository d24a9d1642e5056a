package cpu

// ch: shortest paths through a contraction hierarchy (package hierarchy).
// Prepare builds the hierarchy of the graph once (or takes the one given
// by WithHierarchy, read from an index file); every row of a block is then
// one PHAST query (Delling, Goldberg, Nowatzyk, Werneck, IPDPS 2011): an
// upward Dijkstra from the source and one linear sweep down the ranks.
// The rows run on the engine's workers as every other kernel's do, each
// worker with a hierarchy.Query of its own (from a pool, as workspaces
// are), so the cutoff and the k nearest are the runner's common code
// (engine.go): gathered from the full row, cut after it. With targets
// (and no k nearest) a row is the targets' columns only, by the bucket
// algorithm of many-to-many (hierarchy.Buckets): Prepare runs one
// backward search per target, and a row costs one upward search and its
// bucket scans instead of a sweep over every vertex.
//
// Choices:
//   - The hierarchy works on int64 distances (integer weights, or float
//     weights scaled to integers where hierarchy.Exact holds); a row is
//     converted to the block's type: Infinity to the type's Infinity,
//     float rows through Hierarchy.Float, exact in float64 and rounded
//     once for a float32 block.
//   - No predecessors in full rows: the sweep does not keep them. Paths to
//     a few vertices (Request.StopAt with predecessors, the pipeline's
//     paths to targets) are one bidirectional query per target with the
//     path unpacked from shortcuts (hierarchy.Query.Path): the row holds
//     the targets' distances and the predecessors along their paths,
//     Infinity and -1 elsewhere. Other requests of predecessors are
//     refused.
//   - Weights whose sums the hierarchy cannot hold exactly, and graphs
//     whose contraction gives up (too many shortcuts), are refused with
//     an error that wraps the hierarchy's and names dijkstra.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// WithHierarchy makes the engine's ch runners use h instead of building a
// hierarchy in Prepare: the hierarchy of the very graph Prepare is given
// (hierarchy.Read checks an index file against it; for distances along
// incoming arcs, the Reverse of the forward graph's). Prepare checks only
// the vertex count.
func WithHierarchy(h *hierarchy.Hierarchy) Option {
	return func(e *Engine) { e.hier = h }
}

// errCHPredecessors refuses predecessors under ch.
var errCHPredecessors = errors.New("cpu: ch keeps no predecessors but on the paths to stop-at targets; use dijkstra")

// BuildHierarchy builds the contraction hierarchy of g on threads
// goroutines (0: every core) as the engine's ch runners do without
// WithHierarchy, stopped by ctx (hierarchy.BuildContext). Its errors say
// what to run instead: they wrap hierarchy.ErrInexact for weights whose
// sums the hierarchy cannot hold exactly, and hierarchy.ErrTooManyShortcuts
// for graphs whose contraction gives up.
func BuildHierarchy(ctx context.Context, g *graph.CSR, threads int) (*hierarchy.Hierarchy, error) {
	h, err := hierarchy.BuildContext(ctx, g, hierarchy.Options{Workers: threads})
	switch {
	case errors.Is(err, hierarchy.ErrInexact):
		return nil, fmt.Errorf("cpu: ch: %w; the hierarchy is exact only for integer weights and float weights whose sums float64 holds; use dijkstra", err)
	case errors.Is(err, hierarchy.ErrTooManyShortcuts):
		return nil, fmt.Errorf("cpu: ch: %w: the graph has no hierarchy to find; use dijkstra", err)
	case err != nil:
		return nil, fmt.Errorf("cpu: ch: %w", err)
	}
	return h, nil
}

// hierarchyOf is e's hierarchy (WithHierarchy), checked against g, or one
// of g built now on threads goroutines.
func (e *Engine) hierarchyOf(ctx context.Context, g *graph.CSR, threads int) (*hierarchy.Hierarchy, error) {
	if e.hier == nil {
		return BuildHierarchy(ctx, g, threads)
	}
	if e.hier.NumVertices() != g.NumVertices {
		return nil, fmt.Errorf("cpu: ch: a hierarchy of %d vertices for a graph of %d", e.hier.NumVertices(), g.NumVertices)
	}
	return e.hier, nil
}

// prepareCH builds (or takes, e's WithHierarchy) the hierarchy of g and
// returns e's runner over it.
func prepareCH(ctx context.Context, e *Engine, g *graph.CSR, req graph.Request, threads int) (graph.Runner, error) {
	if req.WithPredecessors && (len(req.StopAt) == 0 || req.Targets != nil) {
		return nil, errCHPredecessors
	}
	h, err := e.hierarchyOf(ctx, g, threads)
	if err != nil {
		return nil, err
	}
	switch g.Type {
	case graph.DistInt32:
		return newCHRunner[int32](e, g, req, threads, h)
	case graph.DistInt64:
		return newCHRunner[int64](e, g, req, threads, h)
	case graph.DistFloat32:
		return newCHRunner[float32](e, g, req, threads, h)
	default:
		return newCHRunner[float64](e, g, req, threads, h)
	}
}

// chWork is one worker's PHAST query and the int64 row it sweeps into.
type chWork struct {
	query *hierarchy.Query
	row   []int64
}

func newCHRunner[D graph.Number](e *Engine, g *graph.CSR, req graph.Request, threads int, h *hierarchy.Hierarchy) (*runner[D], error) {
	r, err := newRunner[D](e, g, req, graph.CH, threads)
	if err != nil {
		return nil, err
	}
	n := g.NumVertices
	r.describe = fmt.Sprintf("ch (contraction hierarchy of %d arcs, %d shortcuts; one PHAST sweep per source)", h.Arcs(), h.Shortcuts())
	works := &sync.Pool{New: func() any { return &chWork{query: h.NewQuery(), row: make([]int64, n)} }}
	r.solve = func(_ *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
		w := works.Get().(*chWork)
		defer works.Put(w)
		if pred != nil {
			return solveCHPaths(h, w.query, src, req.StopAt, dist, pred)
		}
		if err := w.query.DistancesFrom(src, w.row); err != nil {
			return fmt.Errorf("cpu: ch: %w", err)
		}
		fromHierarchy(h, w.row, dist)
		return nil
	}
	r.workBytes += 3 * 8 * int64(n) // the row, and the query's two distances by rank
	if req.Targets != nil && r.nearestK == 0 {
		// Some targets' columns: the bucket algorithm, one backward
		// search per target here, then one upward search per row.
		buckets, err := h.NewBuckets(req.Targets, threads)
		if err != nil {
			return nil, fmt.Errorf("cpu: ch: %w", err)
		}
		r.describe = fmt.Sprintf("ch (contraction hierarchy of %d arcs, %d shortcuts; the buckets of %d targets, one upward search per source)", h.Arcs(), h.Shortcuts(), len(req.Targets))
		rows := &sync.Pool{New: func() any { return &chWork{query: h.NewQuery(), row: make([]int64, len(req.Targets))} }}
		r.solveCols = func(src graph.VertexID, dist []D) error {
			w := rows.Get().(*chWork)
			defer rows.Put(w)
			if err := w.query.DistancesTo(buckets, src, w.row); err != nil {
				return fmt.Errorf("cpu: ch: %w", err)
			}
			fromHierarchy(h, w.row, dist)
			return nil
		}
	}
	return r, nil
}

// fromHierarchy converts a row of the hierarchy's distances into dist.
func fromHierarchy[D graph.Number](h *hierarchy.Hierarchy, row []int64, dist []D) {
	inf := graph.Infinity[D]()
	var zero D
	switch any(zero).(type) {
	case float32, float64:
		for v, d := range row {
			if d == hierarchy.Infinity {
				dist[v] = inf
			} else {
				dist[v] = D(h.Float(d))
			}
		}
	default:
		for v, d := range row {
			if d == hierarchy.Infinity {
				dist[v] = inf
			} else {
				dist[v] = D(d)
			}
		}
	}
}

// solveCHPaths fills the row of src with the distances to the stop-at
// targets and the predecessors along a shortest path to each, Infinity
// and -1 elsewhere. Where paths cross, a later one's predecessors
// replace an earlier one's: both lead back to src along shortest paths.
func solveCHPaths[D graph.Number](h *hierarchy.Hierarchy, q *hierarchy.Query, src graph.VertexID, targets []graph.VertexID, dist []D, pred []graph.VertexID) error {
	inf := graph.Infinity[D]()
	fill(dist, inf)
	fill(pred, -1)
	one := []int64{0}
	cell := make([]D, 1)
	for _, t := range targets {
		d, path, err := q.Path(src, t)
		if err != nil {
			return fmt.Errorf("cpu: ch: %w", err)
		}
		if d == hierarchy.Infinity {
			continue
		}
		one[0] = d
		fromHierarchy(h, one, cell)
		dist[t] = cell[0]
		for i := 0; i+1 < len(path); i++ {
			pred[path[i+1]] = path[i]
		}
	}
	dist[src] = 0
	return nil
}
