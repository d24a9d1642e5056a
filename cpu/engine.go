package cpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/recovered"
)

// Engine is the parallel CPU engine. It is safe for concurrent use; each
// Prepare returns an independent Runner.
type Engine struct {
	threads int
	// innerMinArcs is the graph size (arcs) from which one source's loop is
	// split over helper goroutines when a block has fewer sources than
	// threads; tests lower it to exercise that path on small graphs.
	innerMinArcs int64
	// hier, when set (WithHierarchy), is the hierarchy ch runners use
	// instead of building one (ch.go).
	hier *hierarchy.Hierarchy
}

// The CPU engine plugs into the engine seam (graph/seam.go) as it is: its
// runners name their kernel, and have no optional interface beside.
var (
	_ graph.Engine        = (*Engine)(nil)
	_ graph.Runner        = (*runner[int32])(nil)
	_ graph.Describer     = (*runner[float64])(nil)
	_ graph.NarrowRunner  = (*runner[float32])(nil)
	_ graph.NearestFinder = (*Engine)(nil)
)

// Option configures an Engine.
type Option func(*Engine)

// WithThreads sets the number of worker goroutines; n <= 0 keeps the
// default, runtime.GOMAXPROCS(0).
func WithThreads(n int) Option {
	return func(e *Engine) {
		if n > 0 {
			e.threads = n
		}
	}
}

// defaultInnerMinArcs: below this many arcs one source is not worth
// splitting (a round's goroutine start-up would cost more than its work).
const defaultInnerMinArcs = 1 << 15

