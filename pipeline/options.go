package pipeline

import (
	"errors"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// ErrInvalid is wrapped by errors in a request: an unknown source, an
// option the algorithm cannot honour, a layout name that does not exist.
var ErrInvalid = errors.New("invalid request")

// ErrUnavailable is wrapped when the requested engine cannot run here.
var ErrUnavailable = errors.New("engine unavailable")

// Options describe one request: the question asked (Query), what answers
// it (Resources), where the run reports, and the hooks of tests. Prepare
// resolves them once on a graph into a Prepared query, which runs them.
// The zero value asks auto on the auto engine for every source, in the
// pairs layout. Query's and Resources' fields are promoted: opt.Layout is
// opt.Query.Layout.
type Options struct {
	Query
	Resources

	// Progress, when set, is called after every block with the sources done.
	Progress func(done, total int64)
	// Log, when set, receives the choices made (--verbose).
	Log io.Writer
	// Notice, when set, receives one-line notices a user should see even
	// without --verbose, such as the fallback from the GPU to the CPU.
	Notice io.Writer

	hooks
}

// Query is the question of a request: what is computed, from where to
// where, and in which layout. Every surface (the CLI's flags, a Flight
// ticket, Python's keywords) names the same fields (design.md, "Queries
// narrower than all pairs").
type Query struct {
	// Algorithm defaults to graph.Auto.
	Algorithm graph.Algorithm
	// Delta is the bucket width of delta-stepping; 0 chooses from the weights.
	Delta float64
	// Layout defaults to arrowio.LayoutPairs.
	Layout arrowio.Layout
	// Sources are external ids as text; nil means every vertex in vertex
	// order. A source named more than once runs once, at its first place,
	// so its rows appear once in the result.
	Sources []string
	// Targets are external ids as text: the only columns of the answer, in
	// this order (the matrix layout becomes the sources × targets
	// origin–destination matrix); nil means every vertex.
	Targets []string
	// Cutoff, when HasCutoff, makes distances above it unreachable: left
	// out of pairs, +Inf or null in matrix, outside R in stats.
	Cutoff    float64
	HasCutoff bool
	// K, when above 0, keeps per source the K nearest other vertices (of
	// Targets, within Cutoff), ties by vertex order, as pairs with a rank
	// column from 1.
	K int
	// Reverse runs on the transposed graph: distances along incoming arcs,
	// row (source s, target v, d(v → s)); a predecessor is then the vertex
	// after v on its path to s.
	Reverse bool
	// WithPaths adds the path column (pairs layout): the vertices from the
	// source to the target. It is refused when the output's estimated size
	// is above Resources.MaxOutput (checkPaths).
	WithPaths bool
	// MatrixType is the type of a matrix's values (matrixtype.go): "" for
	// the distance type, MatrixFloat for float32 where exact else float64,
	// or a distance type's name, refused where it cannot hold every
	// distance exactly. Other layouts ignore it.
	MatrixType string
	// WithPredecessors adds the predecessor column (pairs layout).
	WithPredecessors bool
	// Betweenness are the options of the betweenness layout (networkx's
	// normalized, endpoints and k); other layouts ignore them.
	Betweenness BetweennessOptions
}

// Resources are what answers a request and within which bounds: the
// engine and its devices, memory, threads and tuning, a hierarchy built
// ahead, and the allocator of the results. They change how fast an
// answer comes, never the answer (an Index makes auto run ch, which is
// exact).
type Resources struct {
	// Engine is "auto" (default: the GPU where one is usable, else the CPU),
	// "cpu" or "gpu".
	Engine string
	// Threads bounds CPU parallelism; 0 means every core.
	Threads int
	// MemBudget bounds the memory of the blocks in flight (bytes); 0 means
	// DefaultMemBudget on the CPU and 80 % of free device memory on a GPU.
	MemBudget int64
	// MaxBlock caps the sources per block; 0 means no cap beyond the budget.
	MaxBlock int
	// MaxOutput bounds the estimated output of Query.WithPaths, in bytes;
	// 0 means DefaultMaxOutput.
	MaxOutput int64
	// Index, when set, is the contraction hierarchy of the graph
	// (hierarchy.Read of an index file, checked against the graph's CSR)
	// that the algorithm ch uses instead of building one; auto with an
	// index runs ch. Reverse runs take its Reverse.
	Index *hierarchy.Hierarchy
	// Allocator for the result records; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
	// GPU, when set, is the GPU engine of runs on graphs that keep none of
	// their own (LoadGraph built their CSR on the CPU), instead of one
	// opened and closed for the run: a server's (NewSharedGPU).
	GPU graph.SharedGPU
	// Devices are the GPU ordinals a GPU run uses, one engine each fed
	// from one queue of source blocks (package gpu/devices); nil means every
	// device. MemBudget then bounds each device's blocks.
	Devices []int
	// GPUs, when set, are a server's GPUs (one engine per device,
	// NewGPUPool): a GPU run takes one idle device of them and runs whole
	// on it, instead of GPU or Devices.
	GPUs graph.GPUPool
	// Tune is the GPU engine's tuning: comma-separated KEY=VALUE settings
	// that change its defaults (pathctl --tune; docs/engine.md lists every
	// key, its default and the measurement that chose it). "" runs the
	// defaults; a bad setting is an ErrInvalid naming it (CheckTune checks
	// a spec alone). The CPU engine ignores it.
	Tune string
	// Driver, when set, is the GPU side the run opens its devices through
	// instead of the registered one (RegisterGPU): tests pass fake devices.
	Driver graph.GPU
}

// hooks are what tests replace or observe in a request; the zero value
// is what every front end runs.
type hooks struct {
	// resolved, when set, is called each time Prepare resolves a request
	// (its sources and targets looked up), so that a test counts them.
	resolved func()
}

// DefaultMemBudget is the CPU engine's block budget when Resources.MemBudget is 0.
const DefaultMemBudget = graph.DefaultMemBudget

// Summary reports what a run did.
type Summary struct {
	Engine    string
	Algorithm string
	// Sources is the number of sources run; Pairs is Sources × vertices;
	// Rows is the number of result rows emitted.
	Sources, Pairs, Rows int64
	Blocks               int
	Elapsed              time.Duration
}
