package pipeline

// A request resolved once: Prepare turns Options into a Prepared query
// on one graph, as database/sql's Prepare turns a statement into a Stmt,
// and every front end (the CLI's commands, the Flight service, verify,
// the benchmark) reads what it needs before the run from it and runs it.

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// Prepared is a request resolved on one graph. Prepare fills the
// defaults of the options and checks them, looks the sources and targets
// up once, refuses paths above Resources.MaxOutput, and fixes the
// result's schema, column vertices and distance type. Its accessors
// answer what a front end needs before the run (the schema of a stream,
// the vertices of a matrix's columns, the size of the output, the engine
// and algorithm) without resolving anything again, and Run computes it.
//
// Run does not change a Prepared: it may run again, and several runs of
// one Prepared may run at once where the graph's engine allows (as
// several runs of one Graph do).
type Prepared struct {
	g   *Graph
	opt Options // with its defaults filled (normalize)
	// sources are the distinct sources in run order: every vertex for
	// nil Query.Sources, a betweenness sample where one is asked for.
	sources []graph.VertexID
	// targets are Query.Targets resolved, in their order, repeats kept;
	// nil for every vertex.
	targets []graph.VertexID
	// sampled are the sources the betweenness scaling counts as a sample
	// (nil: every vertex), hops whether betweenness counts hops.
	sampled []graph.VertexID
	hops    bool
	dist    graph.DistType
	// values is the type of the values written: dist, or a matrix's
	// Query.MatrixType (matrixtype.go).
	values graph.DistType
	schema *arrow.Schema
}

// Prepare resolves opt on g: see Prepared. Errors wrap ErrInvalid for a
// request no run of g can answer (an unknown source wraps
// ErrUnknownSource, an unknown target ErrUnknownTarget, paths above the
// output bound ErrPathsTooLarge); what only a run finds (a negative
// cycle, an engine that cannot open) is Run's error.
func Prepare(g *Graph, opt Options) (*Prepared, error) {
	// 1. Fill the defaults and check what needs no lookup.
	opt, err := normalize(g, opt)
	if err != nil {
		return nil, err
	}
	if opt.resolved != nil {
		opt.resolved()
	}
	q := &Prepared{g: g, opt: opt, dist: g.resultType(opt.Algorithm)}
	// 2. Look the sources and targets up.
	if opt.Layout.IsBetweenness() {
		if err := resolveBetweenness(q); err != nil { // betweenness.go
			return nil, err
		}
	} else {
		if q.sources, err = g.resolveSources(opt.Sources); err != nil {
			return nil, err
		}
		if q.targets, err = g.resolveTargets(opt.Targets); err != nil {
			return nil, err
		}
	}
	// 3. Refuse paths too large to write, and fix the schema.
	if err := checkPaths(g, opt, len(q.sources)); err != nil {
		return nil, err
	}
	if q.values, err = g.matrixType(opt); err != nil { // matrixtype.go
		return nil, err
	}
	q.schema = arrowio.ShapedSchema(opt.Layout, g.Table.Vertices, q.values, opt.WithPredecessors, shape(opt, q.targets))
	return q, nil
}

// Graph is the graph q runs on.
func (q *Prepared) Graph() *Graph { return q.g }

// Options are q's options with their defaults filled in (the algorithm,
// engine and layout named, K bounded by the vertices, an algorithm ch
// routed to the CPU engine, Log and Notice io.Discard where unset).
// Preparing them again on the same graph gives the same query.
func (q *Prepared) Options() Options { return q.opt }

// Sources are the distinct sources q runs, in run order: the rows of a
// matrix or stats result. The slice is q's; do not change it.
func (q *Prepared) Sources() []graph.VertexID { return q.sources }

// Targets are the columns q asked for, in their given order with their
// repeats, or nil for every vertex. The slice is q's; do not change it.
func (q *Prepared) Targets() []graph.VertexID { return q.targets }

// Schema is the schema of every record Run emits.
func (q *Prepared) Schema() *arrow.Schema { return q.schema }

// Columns are the vertices a matrix result's columns stand for, in column
// order: every vertex, or the targets in their given order (the vertices
// file beside a matrix, and the header of a matrix written as CSV).
func (q *Prepared) Columns() *arrowio.Vertices {
	if q.targets == nil {
		return q.g.Table.Vertices
	}
	return q.g.Table.Vertices.Subset(q.targets)
}

// Slice is q for its sources [first, end) alone, in their order: a
// block of a dataset, whose schema and columns are q's. It resolves
// nothing again. The nearest and betweenness layouts answer over every
// source at once: slicing them changes the answer.
func (q *Prepared) Slice(first, end int) *Prepared {
	return q.withSources(q.sources[first:end:end])
}

// withSources is q from sources (distinct vertices) instead of its own.
func (q *Prepared) withSources(sources []graph.VertexID) *Prepared {
	s := *q
	s.sources = sources
	s.opt.Sources = make([]string, len(sources))
	for i, v := range sources {
		s.opt.Sources[i] = q.g.vertexName(v)
	}
	return &s
}

// OnCPU is q on the CPU engine: what auto runs where no GPU is usable.
func (q *Prepared) OnCPU() *Prepared {
	s := *q
	s.opt.Engine = "cpu"
	return &s
}

