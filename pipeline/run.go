package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
)

// Run computes q and calls emit with every record batch, in source
// order. A record is released when emit returns; emit retains it to keep
// it. Compute runs one block ahead of emit.
func (q *Prepared) Run(ctx context.Context, emit func(arrow.RecordBatch) error) (*Summary, error) {
	start := time.Now()
	g, opt, sources := q.g, q.opt, q.sources
	if opt.Layout.IsBetweenness() {
		return runBetweenness(ctx, q, emit) // betweenness.go
	}
	// 1. The graph the run searches, and what no engine sees.
	targets := q.targets
	if opt.K > 0 {
		targets = graph.Distinct(targets) // a vertex is one of the k nearest once
	}
	csr := g.CSR
	if opt.Reverse {
		csr = graph.Transpose(csr)
	}
	// A negative self-loop that a source reaches is a negative cycle
	// (bellman-ford, auto); no engine sees the loop, so this says it.
	if err := csr.NegativeLoopCycle(opt.Algorithm, sources); err != nil {
		return nil, g.explain(err)
	}
	if opt.Layout == arrowio.LayoutNearest {
		return runNearest(ctx, q, csr, start, emit) // nearest.go
	}
	if csr.HasNegative() && !opt.Algorithm.AcceptsNegative() && !opt.Algorithm.CountsHops() && opt.Algorithm != graph.Auto {
		return nil, g.explain(csr.NegativeWeight(opt.Algorithm))
	}
	// 2. The engine and its runner, narrowed as the query asks.
	eng, release, err := runEngine(g, opt, len(sources))
	if err != nil {
		return nil, err
	}
	defer release()
	rounds := roundsRuns(g, opt.Algorithm) // float64 rows of a float32 result (rounding.go)
	req := graph.Request{Algorithm: opt.Algorithm, WithPredecessors: opt.WithPredecessors || opt.WithPaths, Delta: opt.Delta, Threads: opt.Threads,
		Targets: targets, Cutoff: opt.Cutoff, HasCutoff: opt.HasCutoff, RoundFloat32: rounds}
	req.Algorithm = autoCH(g.ch.state(), eng, csr, opt, req, len(sources)) // ch.go
	trace.Printf("pipeline", "preparing the engine")
	prepared, err := prepare(ctx, g, eng, csr, engineRequest(req, opt.WithPaths), opt)
	if err != nil {
		return nil, g.explain(err)
	}
	selected := engineSelects(prepared, opt)
	runner := narrowRunner(prepared, req, csr.NumVertices, opt.WithPaths)
	defer runner.Close()
	sum := &Summary{Engine: eng.Name(), Algorithm: describe(runner, opt.Algorithm), Sources: int64(len(sources))}
	sum.Algorithm += nearestNote(prepared, opt, selected)
	fmt.Fprintf(opt.Log, "pathctl: engine %s, algorithm %s, %d vertices, %d arcs, %s distances (ready in %s)\n",
		sum.Engine, sum.Algorithm, csr.NumVertices, csr.NumEdges(), runner.DistType(), time.Since(start).Round(time.Millisecond))
	if rounds {
		fmt.Fprintf(opt.Log, "pathctl: float32 weights computed as float64 distances, rounded once to float32\n")
	}

	// 3. The sink and the plan of the blocks.
	builder := arrowio.NewResultBuilder(opt.Layout, g.Table.Vertices, q.dist, opt.WithPredecessors, opt.Allocator)
	blockType := runner.DistType()
	if values := q.values; rounds && opt.Layout == arrowio.LayoutMatrix && values == graph.DistFloat64 {
		// A float64 matrix of float32 weights carries the float64
		// distances as computed.
		builder.SetMatrixType(values)
	} else if values != blockType && !rounds {
		// The engine converts the values where it can (on the device),
		// else the builder does as the records are built.
		builder.SetMatrixType(values)
		where := "as the records are built"
		if c, ok := runner.(graph.ValueConverter); ok && c.ConvertValues(values) {
			blockType, where = values, "by the engine"
		}
		fmt.Fprintf(opt.Log, "pathctl: the matrix carries %s values, converted from the %s distances %s\n", values, runner.DistType(), where)
	}
	engineRounds := false
	if rounds && q.values == graph.DistFloat32 && opt.K == 0 && (opt.Layout == arrowio.LayoutMatrix || opt.Layout == arrowio.LayoutPairs) {
		// Full rows of a float32 result: the engine rounds them where it
		// can (the GPU, before their copy: half the bytes to the host),
		// else the producer does (rounding.go).
		if c, ok := runner.(graph.ValueConverter); ok && c.ConvertValues(graph.DistFloat32) {
			blockType, engineRounds = graph.DistFloat32, true
			fmt.Fprintf(opt.Log, "pathctl: the float64 rows rounded to float32 by the engine\n")
		}
	}
	builder.SetShape(shape(opt, targets))
	counted := func(r arrow.RecordBatch) error {
		sum.Rows += r.NumRows()
		return emit(r)
	}
	if per := bytesPerSource(runner, opt); opt.MemBudget > 0 && opt.MemBudget < per {
		return nil, fmt.Errorf("%w: memory budget of %d bytes is below the %d bytes one source needs", ErrInvalid, opt.MemBudget, per)
	}
	trace.Printf("pipeline", "sizing the run")
	sizeStatsRun(planOptions(opt, eng), eng, runner, len(sources), selected)
	trace.Printf("pipeline", "planning the blocks")
	blocks, sched := planRun(planOptions(opt, eng), eng, planRunner(runner), csr.NumVertices, len(sources), narrowedRowBytes(runner, targets, opt.K, selected), selected)
	if d, ok := runner.(graph.DeviceSet); ok {
		// A device block holds one device's on each device.
		sched.residentMax = d.ResidentSources(sched.residentMax)
	}
	fmt.Fprintf(opt.Log, "pathctl: %d sources in %d blocks of up to %d\n", len(sources), len(blocks), blockMax(blocks))
	if sched.residentMax > blockMax(blocks) {
		fmt.Fprintf(opt.Log, "pathctl: computed on the device in blocks of up to %d sources\n", sched.residentMax)
	}

	if opt.Layout == arrowio.LayoutMatrix {
		// Matrix records wrap the block's distances without a copy; building
		// them (the validity bitmap of integer distances) in the producer
		// keeps that work off the writer's path. Pairs records are several
		// times the block's size and stay built one at a time by the writer.
		sched.buildRecords = func(blk *graph.Block) ([]arrow.RecordBatch, error) {
			var out []arrow.RecordBatch
			err := builder.Block(blk, func(r arrow.RecordBatch) error {
				r.Retain()
				out = append(out, r)
				return nil
			})
			if err != nil {
				blockResult{records: out}.release()
				return nil, err
			}
			return out, nil
		}
	}
	sched.targets, sched.nearest, sched.selected, sched.blockType = targets, opt.K, selected, blockType
	sched.rounds = rounds && q.values == graph.DistFloat32 && !engineRounds
	resultStats := func(st *graph.Stats) *graph.Stats {
		if rounds {
			return float32Stats(st) // rounding.go
		}
		return st
	}
	// 4. The blocks, in the engine's order where it has one, to the sink.
	var tm timings
	sched.timings = &tm
	run, held := sources, (*statsInOrder)(nil)
	trace.Printf("pipeline", "ordering the sources")
	if order := runOrder(runner, opt, sources, blocks); order != nil {
		run, held = inOrder(sources, order), newStatsInOrder(sources, order, q.dist)
		fmt.Fprintf(opt.Log, "pathctl: sources run in the engine's block order, rows written in yours\n")
	}
	trace.Printf("pipeline", "running the blocks")
	err = runBlocks(ctx, g, runner, opt, sched, run, blocks, func(res blockResult) error {
		began := time.Now()
		trace.Printf("pipeline", "sources to %d to the sink", res.end)
		defer func() {
			trace.Printf("pipeline", "sources to %d in the sink", res.end)
			tm.sink += time.Since(began)
			sum.Blocks++
			if opt.Progress != nil {
				opt.Progress(int64(res.end), int64(len(sources)))
			}
		}()
		if held != nil {
			if res.stats == nil {
				return fmt.Errorf("pipeline: a stats run in block order got rows, not stats")
			}
			return held.add(res.end, resultStats(res.stats))
		}
		if res.stats != nil {
			return builder.Stats(resultStats(res.stats), counted)
		}
		if res.records != nil {
			defer res.release()
			for _, r := range res.records {
				if err := counted(r); err != nil {
					return err
				}
			}
			return nil
		}
		return builder.Block(res.block, counted)
	})
	if err == nil && held != nil {
		began := time.Now()
		err = held.emit(blocks, func(s *graph.Stats) error { return builder.Stats(s, counted) })
		tm.sink += time.Since(began)
	}
	if err != nil {
		return nil, g.explain(err)
	}
	// 5. The summary and the --verbose lines.
	sum.Pairs = sum.Sources * int64(csr.NumVertices)
	if targets != nil {
		sum.Pairs = sum.Sources * int64(len(targets))
	}
	sum.Elapsed = time.Since(start)
	fmt.Fprintf(opt.Log, "pathctl: time %s\n", tm)
	if d, ok := runner.(graph.DeviceSet); ok {
		fmt.Fprintf(opt.Log, "pathctl: %s\n", d.Shares(start))
	}
	if h, ok := planRunner(runner).(graph.HubRowsReporter); ok {
		if rep := h.HubRowsReport(); rep != "" {
			fmt.Fprintf(opt.Log, "pathctl: %s\n", rep)
		}
	}
	if d, ok := prepared.(graph.DownloadCounter); ok {
		fmt.Fprintf(opt.Log, "pathctl: device-to-host: %d bytes of results\n", d.DownloadedBytes())
	}
	return sum, nil
}

// describe is what runner says it runs for algo (graph.Describer), else
// algo's name.
func describe(runner graph.Runner, algo graph.Algorithm) string {
	if d, ok := runner.(graph.Describer); ok {
		return d.Describe()
	}
	return string(algo)
}

// IsInterrupted reports whether err comes from a cancelled context.
func IsInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
