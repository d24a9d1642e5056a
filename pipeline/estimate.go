package pipeline

// The size of a result before it is computed: what `pathctl run
// --dry-run` prints and what the free-space check of the output compares
// against the destination's file system.

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
)

// Estimate is the shape and size of the result of a request, known
// without running it.
type Estimate struct {
	Layout   arrowio.Layout
	DistType graph.DistType
	// Vertices, Sources and Targets are the graph's vertices, the
	// distinct sources run and the columns of a row (every vertex, the
	// targets, or the k nearest and the source itself).
	Vertices, Sources, Targets int
	// Rows is the result's rows. It is exact for matrix, stats and
	// betweenness; for pairs and nearest it is the bound of every pair
	// reachable (unreachable pairs are left out, so the result is smaller
	// on a graph that is not strongly connected, or with a cutoff).
	Rows int64
	// Bytes is the size of the result's columns written as Arrow IPC,
	// with a margin for the schema, the batches' headers and padding: for
	// matrix, stats and betweenness an upper bound, for pairs that of
	// every pair reachable. A path counts as two ids (the least it holds),
	// so with paths it is a lower bound of those rows. Parquet, which
	// compresses, writes less.
	Bytes int64
	// CSVBytes bounds the same result written as CSV: every number at its
	// type's widest text.
	CSVBytes int64
	// Exact says that Rows is exact, not a bound.
	Exact bool
}

// ipcMargin is the bytes an Arrow IPC result adds to its columns at
// most, per record batch (the message header, 64-byte padding of up to
// eight buffers) and once (the schema and the file's footer).
const (
	ipcMarginPerBatch = 1 << 10
	ipcMarginOnce     = 64 << 10
)

// Estimate is the shape and size of the result Run produces, computed
// without running. Paths above Resources.MaxOutput were refused by
// Prepare; below it, Estimate says how large they are.
func (q *Prepared) Estimate() Estimate {
	g, opt, targets := q.g, q.opt, q.targets
	sources := len(q.sources)
	n := g.NumVertices()
	est := Estimate{Layout: opt.Layout, DistType: q.dist, Vertices: n, Sources: sources}
	given := -1
	if targets != nil {
		given = len(targets)
		if opt.K > 0 {
			given = len(graph.Distinct(targets)) // a vertex is one of the k nearest once
		}
	}
	est.Targets = answerWidth(n, given, opt.K)
	switch opt.Layout {
	case arrowio.LayoutMatrix, arrowio.LayoutStats:
		est.Rows, est.Exact = int64(sources), true
	case arrowio.LayoutBetweenness:
		est.Rows, est.Exact = int64(n), true
	case arrowio.LayoutEdgeBetweenness:
		est.Rows, est.Exact = g.CSR.NumEdges(), true
		if g.CSR.Undirected {
			est.Rows /= 2 // one row per edge, of two arcs
		}
	case arrowio.LayoutNearest:
		est.Rows = int64(n)
	default:
		est.Rows = int64(sources) * int64(est.Targets) // below 2^62: both are int32 counts
	}
	if opt.Layout.IsBetweenness() {
		est.DistType = graph.DistFloat64
	}
	if opt.Layout == arrowio.LayoutMatrix {
		est.DistType = q.values
	}
	schema := arrowio.ShapedSchema(opt.Layout, g.Table.Vertices, est.DistType, opt.WithPredecessors, shape(opt, targets))
	idBytes := maxIDBytes(g.Table.Vertices)
	var row, csvRow float64
	for _, f := range schema.Fields() {
		b, c := fieldBytes(f, idBytes)
		row, csvRow = row+b, csvRow+c
	}
	batches := float64(max(sources, 1)) // at most one batch a source
	est.Bytes = clampBytes(float64(est.Rows)*row + batches*ipcMarginPerBatch + ipcMarginOnce)
	header := float64(len(strings.Join(schemaNames(schema), ","))) + 1
	if opt.Layout == arrowio.LayoutMatrix {
		header += float64(est.Targets) * float64(max(2*idBytes+3, 21)) // a matrix's CSV header names its columns' vertices
	}
	est.CSVBytes = clampBytes(float64(est.Rows)*csvRow + header)
	return est
}

// clampBytes is x rounded up, at most MaxInt64.
func clampBytes(x float64) int64 {
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Ceil(x))
}

