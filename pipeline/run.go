package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// StatsRunner is implemented by runners that reduce a block to the stats
// layout themselves (the GPU does, to avoid copying n² distances back).
type StatsRunner interface {
	RunStats(ctx context.Context, sources []graph.VertexID) (*graph.Stats, error)
}

// normalize fills the defaults of opt and checks what can be checked
// without an engine.
func (g *Graph) normalize(opt Options) (Options, error) {
	if opt.Algorithm == "" {
		opt.Algorithm = graph.Auto
	}
	if _, err := graph.ParseAlgorithm(string(opt.Algorithm)); err != nil {
		return opt, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if opt.Engine == "" {
		opt.Engine = "auto"
	}
	if opt.Layout == "" {
		opt.Layout = arrowio.LayoutPairs
	}
	if _, err := arrowio.ParseLayout(string(opt.Layout)); err != nil {
		return opt, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if opt.WithPredecessors && opt.Algorithm == graph.BFSLevel {
		return opt, fmt.Errorf("%w: bfs-level stores no predecessors; use --algo bfs", ErrInvalid)
	}
	if opt.WithPredecessors && opt.Layout != arrowio.LayoutPairs {
		return opt, fmt.Errorf("%w: predecessors are part of the pairs layout only, not %s", ErrInvalid, opt.Layout)
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
	return opt, nil
}

// resultType is the distance type a run produces.
func (g *Graph) resultType(a graph.Algorithm) graph.DistType {
	if a.CountsHops() || (a == graph.Auto && !g.CSR.Weighted) {
		return graph.DistInt32
	}
	return g.CSR.Type
}

// Schema is the result schema a Run with opt produces, computed without
// running anything.
func Schema(g *Graph, opt Options) (*arrow.Schema, error) {
	opt, err := g.normalize(opt)
	if err != nil {
		return nil, err
	}
	return arrowio.ResultSchema(opt.Layout, g.Table.Vertices, g.resultType(opt.Algorithm), opt.WithPredecessors), nil
}

// Run computes the request and calls emit with every record batch, in
// source order. A record is released when emit returns; emit retains it to
// keep it. Compute runs one block ahead of emit.
func Run(ctx context.Context, g *Graph, opt Options, emit func(arrow.Record) error) (*Summary, error) {
	start := time.Now()
	opt, err := g.normalize(opt)
	if err != nil {
		return nil, err
	}
	sources, err := g.resolveSources(opt.Sources)
	if err != nil {
		return nil, err
	}
	csr := g.CSR
	if csr.HasNegative() && !opt.Algorithm.AcceptsNegative() && !opt.Algorithm.CountsHops() && opt.Algorithm != graph.Auto {
		return nil, g.explain(csr.NegativeWeight(opt.Algorithm))
	}
	eng, err := chooseEngine(opt, len(sources))
	if err != nil {
		return nil, err
	}
	defer closeEngine(eng)
	req := graph.Request{Algorithm: opt.Algorithm, WithPredecessors: opt.WithPredecessors, Delta: opt.Delta, Threads: opt.Threads}
	runner, err := eng.Prepare(ctx, csr, req)
	if err != nil {
		return nil, g.explain(err)
	}
	defer runner.Close()
	sum := &Summary{Engine: eng.Name(), Algorithm: string(opt.Algorithm), Sources: int64(len(sources))}
	if d, ok := runner.(interface{ Describe() string }); ok {
		sum.Algorithm = d.Describe()
	}
	fmt.Fprintf(opt.Log, "pathctl: engine %s, algorithm %s, %d vertices, %d arcs, %s distances\n",
		sum.Engine, sum.Algorithm, csr.NumVertices, csr.NumEdges(), runner.DistType())

	builder := arrowio.NewResultBuilder(opt.Layout, g.Table.Vertices, runner.DistType(), opt.WithPredecessors, opt.Allocator)
	counted := func(r arrow.Record) error {
		sum.Rows += r.NumRows()
		return emit(r)
	}
	if opt.MemBudget > 0 && opt.MemBudget < runner.BytesPerSource() {
		return nil, fmt.Errorf("%w: memory budget of %d bytes is below the %d bytes one source needs", ErrInvalid, opt.MemBudget, runner.BytesPerSource())
	}
	blocks := PlanBlocks(len(sources), runner.BytesPerSource(), budget(opt, eng), maxBlock(opt, len(sources)))
	fmt.Fprintf(opt.Log, "pathctl: %d sources in %d blocks of up to %d\n", len(sources), len(blocks), blockMax(blocks))

	err = runBlocks(ctx, g, runner, opt, sources, blocks, func(res blockResult) error {
		defer func() {
			sum.Blocks++
			if opt.Progress != nil {
				opt.Progress(int64(res.end), int64(len(sources)))
			}
		}()
		if res.stats != nil {
			return builder.Stats(res.stats, counted)
		}
		return builder.Block(res.block, counted)
	})
	if err != nil {
		return nil, g.explain(err)
	}
	sum.Pairs = sum.Sources * int64(csr.NumVertices)
	sum.Elapsed = time.Since(start)
	return sum, nil
}

type blockResult struct {
	end   int // sources done once this block is emitted
	block *graph.Block
	stats *graph.Stats
}

// runBlocks computes the blocks in one goroutine and hands them to sink in
// order in the caller's goroutine, so that block i+1 computes while block i
// is written. Two blocks are alive at a time; the budget counts both.
func runBlocks(ctx context.Context, g *Graph, runner Runner, opt Options, sources []graph.VertexID, blocks []SourceBlock, sink func(blockResult) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan blockResult, 1)
	errc := make(chan error, 1)
	statsRunner, _ := runner.(StatsRunner)
	go func() {
		defer close(results)
		for _, b := range blocks {
			src := sources[b.Start:b.End]
			var res blockResult
			res.end = b.End
			if opt.Layout == arrowio.LayoutStats && statsRunner != nil {
				s, err := statsRunner.RunStats(ctx, src)
				if err != nil {
					errc <- err
					return
				}
				res.stats = s
			} else {
				blk := graph.NewBlock(src, g.NumVertices(), runner.DistType(), opt.WithPredecessors)
				if err := runner.Run(ctx, blk); err != nil {
					errc <- err
					return
				}
				if opt.Layout == arrowio.LayoutStats {
					res.stats = graph.ComputeStats(blk)
				} else {
					res.block = blk
				}
			}
			select {
			case results <- res:
			case <-ctx.Done():
				errc <- ctx.Err()
				return
			}
		}
	}()
	for res := range results {
		if err := sink(res); err != nil {
			cancel()
			for range results { // let the producer finish
			}
			return err
		}
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

// SourceBlock is a half-open range of the source list run together.
type SourceBlock struct{ Start, End int }

// PlanBlocks splits n sources into blocks whose working memory, two blocks
// in flight, fits budget; every block holds at least one source and at most
// maxBlock. It never fails: a budget below one source gives blocks of one,
// and the caller reports that budget if it cannot be met.
func PlanBlocks(n int, bytesPerSource, budget int64, maxBlock int) []SourceBlock {
	if n == 0 {
		return nil
	}
	size := n
	if bytesPerSource > 0 && budget > 0 {
		size = int(min(int64(n), max(1, budget/(2*bytesPerSource))))
	}
	if maxBlock > 0 {
		size = min(size, maxBlock)
	}
	blocks := make([]SourceBlock, 0, (n+size-1)/size)
	for s := 0; s < n; s += size {
		blocks = append(blocks, SourceBlock{s, min(s+size, n)})
	}
	return blocks
}

func blockMax(blocks []SourceBlock) int {
	m := 0
	for _, b := range blocks {
		m = max(m, b.End-b.Start)
	}
	return m
}

func budget(opt Options, eng Engine) int64 {
	if opt.MemBudget > 0 {
		return opt.MemBudget
	}
	if b, ok := eng.(interface{ DefaultBudget() int64 }); ok {
		return b.DefaultBudget()
	}
	return DefaultMemBudget
}

// maxBlock keeps blocks small enough for steady progress and for the
// writer to overlap the engine: at least 16 blocks on large runs, never
// fewer sources than the engine can spread over its threads.
func maxBlock(opt Options, n int) int {
	if opt.MaxBlock > 0 {
		return opt.MaxBlock
	}
	return max(256, n/16)
}

// IsInterrupted reports whether err comes from a cancelled context.
func IsInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
