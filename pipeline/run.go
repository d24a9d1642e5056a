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
	eng, release, err := g.engine(opt, len(sources))
	if err != nil {
		return nil, err
	}
	defer release()
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
	fmt.Fprintf(opt.Log, "pathctl: engine %s, algorithm %s, %d vertices, %d arcs, %s distances (ready in %s)\n",
		sum.Engine, sum.Algorithm, csr.NumVertices, csr.NumEdges(), runner.DistType(), time.Since(start).Round(time.Millisecond))

	builder := arrowio.NewResultBuilder(opt.Layout, g.Table.Vertices, runner.DistType(), opt.WithPredecessors, opt.Allocator)
	counted := func(r arrow.Record) error {
		sum.Rows += r.NumRows()
		return emit(r)
	}
	if opt.MemBudget > 0 && opt.MemBudget < runner.BytesPerSource() {
		return nil, fmt.Errorf("%w: memory budget of %d bytes is below the %d bytes one source needs", ErrInvalid, opt.MemBudget, runner.BytesPerSource())
	}
	blocks := PlanBlocksInFlight(len(sources), runner.BytesPerSource(), budget(opt, eng, runner), maxBlock(opt, len(sources), runner), blocksInFlight(runner, opt))
	if _, ok := runner.(ResidentRunner); ok && opt.Layout != arrowio.LayoutStats {
		opt.residentMax = residentMax(opt, eng, runner, len(sources))
	}
	if _, ok := runner.(HostPinner); ok && opt.Layout == arrowio.LayoutMatrix && opt.residentMax > blockMax(blocks) && opt.MaxBlock == 0 {
		// The host blocks only carry rows of the device block: small
		// ones keep the memory the pool pins small.
		opt.computeMax = blockMax(blocks)
		blocks = splitBlocks(blocks, max(1, int(pinnedBlockBytes/(int64(csr.NumVertices)*int64(runner.DistType().Size())))))
	}
	fmt.Fprintf(opt.Log, "pathctl: %d sources in %d blocks of up to %d\n", len(sources), len(blocks), blockMax(blocks))
	if opt.residentMax > blockMax(blocks) {
		fmt.Fprintf(opt.Log, "pathctl: computed on the device in blocks of up to %d sources\n", opt.residentMax)
	}

	if opt.Layout == arrowio.LayoutMatrix {
		// Matrix records wrap the block's distances without a copy; building
		// them (the validity bitmap of integer distances) in the producer
		// keeps that work off the writer's path. Pairs records are several
		// times the block's size and stay built one at a time by the writer.
		opt.buildRecords = func(blk *graph.Block) ([]arrow.Record, error) {
			var out []arrow.Record
			err := builder.Block(blk, func(r arrow.Record) error {
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
	var tm timings
	opt.timings = &tm
	err = runBlocks(ctx, g, runner, opt, sources, blocks, func(res blockResult) error {
		began := time.Now()
		defer func() {
			tm.sink += time.Since(began)
			sum.Blocks++
			if opt.Progress != nil {
				opt.Progress(int64(res.end), int64(len(sources)))
			}
		}()
		if res.stats != nil {
			return builder.Stats(res.stats, counted)
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
	if err != nil {
		return nil, g.explain(err)
	}
	sum.Pairs = sum.Sources * int64(csr.NumVertices)
	sum.Elapsed = time.Since(start)
	fmt.Fprintf(opt.Log, "pathctl: time %s\n", tm)
	return sum, nil
}

// timings is where the blocks' time went, for --verbose: in the producer
// (computing or waiting for blocks, building records, waiting for the
// sink to take them) and in the sink; for the GPU also the device's share
// (kernels and device-to-host copies by CUDA events, the move from pinned
// memory into the block by the host clock), which overlaps the rest.
type timings struct {
	compute, records, handOver, sink time.Duration
	kernel, copy, move               time.Duration
	plan, alloc                      time.Duration
	device                           bool
}

func (t timings) String() string {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	s := fmt.Sprintf("in the blocks: computing or waiting for them %s, building records %s, waiting for the sink %s; in the sink %s",
		ms(t.compute), ms(t.records), ms(t.handOver), ms(t.sink))
	if t.device {
		s += fmt.Sprintf("; on the device: kernels %s, device-to-host copies %s, moves into the blocks %s; on the host before the kernels: planning them %s, allocating device memory %s",
			ms(t.kernel), ms(t.copy), ms(t.move), ms(t.plan), ms(t.alloc))
	}
	return s
}

// addDevice adds what a GPU block reports of its device time.
func (t *timings) addDevice(w any) {
	if k, ok := w.(interface{ KernelTime() time.Duration }); ok {
		t.kernel += k.KernelTime()
		t.device = true
	}
	if h, ok := w.(interface {
		HostTimes() (plan, alloc time.Duration)
	}); ok {
		plan, alloc := h.HostTimes()
		t.plan += plan
		t.alloc += alloc
	}
	if c, ok := w.(interface {
		CopyTime() time.Duration
		MoveTime() time.Duration
	}); ok {
		t.copy += c.CopyTime()
		t.move += c.MoveTime()
	}
}

type blockResult struct {
	end   int // sources done once this block is emitted
	block *graph.Block
	stats *graph.Stats
	// records, when not nil, are the block's records already built (the
	// matrix layout); whoever drops the result releases them.
	records []arrow.Record
}

// release releases the records of a result that carries them.
func (res blockResult) release() {
	for _, r := range res.records {
		r.Release()
	}
}

// AsyncRunner is implemented by runners whose next block can start before
// the results of the previous one have arrived (the GPU runner copies them
// out on a second stream while the next block computes). runBlocks starts
// block i+1 before it waits for block i.
type AsyncRunner interface {
	// Start computes out and returns once its results are on their way;
	// out may be read once the Waiter's Wait has returned nil. When Start
	// fails, nothing is left writing to out.
	Start(ctx context.Context, out *graph.Block) (Waiter, error)
}

// Waiter is a block an AsyncRunner has started.
type Waiter interface {
	// Wait blocks until the block's results are in place and returns the
	// errors of bringing them there.
	Wait() error
}

// asyncRunner returns runner as an AsyncRunner where runBlocks starts its
// blocks ahead: not for the stats layout of a StatsRunner, which reduces
// on the device and copies little back.
func asyncRunner(runner Runner, opt Options) (AsyncRunner, bool) {
	if _, ok := runner.(StatsRunner); ok && opt.Layout == arrowio.LayoutStats {
		return nil, false
	}
	a, ok := runner.(AsyncRunner)
	return a, ok
}

// blocksInFlight is the number of blocks runBlocks holds in host memory at
// once: the one the sink writes and the one computing, and with an
// AsyncRunner a third, the one whose results are arriving.
func blocksInFlight(runner Runner, opt Options) int {
	if statsOnDevice(runner, opt) {
		return 1 // RunStats holds one block on the device and none on the host
	}
	if _, ok := asyncRunner(runner, opt); ok {
		return 3
	}
	return 2
}

// runBlocks computes the blocks in one goroutine and hands them to sink in
// order in the caller's goroutine, so that block i+1 computes while block i
// is written. With an AsyncRunner it starts block i+1 before waiting for
// block i, so that block i travels to the host while block i+1 computes and
// block i-1 is written: three blocks are alive, and the hand-over to the
// sink is unbuffered so that no fourth is. The budget counts the blocks in
// flight (blocksInFlight). Every block started is waited for before
// runBlocks returns, whatever fails.
func runBlocks(ctx context.Context, g *Graph, runner Runner, opt Options, sources []graph.VertexID, blocks []SourceBlock, sink func(blockResult) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	async, ahead := asyncRunner(runner, opt)
	results := make(chan blockResult, 1)
	if ahead {
		results = make(chan blockResult)
	}
	send := func(res blockResult) error {
		select {
		case results <- res:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p := producer{g: g, runner: runner, opt: opt, sources: sources, blocks: blocks, send: send}
	if ahead && opt.Layout == arrowio.LayoutMatrix && opt.buildRecords != nil {
		p.pool = &blockPool{}
		p.pool.pin, _ = runner.(HostPinner)
	}
	errc := make(chan error, 1)
	go func() {
		defer close(results)
		if p.pool != nil {
			defer p.pool.close() // after every block started has landed
		}
		var err error
		if rr, ok := runner.(ResidentRunner); ok && ahead && opt.residentMax > blockMax(blocks) {
			err = p.startResident(ctx, rr, async, opt.residentMax)
		} else if ahead {
			err = p.startAhead(ctx, async)
		} else {
			err = p.runInTurn(ctx)
		}
		if err != nil {
			errc <- err
		}
	}()
	for res := range results {
		err := ctx.Err() // a cancelled run writes no further block
		if err == nil {
			err = sink(res)
		} else {
			res.release()
		}
		if err != nil {
			cancel()
			for res := range results { // let the producer finish
				res.release()
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

// producer computes the blocks of runBlocks and sends them on.
type producer struct {
	g       *Graph
	runner  Runner
	opt     Options
	sources []graph.VertexID
	blocks  []SourceBlock
	send    func(blockResult) error
	// pool, when set, recycles the blocks' distance arrays (matrix records
	// of a runner that writes every element: an AsyncRunner).
	pool *blockPool
}

func (p *producer) newBlock(b SourceBlock) *graph.Block {
	if p.pool != nil {
		return p.pool.block(p.sources[b.Start:b.End], p.g.NumVertices(), p.runner.DistType(), p.opt.WithPredecessors)
	}
	return graph.NewBlock(p.sources[b.Start:b.End], p.g.NumVertices(), p.runner.DistType(), p.opt.WithPredecessors)
}

// result is what the sink gets of a computed block.
func (p *producer) result(b SourceBlock, blk *graph.Block) (blockResult, error) {
	if p.opt.Layout == arrowio.LayoutStats {
		return blockResult{end: b.End, stats: graph.ComputeStats(blk)}, nil
	}
	if p.opt.buildRecords != nil {
		recs, err := p.opt.buildRecords(blk)
		if err != nil {
			return blockResult{}, err
		}
		return blockResult{end: b.End, records: recs}, nil
	}
	return blockResult{end: b.End, block: blk}, nil
}

// sendResult sends the result of block b, releasing its records if the
// run stopped first.
func (p *producer) sendResult(b SourceBlock, blk *graph.Block) error {
	t0 := time.Now()
	res, err := p.result(b, blk)
	if err != nil {
		return err
	}
	t1 := time.Now()
	err = p.send(res)
	if t := p.opt.timings; t != nil {
		t.records += t1.Sub(t0)
		t.handOver += time.Since(t1)
	}
	if err != nil {
		res.release()
		return err
	}
	return nil
}

// runInTurn runs each block to the end before the next.
func (p *producer) runInTurn(ctx context.Context) error {
	statsRunner, _ := p.runner.(StatsRunner)
	for _, b := range p.blocks {
		var res blockResult
		if p.opt.Layout == arrowio.LayoutStats && statsRunner != nil {
			t0 := time.Now()
			s, err := statsRunner.RunStats(ctx, p.sources[b.Start:b.End])
			if err != nil {
				return err
			}
			p.tally(t0, p.runner)
			res = blockResult{end: b.End, stats: s}
		} else {
			blk := p.newBlock(b)
			t0 := time.Now()
			if err := p.runner.Run(ctx, blk); err != nil {
				return err
			}
			p.tally(t0, p.runner)
			if err := p.sendResult(b, blk); err != nil {
				return err
			}
			continue
		}
		if err := p.send(res); err != nil {
			return err
		}
	}
	return nil
}

// startAhead starts block i+1 before it waits for block i and sends it on.
func (p *producer) startAhead(ctx context.Context, async AsyncRunner) error {
	var prev *startedBlock
	for _, b := range p.blocks {
		blk := p.newBlock(b)
		t0 := time.Now()
		w, err := async.Start(ctx, blk)
		p.tally(t0, nil)
		if err != nil {
			if prev != nil {
				_ = prev.w.Wait() // nothing may write to a block after runBlocks returns
			}
			return err
		}
		cur := &startedBlock{b: b, blk: blk, w: w}
		if prev != nil {
			if err := p.finish(prev); err != nil {
				_ = cur.w.Wait()
				return err
			}
		}
		prev = cur
	}
	if prev != nil {
		return p.finish(prev)
	}
	return nil
}

// startedBlock is a block whose results are on their way.
type startedBlock struct {
	b   SourceBlock
	blk *graph.Block
	w   Waiter
}

// finish waits for s's results and sends them on.
func (p *producer) finish(s *startedBlock) error {
	t0 := time.Now()
	if err := s.w.Wait(); err != nil {
		return err
	}
	p.tally(t0, s.w)
	return p.sendResult(s.b, s.blk)
}

// tally adds the time since t0 to the run's compute time and, where dev
// reports them, its device times.
func (p *producer) tally(t0 time.Time, dev any) {
	if t := p.opt.timings; t != nil {
		t.compute += time.Since(t0)
		t.addDevice(dev)
	}
}

// ResidentRunner is implemented by runners that can compute a block of
// sources far larger than the host's blocks into device memory and send
// its rows to the host piecewise (the GPU runner: its batched kernel
// derives most rows of a block that holds most sources from others).
type ResidentRunner interface {
	ComputeResident(ctx context.Context, sources []graph.VertexID) (ResidentBlock, error)
}

// ErrResidentTooLarge is what a ResidentRunner's ComputeResident wraps
// when the device block does not fit in device memory.
var ErrResidentTooLarge = errors.New("pipeline: device block does not fit")

// ResidentBlock is a block a ResidentRunner holds in device memory.
type ResidentBlock interface {
	// Start sends the rows of the block's sources [lo, hi) to out, as
	// AsyncRunner.Start does.
	Start(ctx context.Context, lo, hi int, out *graph.Block) (Waiter, error)
}

// startResident computes the blocks in device blocks of up to max sources
// (consecutive host blocks together) and starts each host block's rows
// from its device block before it waits for the previous host block.
//
// A device block that does not fit (ErrResidentTooLarge) sends the rest
// of the run through startAhead, whose blocks halve where they must.
func (p *producer) startResident(ctx context.Context, rr ResidentRunner, async AsyncRunner, max int) error {
	var prev *startedBlock
	finish := func() error { // the previous host block, if any
		if prev == nil {
			return nil
		}
		s := prev
		prev = nil
		return p.finish(s)
	}
	for i := 0; i < len(p.blocks); {
		start := p.blocks[i].Start
		j := i + 1
		for j < len(p.blocks) && p.blocks[j].End-start <= max {
			j++
		}
		end := p.blocks[j-1].End
		// Copies of the previous device block still read its rows: they
		// land before the next is computed.
		if err := finish(); err != nil {
			return err
		}
		if i == 0 && p.pool != nil {
			// The host blocks' memory is made (and pinned) while the
			// device computes.
			p.pool.prefill(len(p.blocks), blockMax(p.blocks)*p.g.NumVertices(), p.runner.DistType())
		}
		t0 := time.Now()
		res, err := rr.ComputeResident(ctx, p.sources[start:end])
		if errors.Is(err, ErrResidentTooLarge) {
			rest := *p
			rest.blocks = p.blocks[i:]
			if p.opt.computeMax > 0 {
				rest.blocks = mergeBlocks(rest.blocks, p.opt.computeMax)
			}
			return rest.startAhead(ctx, async)
		}
		if err != nil {
			return err
		}
		p.tally(t0, res)
		for _, b := range p.blocks[i:j] {
			blk := p.newBlock(b)
			w, err := res.Start(ctx, b.Start-start, b.End-start, blk)
			if err != nil {
				if prev != nil {
					_ = prev.w.Wait() // nothing may write to a block after runBlocks returns
				}
				return err
			}
			if err := finish(); err != nil {
				_ = w.Wait()
				return err
			}
			prev = &startedBlock{b: b, blk: blk, w: w}
		}
		i = j
	}
	return finish()
}

// SourceBlock is a half-open range of the source list run together.
type SourceBlock struct{ Start, End int }

// PlanBlocks splits n sources into blocks whose working memory, two blocks
// in flight, fits budget; every block holds at least one source and at most
// maxBlock. It never fails: a budget below one source gives blocks of one,
// and the caller reports that budget if it cannot be met.
func PlanBlocks(n int, bytesPerSource, budget int64, maxBlock int) []SourceBlock {
	return PlanBlocksInFlight(n, bytesPerSource, budget, maxBlock, 2)
}

// PlanBlocksInFlight is PlanBlocks with inFlight blocks alive at once (at
// least 1): 2 for a runner that runs one block while the previous is
// written, 3 for an AsyncRunner, whose third block is being copied out.
func PlanBlocksInFlight(n int, bytesPerSource, budget int64, maxBlock, inFlight int) []SourceBlock {
	if n == 0 {
		return nil
	}
	size := n
	if bytesPerSource > 0 && budget > 0 {
		size = int(min(int64(n), max(1, budget/(int64(max(inFlight, 1))*bytesPerSource))))
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

// pinnedBlockBytes bounds the distances of a host block that only carries
// rows of a device block to the host (the matrix layout on the GPU): the
// block pool pins a few such blocks, and pinning is slow and holds the
// driver back meanwhile (H100, R-MAT 16: pinning four blocks of 548 MB
// while the kernels ran took their time from 0.32 to 0.92 s).
const pinnedBlockBytes = 64 << 20

// splitBlocks splits every block into pieces of at most size sources.
func splitBlocks(blocks []SourceBlock, size int) []SourceBlock {
	var out []SourceBlock
	for _, b := range blocks {
		for s := b.Start; s < b.End; s += size {
			out = append(out, SourceBlock{s, min(s+size, b.End)})
		}
	}
	return out
}

// mergeBlocks joins consecutive blocks into blocks of at most size
// sources (a block larger than size stays whole).
func mergeBlocks(blocks []SourceBlock, size int) []SourceBlock {
	var out []SourceBlock
	for _, b := range blocks {
		if n := len(out); n > 0 && out[n-1].End == b.Start && b.End-out[n-1].Start <= size {
			out[n-1].End = b.End
			continue
		}
		out = append(out, b)
	}
	return out
}

func blockMax(blocks []SourceBlock) int {
	m := 0
	for _, b := range blocks {
		m = max(m, b.End-b.Start)
	}
	return m
}

func budget(opt Options, eng Engine, runner Runner) int64 {
	if opt.MemBudget > 0 {
		return opt.MemBudget
	}
	if b, ok := eng.(interface{ DeviceBudget() int64 }); ok && statsOnDevice(runner, opt) {
		return b.DeviceBudget()
	}
	if b, ok := eng.(interface{ DefaultBudget() int64 }); ok {
		return b.DefaultBudget()
	}
	return DefaultMemBudget
}

// maxBlock keeps blocks small enough for steady progress and for the
// writer to overlap the engine: at least 16 blocks on large runs, never
// fewer sources than the engine can spread over its threads. Where the
// engine reduces the stats layout itself (the GPU), a block leaves only a
// few words per source and larger blocks keep the device busier, so only
// the memory budget bounds them (H100, all-pairs stats: R-MAT 16 1.30 s in
// 5 blocks, 1.24 s in one; 256×256 grid 2.50 s in 4 blocks, 2.27 s in one).
func maxBlock(opt Options, n int, runner Runner) int {
	if opt.MaxBlock > 0 {
		return opt.MaxBlock
	}
	if statsOnDevice(runner, opt) {
		return max(256, n)
	}
	return max(256, n/16)
}

// statsOnDevice reports whether the runner reduces opt's stats layout
// itself, so that no distance block reaches the host.
func statsOnDevice(runner Runner, opt Options) bool {
	_, ok := runner.(StatsRunner)
	return ok && opt.Layout == arrowio.LayoutStats
}

// residentMax is the most sources of one device block of a
// ResidentRunner: the device budget (or --gpu-mem) over the runner's bytes
// per source, which count every device buffer of a source.
func residentMax(opt Options, eng Engine, runner Runner, sources int) int {
	b := opt.MemBudget
	if d, ok := eng.(interface{ DeviceBudget() int64 }); ok && b <= 0 {
		b = d.DeviceBudget()
	}
	per := runner.BytesPerSource()
	if b <= 0 || per <= 0 {
		return 0
	}
	return int(min(int64(sources), b/per))
}

// IsInterrupted reports whether err comes from a cancelled context.
func IsInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