func schemaNames(s *arrow.Schema) []string {
	names := make([]string, len(s.Fields()))
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// maxIDBytes is the bytes of the longest string id of v (0 for integer
// ids): a string column of ids is bounded by it.
func maxIDBytes(v *arrowio.Vertices) int {
	longest := 0
	for _, s := range v.Strings {
		longest = max(longest, len(s))
	}
	return longest
}

// fieldBytes is the bytes one value of f takes in Arrow (its validity
// bit included where f is nullable) and in CSV (its widest text and a
// separator), with string ids of idBytes bytes at most.
func fieldBytes(f arrow.Field, idBytes int) (arrowBytes, csvBytes float64) {
	validity := 0.0
	if f.Nullable {
		validity = 1.0 / 8
	}
	switch t := f.Type.(type) {
	case *arrow.FixedSizeListType:
		elem, text := fieldBytes(t.ElemField(), idBytes)
		size := float64(t.Len())
		return size*elem + validity, size * text
	case *arrow.ListType:
		// A path holds two ids at least: the source and the target.
		elem, text := fieldBytes(t.ElemField(), idBytes)
		return 4 + 2*elem + validity, 2*text + 2
	case *arrow.StringType:
		return 4 + float64(idBytes) + validity, float64(2*idBytes) + 3 // quoted, quotes doubled
	case *arrow.LargeStringType:
		return 8 + float64(idBytes) + validity, float64(2*idBytes) + 3
	case arrow.FixedWidthDataType:
		return float64(t.BitWidth())/8 + validity, float64(textWidth(t)) + 1
	}
	return 8 + validity, 25
}

// textWidth is the most characters a value of t takes as CSV text.
func textWidth(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8, arrow.UINT8:
		return 4
	case arrow.INT16, arrow.UINT16:
		return 6
	case arrow.INT32, arrow.UINT32:
		return 11
	case arrow.FLOAT32:
		return 16 // -1.2345678e+38, or Inf
	case arrow.BOOL:
		return 5
	}
	return 24 // int64, uint64, float64: -9223372036854775808, -1.2345678901234567e+308
}

// Plan says which engine and algorithm Run takes, without opening a
// device: the CPU engine's choice of auto is resolved as Run would; a GPU
// is named as "gpu (if usable)" where only opening it would tell.
func (q *Prepared) Plan() (engine, algorithm string) {
	g, opt, sources := q.g, q.opt, len(q.sources)
	onGPU := string(opt.Algorithm)
	if opt.Layout.IsBetweenness() { // betweenness.go, betweenness_gpu.go
		onGPU = fmt.Sprintf("betweenness (Brandes, %s per source)", betweennessMethod(q.hops))
		if opt.Layout == arrowio.LayoutEdgeBetweenness {
			onGPU = "edge " + onGPU
		}
	}
	g.mu.Lock()
	device, gpuErr := g.device, g.gpuErr
	g.mu.Unlock()
	onCPU := func() string {
		if opt.Algorithm == graph.CH {
			if opt.Index != nil {
				return "ch (contraction hierarchy from --index)"
			}
			if h, _ := g.KeptHierarchy(); h != nil {
				return "ch (the contraction hierarchy the graph keeps)"
			}
			return "ch (contraction hierarchy, built first)"
		}
		if opt.Layout.IsBetweenness() {
			return onGPU
		}
		if opt.Layout == arrowio.LayoutNearest {
			return string(opt.Algorithm)
		}
		req := graph.Request{Algorithm: opt.Algorithm, WithPredecessors: opt.WithPredecessors || opt.WithPaths, Delta: opt.Delta, Threads: opt.Threads, Cutoff: opt.Cutoff, HasCutoff: opt.HasCutoff}
		return cpu.New(cpu.WithThreads(opt.Threads)).Resolve(g.CSR, req)
	}
	switch {
	case opt.Engine == "cpu", opt.Algorithm == graph.CH:
		return "cpu", onCPU()
	case opt.Engine == "gpu" && device != nil:
		return "gpu", onGPU
	case opt.Engine == "gpu":
		return "gpu (if usable)", onGPU
	case sources > 0 && sources < minGPUSources:
		return fmt.Sprintf("cpu (%d sources: fewer than %d, faster than a GPU launch)", sources, minGPUSources), onCPU()
	case device != nil:
		return "gpu", onGPU
	case gpuErr != nil:
		return "cpu (no usable GPU)", onCPU()
	}
	if opt.Layout.IsBetweenness() {
		return "gpu (if usable), else cpu", onGPU
	}
	return "gpu (if usable), else cpu", fmt.Sprintf("%s on a GPU; on the CPU: %s", opt.Algorithm, onCPU())
}
