package benchsuite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// suiteGraph is a named graph of the benchmark suite: seeded, generated in
// process, run undirected. The parameters are those of bench/bench_gpu.py.
type suiteGraph struct {
	name, about string
	make        func(seed uint64) (*gen.EdgeList, error)
	// sample is the default source sample of the GPU rows (0: every
	// source), for graphs whose all-pairs run takes too long to time whole.
	sample int
}

// suite lists the named graphs in the order the table shows them.
var suite = []suiteGraph{
	{name: "rmat14", about: "R-MAT scale 14, edge factor 16 (Graph500 a=0.57 b=0.19 c=0.19)",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(14, 16, seed) }},
	{name: "rmat16", about: "R-MAT scale 16, edge factor 16",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(16, 16, seed) }},
	{name: "rmat18", about: "R-MAT scale 18, edge factor 16",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(18, 16, seed) }},
	{name: "rmat20", about: "R-MAT scale 20, edge factor 16", sample: 8192,
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.RMAT(20, 16, seed) }},
	{name: "grid128", about: "weighted 2-D grid 128×128, 4 neighbours",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Grid(128, 128, seed) }},
	{name: "grid256", about: "weighted 2-D grid 256×256, 4 neighbours",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Grid(256, 256, seed) }},
	{name: "uniform65536d16", about: "uniform random, 65,536 vertices, 16 edges per vertex",
		make: func(seed uint64) (*gen.EdgeList, error) { return gen.Uniform(65536, 16, seed) }},
}

