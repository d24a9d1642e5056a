package pipeline

// Which engine answers the nearest layout (runNearest): one
// multi-source run, on the GPU engine's kernels (gpu/nearest.go) or the CPU
// engine's multi-source Dijkstra (cpu/nearest.go), both graph.NearestFinder,
// or for the algorithm ch on the CPU engine one upward pass from every
// source and one sweep of the hierarchy (cpu/nearestch.go);
// with Bellman-Ford (asked for, or auto's choice where a weight is
// negative, as for every other layout) the CPU engine's multi-source
// Bellman-Ford (cpu/nearestbf.go), which takes negative weights.

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
)

// minGPUNearestVertices is the graph size below which --engine auto answers
// the nearest layout on the CPU: the device's rounds cost a launch each
// however small the graph, and below some ten thousand vertices the CPU's
// heap is done before the first few launches. Not yet measured; the number
// of sources plays no part, since the run is one whatever their number.
const minGPUNearestVertices = 1 << 14

// nearestOn answers the nearest layout of csr (g's, or its transpose)
// from sources on the engine opt asks for (the CPU for auto on small
// graphs), and returns the engine's name and a description of the run
// for the summary.
func nearestOn(ctx context.Context, g *Graph, opt Options, csr *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, string, string, error) {
	onCPU := func() (*graph.Nearest, string, string, error) {
		if req.Algorithm == graph.CH {
			return nearestCH(ctx, g, opt, csr, sources, req)
		}
		res, err := cpu.New(cpu.WithThreads(opt.Threads)).Nearest(ctx, csr, sources, req)
		return res, "cpu", "nearest source: one multi-source Dijkstra", err
	}
	bellmanFord := req.Algorithm == graph.BellmanFord || (req.Algorithm == graph.Auto && csr.HasNegative())
	switch {
	case bellmanFord:
		if opt.Engine == "gpu" {
			fmt.Fprintf(opt.Notice, "pathctl: note: the nearest layout with bellman-ford runs on the CPU engine (the GPU engine has no multi-source Bellman-Ford)\n")
		}
		res, err := cpu.New(cpu.WithThreads(opt.Threads)).NearestBellmanFord(ctx, csr, sources, req)
		return res, "cpu", "nearest source: one multi-source Bellman-Ford", err
	case csr.HasNegative():
		// Named after the algorithm asked for; bellman-ford, which the
		// message points to, answers (above).
		return nil, "", "", csr.NegativeWeight(req.Algorithm)
	case opt.Engine == "cpu":
		return onCPU()
	case opt.Engine == "auto" && csr.NumVertices < minGPUNearestVertices:
		fmt.Fprintf(opt.Log, "pathctl: %d vertices: the CPU engine answers the nearest layout faster than device rounds\n", csr.NumVertices)
		return onCPU()
	}
	eng, release, err := runEngine(g, opt, 0)
	if err != nil {
		return nil, "", "", err
	}
	defer release()
	if d, ok := eng.(graph.DeviceGroup); ok {
		// One multi-source run does not split over devices: the first
		// answers it.
		first, label := d.First()
		eng = first
		fmt.Fprintf(opt.Log, "pathctl: the nearest layout is one run: %s answers it\n", label)
	}
	nd, ok := eng.(graph.NearestDescriber)
	if !ok {
		return onCPU() // auto fell back: no usable GPU
	}
	res, method, err := nd.NearestDescribed(ctx, csr, sources, req)
	if err != nil {
		return nil, "", "", err
	}
	return res, eng.Name(), method, nil
}

// nearestCH answers the nearest layout through the contraction
// hierarchy on the CPU engine: the index's, or the one g keeps (built now
// where it keeps none), reversed for a reversed run.
func nearestCH(ctx context.Context, g *Graph, opt Options, csr *graph.CSR, sources []graph.VertexID, req graph.Request) (*graph.Nearest, string, string, error) {
	h := opt.Index
	if h == nil {
		var err error
		if h, err = g.hierarchyFor(ctx, opt); err != nil {
			return nil, "", "", err
		}
	}
	if opt.Reverse {
		h = h.Reverse()
	}
	res, err := cpu.New(cpu.WithThreads(opt.Threads), cpu.WithHierarchy(h)).Nearest(ctx, csr, sources, req)
	return res, "cpu", fmt.Sprintf("nearest source: ch (contraction hierarchy of %d arcs; one upward pass from every source, one downward sweep)", h.Arcs()), err
}

// runNearest answers q's nearest layout on csr: one multi-source run
// (graph.NearestFinder) on the engine nearestOn picks.
func runNearest(ctx context.Context, q *Prepared, csr *graph.CSR, start time.Time, emit func(arrow.RecordBatch) error) (*Summary, error) {
	g, opt, sources := q.g, q.opt, q.sources
	req := graph.Request{Algorithm: opt.Algorithm, Cutoff: opt.Cutoff, HasCutoff: opt.HasCutoff, Delta: opt.Delta}
	res, engine, method, err := nearestOn(ctx, g, opt, csr, sources, req)
	if err != nil {
		return nil, g.explain(err)
	}
	sum := &Summary{Engine: engine, Algorithm: method, Sources: int64(len(sources)), Blocks: 1}
	fmt.Fprintf(opt.Log, "pathctl: engine %s, %s, %d vertices, %d arcs, %s distances (ready in %s)\n",
		sum.Engine, sum.Algorithm, csr.NumVertices, csr.NumEdges(), res.Type, time.Since(start).Round(time.Millisecond))
	// The records are built one ahead of emit (arrowio): the time in emit
	// is the writer's, the rest what building left exposed.
	built := time.Now()
	var inEmit time.Duration
	if roundsRuns(g, opt.Algorithm) {
		res = float32Nearest(res) // rounding.go
	}
	builder := arrowio.NewResultBuilder(arrowio.LayoutNearest, g.Table.Vertices, res.Type, false, opt.Allocator)
	err = builder.Nearest(res, func(r arrow.RecordBatch) error {
		sum.Rows += r.NumRows()
		at := time.Now()
		defer func() { inEmit += time.Since(at) }()
		return emit(r)
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opt.Log, "pathctl: %d rows of the nearest layout built and passed on in %s, %s of it in the writer\n",
		sum.Rows, time.Since(built).Round(10*time.Microsecond), inEmit.Round(10*time.Microsecond))
	if opt.Progress != nil {
		opt.Progress(int64(len(sources)), int64(len(sources)))
	}
	sum.Pairs = int64(csr.NumVertices)
	sum.Elapsed = time.Since(start)
	return sum, nil
}