// normalize fills the defaults of opt and checks what can be checked
// without looking an id up.
func normalize(g *Graph, opt Options) (Options, error) {
	if opt.Algorithm == "" {
		opt.Algorithm = graph.Auto
	}
	if _, err := graph.ParseAlgorithm(string(opt.Algorithm)); err != nil {
		return opt, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch opt.Engine {
	case "":
		opt.Engine = "auto"
	case "auto", "cpu", "gpu":
	default:
		return opt, fmt.Errorf("%w: unknown engine %q (want auto, cpu or gpu)", ErrInvalid, opt.Engine)
	}
	if opt.Layout == "" {
		opt.Layout = arrowio.LayoutPairs
	}
	if _, err := arrowio.ParseLayout(string(opt.Layout)); err != nil {
		return opt, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if opt.WithPredecessors && opt.Algorithm == graph.BFSLevel {
		return opt, fmt.Errorf("%w: bfs-level stores no predecessors; the bfs algorithm does", ErrInvalid)
	}
	if opt.WithPredecessors && opt.Layout != arrowio.LayoutPairs {
		return opt, fmt.Errorf("%w: predecessors are part of the pairs layout only, not %s", ErrInvalid, opt.Layout)
	}
	if err := checkQuery(opt); err != nil {
		return opt, err
	}
	if err := checkMatrixType(opt.MatrixType); err != nil {
		return opt, err
	}
	opt.K = clampNearest(g, opt)
	if opt.MaxBlock < 0 {
		return opt, fmt.Errorf("%w: a block of %d sources", ErrInvalid, opt.MaxBlock)
	}
	if opt.Allocator == nil {
		opt.Allocator = memory.DefaultAllocator
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Notice == nil {
		opt.Notice = io.Discard
	}
	return routeCH(g, opt) // ch runs on the CPU engine (ch.go)
}

// clampNearest is opt.K bounded by what a source can have nearest: the
// other vertices, or the targets where they are given. Every allocation of
// the k nearest (a block of sources × K cells, on the host and on a
// device) is sized from it, so a K of 2^62 on a graph of 4 vertices asks
// for what a K of 3 does, and returns the same rows.
func clampNearest(g *Graph, opt Options) int {
	if opt.K <= 0 {
		return opt.K
	}
	limit := max(g.NumVertices()-1, 1)
	if opt.Targets != nil {
		limit = min(limit, max(len(opt.Targets), 1))
	}
	return min(opt.K, limit)
}

// ErrPathsTooLarge is wrapped, beside ErrInvalid, by the refusal of paths
// whose estimated output is above Resources.MaxOutput.
var ErrPathsTooLarge = errors.New("paths too large")

// DefaultMaxOutput is the bound on the estimated output of paths when
// Resources.MaxOutput is 0 (pathctl run --max-output raises it; the Flight
// server keeps it).
const DefaultMaxOutput int64 = 1 << 30

// checkPaths refuses paths whose output would be above opt.MaxOutput,
// saying how large it would be. The estimate is a lower bound: the rows
// (sources × the row's width) times the bytes each holds at least.
func checkPaths(g *Graph, opt Options, sources int) error {
	if !opt.WithPaths {
		return nil
	}
	// A row is as wide as the graph, unless targets or the k nearest
	// narrow it to their count (which may be no narrower than the graph:
	// a K of 10^9, every vertex as a target). A cutoff does not narrow the
	// estimate: how many vertices lie within it is known only once run.
	targets := -1
	if opt.Targets != nil {
		targets = len(opt.Targets)
	}
	width := answerWidth(g.NumVertices(), targets, opt.K)
	// Each row holds two ids, a distance, a path offset and a path of at
	// least two ids.
	id := int64(8)
	if g.Table.Vertices.IsString() {
		id = 16
	}
	limit := opt.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	rows := int64(sources) * int64(width) // below 2^62: both are int32 counts
	bytes := float64(rows) * float64(4*id+8+4)
	if bytes <= float64(limit) {
		return nil
	}
	return fmt.Errorf("%w: %w: %d sources × %d vertices: %d rows, at least %s of output, above the limit of %s; ask for fewer sources, some targets or the k nearest",
		ErrInvalid, ErrPathsTooLarge, sources, width, rows, outputSize(bytes), outputSize(float64(limit)))
}

// answerWidth is the columns of one source's answer among n vertices:
// every vertex, or the targets where given (targets >= 0: a column each,
// repeats included, so it may pass n), and with the k nearest (k > 0) at
// most the source's own row and its k nearest.
func answerWidth(n, targets, k int) int {
	width := n
	if targets >= 0 {
		width = targets
	}
	if k > 0 {
		width = min(width, k+1)
	}
	return width
}

// outputSize is bytes in GiB, in MiB below one GiB, and in bytes below
// a tenth of a MiB (where 0.0 would read as nothing).
func outputSize(bytes float64) string {
	switch {
	case bytes >= 1<<30:
		return fmt.Sprintf("%.1f GiB", bytes/(1<<30))
	case bytes >= 0.1*(1<<20):
		return fmt.Sprintf("%.1f MiB", bytes/(1<<20))
	}
	return fmt.Sprintf("%.0f bytes", bytes)
}

// shape is the result shape of opt with targets resolved.
func shape(opt Options, targets []graph.VertexID) arrowio.Shape {
	var s arrowio.Shape
	if targets != nil && opt.Layout == arrowio.LayoutMatrix {
		s.Targets = len(targets)
	}
	s.Rank = opt.K > 0
	s.Paths = opt.WithPaths
	return s
}