// New returns a CPU engine.
func New(opts ...Option) *Engine {
	e := &Engine{threads: runtime.GOMAXPROCS(0), innerMinArcs: defaultInnerMinArcs}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Name is "cpu".
func (e *Engine) Name() string { return "cpu" }

// Threads is the number of worker goroutines a Run uses at most.
func (e *Engine) Threads() int { return e.threads }

// solveFunc computes one source into dist (and pred when non-nil), the
// source's row of the output block.
type solveFunc[D graph.Number] func(ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error

// runner implements graph.Runner for distances of type D.
type runner[D graph.Number] struct {
	n    int
	cols []graph.VertexID // Request.Targets: the columns of a block's rows, nil for every vertex
	// isCol marks the vertices of cols (or of Request.StopAt, whose
	// rows are full), numCols of them, where the kernel (auto's
	// searches, which settle vertices in distance order) stops once it
	// has settled them all; nil elsewhere.
	isCol   []bool
	numCols int
	// auto is the kernel auto picked; nearestK, when positive, the k
	// nearest its searches select (SelectNearest, knearest.go).
	auto     autoChoice
	nearestK int
	cut      D // Request.Cutoff in D; Infinity without one
	hasCut   bool
	offsets  []graph.EdgeOffset
	targets  []graph.VertexID
	weights  []D // nil for the hop-count kernels
	maxW     D

	algo     graph.Algorithm
	describe string
	solve    solveFunc[D]
	// solveCols, when set, computes a row of the targets' columns
	// straight (ch's buckets), instead of solve into a full row.
	solveCols func(src graph.VertexID, row []D) error
	threads   int
	innerMin  int64
	withPred  bool
	// roundF32 is Request.RoundFloat32: the rows are a float32 result,
	// whose k nearest the host chooses on the rounded rows.
	roundF32    bool
	workBytes   int64 // per-source working memory besides the output row
	delta       D
	deltaBucket int64 // number of cyclic buckets of delta-stepping

	pool sync.Pool // *workspace[D]
}

// Prepare checks g against req and returns a Runner for it. req.Algorithm
// may be graph.Auto: Prepare resolves it to one of the kernels of auto.go,
// which the runner's Describe names (see Resolve). Negative weights under an algorithm
// other than bellman-ford, bfs or bfs-level give a *graph.NegativeWeightError;
// predecessors under bfs-level an error.
func (e *Engine) Prepare(ctx context.Context, g *graph.CSR, req graph.Request) (graph.Runner, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkCSR(g); err != nil {
		return nil, err
	}
	algo := req.Algorithm
	if algo == "" {
		algo = graph.Auto
	}
	if _, err := graph.ParseAlgorithm(string(algo)); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	if algo == graph.BFSLevel && req.WithPredecessors {
		return nil, errors.New("cpu: bfs-level stores no predecessors; use bfs")
	}
	if algo == graph.CH && req.WithPredecessors && (len(req.StopAt) == 0 || req.Targets != nil) {
		return nil, errCHPredecessors // before the weights, as bfs-level's
	}
	if g.HasNegative() && !algo.AcceptsNegative() && !algo.CountsHops() && algo != graph.Auto {
		return nil, g.NegativeWeight(algo)
	}
	threads := e.threads
	if req.Threads > 0 {
		threads = req.Threads
	}
	if algo == graph.CH {
		return prepareCH(ctx, e, g, req, threads)
	}
	if algo.CountsHops() || (algo == graph.Auto && !g.Weighted) {
		return newRunner[int32](e, g, req, algo, threads)
	}
	switch g.Type {
	case graph.DistInt32:
		return newRunner[int32](e, g, req, algo, threads)
	case graph.DistInt64:
		return newRunner[int64](e, g, req, algo, threads)
	case graph.DistFloat32:
		return newRunner[float32](e, g, req, algo, threads)
	default:
		return newRunner[float64](e, g, req, algo, threads)
	}
}

// Resolve describes in one line what Prepare runs for req on g, and why;
// for graph.Auto, the kernel it picks (the line --verbose prints).
func (e *Engine) Resolve(g *graph.CSR, req graph.Request) string {
	r, err := e.Prepare(context.Background(), g, req)
	if err != nil {
		return fmt.Sprintf("%s: %v", req.Algorithm, err)
	}
	defer r.Close()
	threads := e.threads
	if req.Threads > 0 {
		threads = req.Threads
	}
	return fmt.Sprintf("%s, sources spread over %d threads", r.(graph.Describer).Describe(), threads)
}

func checkCSR(g *graph.CSR) error {
	if g == nil {
		return errors.New("cpu: nil graph")
	}
	n := g.NumVertices
	if n < 0 || len(g.Offsets) != n+1 || g.Offsets[n] != int64(len(g.Targets)) {
		return fmt.Errorf("cpu: malformed CSR: %d vertices, %d offsets, %d targets", n, len(g.Offsets), len(g.Targets))
	}
	ok := false
	switch w := g.Weights.(type) {
	case []int32:
		ok = g.Type == graph.DistInt32 && len(w) == len(g.Targets)
	case []int64:
		ok = g.Type == graph.DistInt64 && len(w) == len(g.Targets)
	case []float32:
		ok = g.Type == graph.DistFloat32 && len(w) == len(g.Targets)
	case []float64:
		ok = g.Type == graph.DistFloat64 && len(w) == len(g.Targets)
	}
	if !ok {
		return fmt.Errorf("cpu: malformed CSR: weights %T for distance type %v and %d arcs", g.Weights, g.Type, len(g.Targets))
	}
	return nil
}

func newRunner[D graph.Number](e *Engine, g *graph.CSR, req graph.Request, algo graph.Algorithm, threads int) (*runner[D], error) {
	r := &runner[D]{
		n: g.NumVertices, offsets: g.Offsets, targets: g.Targets,
		algo: algo, threads: max(1, threads), innerMin: e.innerMinArcs, withPred: req.WithPredecessors, roundF32: req.RoundFloat32,
		cols: req.Targets, cut: graph.Infinity[D](), hasCut: req.HasCutoff,
	}
	for _, t := range slices.Concat(req.Targets, req.StopAt) {
		if t < 0 || int(t) >= g.NumVertices {
			return nil, fmt.Errorf("cpu: target %d outside [0, %d)", t, g.NumVertices)
		}
	}
	if req.HasCutoff {
		if req.Cutoff < 0 || req.Cutoff != req.Cutoff {
			return nil, fmt.Errorf("cpu: cutoff %v is negative or NaN", req.Cutoff)
		}
		r.cut = graph.CutoffOf[D](req.Cutoff)
	}
	if !algo.CountsHops() && (algo != graph.Auto || g.Weighted) {
		r.weights = graph.WeightsOf[D](g)
		for _, w := range r.weights {
			r.maxW = max(r.maxW, w)
		}
	}
	n := int64(r.n)
	size := int64(graph.TypeOf[D]().Size())
	list := 4 * n // one []int32 vertex list
	switch algo {
	case graph.Dijkstra:
		r.solve, r.describe = solveDijkstra[D], "dijkstra"
		r.workBytes = n*size + 4*n + 3*list // predist, flags, front, touched, next
	case graph.Delta:
		if err := r.setDelta(req.Delta); err != nil {
			return nil, err
		}
		r.solve = solveDelta[D]
		r.describe = fmt.Sprintf("delta (Δ = %v, %d cyclic buckets)", r.delta, r.deltaBucket)
		r.workBytes = n*size + 8*n + 4*list + r.deltaBucket*24 // predist, two flag sets, lists and bucket entries
	case graph.Edge:
		r.solve, r.describe = solveEdge[D], "edge"
	case graph.BFS:
		r.solve, r.describe = any(solveFunc[int32](solveBFS)).(solveFunc[D]), "bfs"
		r.workBytes = 8*n + 4*n + 2*list // packed (dist, pred), flags, lists
	case graph.BFSLevel:
		r.solve, r.describe = any(solveFunc[int32](solveBFSLevel)).(solveFunc[D]), "bfs-level"
		r.workBytes = 4*n + 2*list // flags, lists
	case graph.BellmanFord:
		r.solve, r.describe = solveBellmanFord[D], "bellman-ford"
		r.workBytes = 4*n + 3*list
	case graph.Auto:
		kernel, why := autoKernel(g)
		r.describe, r.auto = why, kernel
		stop := r.cols
		if stop == nil {
			stop = req.StopAt
		}
		if stop != nil && kernel != autoBellmanFord {
			r.isCol = make([]bool, r.n)
			for _, t := range stop {
				if !r.isCol[t] {
					r.isCol[t] = true
					r.numCols++
				}
			}
			r.describe += "; each search stops once it has settled every target"
		}
		switch kernel {
		case autoBFS:
			r.solve = any(solveFunc[int32](solveQueueBFS)).(solveFunc[D])
			r.workBytes = list
		case autoBellmanFord:
			r.solve = solveBellmanFord[D]
			r.workBytes = 4*n + 3*list
			if r.withPred {
				r.workBytes += n + list // the tight-arc walk of bellmanford.go
			}
		case autoDial:
			r.solve = solveDial[D]
			r.workBytes = list + 4*n + (int64(r.maxW)+1)*24
		default:
			r.solve = solveHeapDijkstra[D]
			r.workBytes = n*(size+4) + 4*n // heap entries and positions
		}
	}
	if r.withPred && algo != graph.BFS && algo != graph.BFSLevel && algo != graph.Auto {
		r.workBytes += n + list // the tight-arc walk that derives predecessors
	}
	if r.cols != nil {
		// The full row a worker solves into before gathering the
		// targets' columns, counted per source as the planner counts.
		r.workBytes += n * size
		if r.withPred {
			r.workBytes += 4 * n
		}
	}
	return r, nil
}

// DistType is the element type of the blocks Run fills.
func (r *runner[D]) DistType() graph.DistType { return graph.TypeOf[D]() }

// Describe names the kernel that runs (for auto, the one it picked and why).
func (r *runner[D]) Describe() string { return r.describe }

// BytesPerSource counts one output row (distances, and predecessors when
// asked for) and the algorithm's per-source working buffers.
func (r *runner[D]) BytesPerSource() int64 {
	w := int64(r.width())
	b := w*int64(graph.TypeOf[D]().Size()) + r.workBytes
	if r.withPred {
		b += 4 * w
	}
	return b
}

// Narrowed reports that the runner's blocks hold only the request's
// targets' columns and no distance above its cutoff (graph.NarrowRunner).
func (r *runner[D]) Narrowed() bool { return true }

// width is the number of cells in one row of the runner's blocks.
func (r *runner[D]) width() int {
	if r.nearestK > 0 {
		return r.nearestK
	}
	if r.cols != nil {
		return len(r.cols)
	}
	return r.n
}

// Close releases the pooled working buffers.
func (r *runner[D]) Close() error {
	r.pool = sync.Pool{}
	return nil
}

// Run fills out with the distances from every source of out.Sources. The
// sources are spread over the workers; when there are fewer sources than
// threads on a large graph, each source's loop is split too.
func (r *runner[D]) Run(ctx context.Context, out *graph.Block) error {
	if err := r.checkBlock(out); err != nil {
		return err
	}
	k := len(out.Sources)
	if k == 0 {
		return ctx.Err()
	}
	dist := graph.DistOf[D](out)
	workers := min(k, r.threads)
	par := 1
	if k < r.threads && int64(len(r.targets)) >= r.innerMin {
		par = r.threads / k
	}
	var (
		next  atomic.Int64
		stop  atomic.Bool
		errs  = make([]error, k)
		group sync.WaitGroup
	)
	var crashed recovered.Panic
	for range workers {
		group.Add(1)
		go func() {
			defer group.Done()
			defer crashed.Keep()
			ws := r.workspace(ctx, par)
			defer r.pool.Put(ws)
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= k {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					stop.Store(true)
					return
				}
				if err := r.solveRow(ws, out, dist, i); err != nil {
					errs[i] = err
					stop.Store(true)
					return
				}
			}
		}()
	}
	group.Wait()
	crashed.Repanic() // in the caller's goroutine, where its recover is
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// solveRow computes row i of out: straight into the row, or, for some
// targets' columns, into the worker's full row and gathered from it; a
// cutoff then clears what lies beyond it.
func (r *runner[D]) solveRow(ws *workspace[D], out *graph.Block, dist []D, i int) error {
	if r.nearestK > 0 {
		return r.solveNearest(ws, out, dist, i)
	}
	w := r.width()
	row := dist[i*w : (i+1)*w]
	var pred []graph.VertexID
	if out.Pred != nil {
		pred = out.Pred[i*w : (i+1)*w]
	}
	if r.cols == nil {
		if err := r.solve(ws, out.Sources[i], row, pred); err != nil {
			return err
		}
		if r.hasCut {
			graph.NarrowRow(row, pred, nil, r.cut, row, pred)
		}
		return nil
	}
	if r.solveCols != nil && pred == nil {
		if err := r.solveCols(out.Sources[i], row); err != nil {
			return err
		}
		if r.hasCut {
			graph.NarrowRow(row, nil, nil, r.cut, row, nil)
		}
		return nil
	}
	full := grow(&ws.full, r.n)
	var fullPred []graph.VertexID
	if pred != nil {
		fullPred = grow(&ws.fullPred, r.n)
	}
	if err := r.solve(ws, out.Sources[i], full, fullPred); err != nil {
		return err
	}
	graph.NarrowRow(full, fullPred, r.cols, r.cut, row, pred)
	return nil
}

func (r *runner[D]) checkBlock(out *graph.Block) error {
	if out == nil {
		return errors.New("cpu: nil block")
	}
	if out.Type != graph.TypeOf[D]() {
		return fmt.Errorf("cpu: block of %v distances for a runner of %v", out.Type, graph.TypeOf[D]())
	}
	if out.NumVertices != r.n {
		return fmt.Errorf("cpu: block over %d vertices for a graph of %d", out.NumVertices, r.n)
	}
	if r.nearestK > 0 {
		if out.Targets != nil || len(out.CellTargets) != len(out.Sources)*r.nearestK || out.Pred != nil {
			return fmt.Errorf("cpu: block of %d named cells for the %d nearest of %d sources", len(out.CellTargets), r.nearestK, len(out.Sources))
		}
	} else if len(out.Targets) != len(r.cols) || out.CellTargets != nil {
		return fmt.Errorf("cpu: block of %d target columns for a run of %d targets", len(out.Targets), len(r.cols))
	}
	dist, ok := out.Dist.([]D)
	if !ok || len(dist) != len(out.Sources)*r.width() {
		return fmt.Errorf("cpu: block distances %T of length %d for %d sources", out.Dist, len(dist), len(out.Sources))
	}
	if out.Pred != nil && len(out.Pred) != len(dist) {
		return fmt.Errorf("cpu: block has %d predecessors for %d distances", len(out.Pred), len(dist))
	}
	if out.Pred != nil && r.algo == graph.BFSLevel {
		return errors.New("cpu: bfs-level stores no predecessors; use bfs")
	}
	for _, s := range out.Sources {
		if s < 0 || int(s) >= r.n {
			return fmt.Errorf("cpu: source %d outside [0, %d)", s, r.n)
		}
	}
	return nil
}