// Names lists the suite's graphs, comma-separated, in table order.
func Names() string {
	names := make([]string, len(suite))
	for i, s := range suite {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func findSuite(name string) (suiteGraph, bool) {
	for _, s := range suite {
		if s.name == name {
			return s, true
		}
	}
	return suiteGraph{}, false
}

// graphName is the table name of a Graphs entry: a suite name, or the
// file's base name without extensions.
func graphName(entry string) string {
	if _, ok := findSuite(entry); ok {
		return entry
	}
	base := filepath.Base(entry)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// loadGraph generates a suite graph or reads an edge file.
//
// With onGPU the CSR is built on the GPU, whose device the graph keeps for
// every GPU row, with the others of p.Devices: the rows time the runs of
// open engines.
func loadGraph(entry string, p *Params, onGPU bool) (*pipeline.Graph, *GraphReport, suiteGraph, error) {
	bg := &GraphReport{Name: graphName(entry)}
	var tbl *arrowio.EdgeTable
	sg, isSuite := findSuite(entry)
	if isSuite {
		edges, err := sg.make(p.Seed)
		if err != nil {
			return nil, nil, sg, err
		}
		if p.SaveDir != "" {
			if err := os.MkdirAll(p.SaveDir, 0o755); err != nil {
				return nil, nil, sg, fmt.Errorf("bench: saving graphs: %w", err)
			}
			bg.Path = filepath.Join(p.SaveDir, entry+".parquet")
			if err := saveEdgeList(bg.Path, edges); err != nil {
				return nil, nil, sg, err
			}
		}
		if tbl, err = suiteTable(entry, edges); err != nil {
			return nil, nil, sg, err
		}
		bg.About, bg.Undirected = sg.about, true
	} else {
		if _, err := os.Stat(entry); err != nil {
			return nil, nil, sg, paramsErrorf("graph %q is neither a suite graph (%s) nor a readable file: %v", entry, Names(), err)
		}
		var err error
		if tbl, err = arrowio.ReadEdges(entry, arrowio.ReadOptions{SrcCol: p.SrcCol, DstCol: p.DstCol}); err != nil {
			return nil, nil, sg, &InputError{err}
		}
		bg.Path, bg.Undirected = entry, p.Undirected
	}
	plain := pipeline.LoadOptions{Undirected: bg.Undirected, DistType: p.DistType}
	lopt := plain
	if onGPU {
		lopt.Engine, lopt.Devices, lopt.Tune = "gpu", p.Devices, p.Tune
	}
	start := time.Now()
	// The rows' devices past the first open beside the build, as a run's
	// open beside its read, and the graph keeps them: a row over two
	// devices otherwise timed the second one's opening (R-MAT 18 on two
	// H200s: 1.48 s against the CLI's 1.32 s; docs/benchmarks-history.md, "The shared
	// hub rows sent as they come").
	if onGPU {
		if others := devices.OpenOthers(lopt.Devices); others != nil {
			lopt.OtherDevices = others
		}
	}
	g, err := pipeline.LoadGraph(tbl, lopt)
	if onGPU && errors.Is(err, pipeline.ErrUnavailable) {
		// The GPU rows then open the device themselves, and say why
		// they cannot.
		start = time.Now()
		g, err = pipeline.LoadGraph(tbl, plain)
	}
	if err != nil && p.DistType != 0 && !errors.Is(err, pipeline.ErrInvalid) && !errors.Is(err, pipeline.ErrUnavailable) {
		return nil, nil, sg, paramsErrorf("--dist-type %s: %v", p.DistType, err) // as run's --dist-type
	}
	if err != nil {
		return nil, nil, sg, &InputError{err}
	}
	bg.LoadSeconds, bg.BuiltOn = time.Since(start).Seconds(), g.BuiltOn()
	bg.Vertices, bg.Arcs, bg.DistType = g.NumVertices(), g.CSR.NumEdges(), g.DistType().String()
	return g, bg, sg, nil
}

// suiteTable turns a generated edge list into the table a reader of its
// saved file would return: the ids that occur in an edge (self-loops
// included), in ascending order, as dense ids.
func suiteTable(name string, e *gen.EdgeList) (*arrowio.EdgeTable, error) {
	used := make([]bool, e.NumVertices)
	for i := range e.Src {
		used[e.Src[i]], used[e.Dst[i]] = true, true
	}
	dense := make([]graph.VertexID, e.NumVertices)
	var ids []int64
	for v, ok := range used {
		if ok {
			if len(ids) >= graph.MaxVertices {
				return nil, fmt.Errorf("bench: %s has more vertices than int32 ids hold", name)
			}
			dense[v] = graph.VertexID(len(ids))
			ids = append(ids, int64(v))
		}
	}
	t := &arrowio.EdgeTable{
		Edges: graph.Edges{
			NumVertices: len(ids),
			Src:         make([]graph.VertexID, len(e.Src)),
			Dst:         make([]graph.VertexID, len(e.Dst)),
			IntWeights:  e.Weights, Float64Weights: e.FloatWeights,
		},
		Vertices: &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ids},
		Name:     name,
	}
	for i := range e.Src {
		t.Edges.Src[i], t.Edges.Dst[i] = dense[e.Src[i]], dense[e.Dst[i]]
	}
	switch {
	case e.Weights != nil:
		t.WeightType = arrow.PrimitiveTypes.Int64
	case e.FloatWeights != nil:
		t.WeightType = arrow.PrimitiveTypes.Float64
	}
	return t, nil
}

// saveEdgeList writes e as pathctl gen does: columns src, dst [, weight].
func saveEdgeList(path string, e *gen.EdgeList) error {
	int64Array := func(xs []int64) arrow.Array {
		return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(xs),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(xs))}, nil, 0, 0))
	}
	src, dst := int64Array(e.Src), int64Array(e.Dst)
	defer src.Release()
	defer dst.Release()
	var weight arrow.Array
	switch {
	case e.Weights != nil:
		weight = int64Array(e.Weights)
	case e.FloatWeights != nil:
		weight = array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, len(e.FloatWeights),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(e.FloatWeights))}, nil, 0, 0))
	}
	if weight != nil {
		defer weight.Release()
	}
	return arrowio.WriteEdges(path, src, dst, weight, arrowio.WriteOptions{})
}
