package pipeline

// The producer schedules of runBlocks: one block at a time (runInTurn),
// block i+1 started before block i lands (startAhead, an AsyncRunner), and
// device blocks larger than the host's (startResident, a ResidentRunner).

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/recovered"
)

// schedule is what Run works out, from the Options and the runner, about
// how runBlocks runs the blocks; no caller of Run sets it.
type schedule struct {
	// buildRecords, set for the matrix layout, turns a computed block into
	// its records in the producer goroutine.
	buildRecords func(*graph.Block) ([]arrow.RecordBatch, error)
	// timings, when set, receives where the blocks' time went.
	timings *timings
	// residentMax, when above the host blocks' size, is the most sources
	// of a ResidentRunner's device block.
	residentMax int
	// computeMax, when set, is the most sources a block computes on its
	// own should the device block not fit: the host blocks were split
	// into pieces of pinned memory (pinnedBlockBytes), which startAhead
	// then merges back.
	computeMax int
	// targets, when not nil, are the columns of every block (Request.Targets).
	targets []graph.VertexID
	// nearest, when above 0, keeps the k nearest of every row (Query.K).
	nearest int
	// selected: the runner selects the k nearest itself (engineSelects);
	// its blocks are k columns named by CellTargets.
	selected bool
	// blockType, when set, is the type of the blocks' values: the
	// runner's distances, or the matrix type it converts them to
	// (graph.ValueConverter).
	blockType graph.DistType
	// rounds: the runner's float64 rows are a float32 result, rounded
	// before the k nearest are chosen and handed on as float32 blocks
	// (rounding.go).
	rounds bool
}

type blockResult struct {
	end   int // sources done once this block is emitted
	block *graph.Block
	stats *graph.Stats
	// records, when not nil, are the block's records already built (the
	// matrix layout); whoever drops the result releases them.
	records []arrow.RecordBatch
}

// release releases the records of a result that carries them.
func (res blockResult) release() {
	for _, r := range res.records {
		r.Release()
	}
}

// asyncRunner returns runner as an AsyncRunner where runBlocks starts its
// blocks ahead: not for the stats layout of a StatsRunner, which reduces
// on the device and copies little back.
func asyncRunner(runner graph.Runner, opt Options) (graph.AsyncRunner, bool) {
	if statsOnDevice(runner, opt) {
		return nil, false
	}
	a, ok := runner.(graph.AsyncRunner)
	return a, ok
}

// blocksInFlight is the number of blocks runBlocks holds in host memory at
// once: the one the sink writes and the one computing, and with an
// AsyncRunner a third, the one whose results are arriving
// (graph.BlockSizing.InFlight).
func blocksInFlight(runner graph.Runner, opt Options) int {
	return sizingOf(runner, opt).InFlight
}

// runBlocks computes the blocks in one goroutine and hands them to sink in
// order in the caller's goroutine, so that block i+1 computes while block i
// is written. With an AsyncRunner it starts block i+1 before waiting for
// block i, so that block i travels to the host while block i+1 computes and
// block i-1 is written: three blocks are alive, and the hand-over to the
// sink is unbuffered so that no fourth is. The budget counts the blocks in
// flight (blocksInFlight). Every block started is waited for before
// runBlocks returns, whatever fails.
func runBlocks(ctx context.Context, g *Graph, runner graph.Runner, opt Options, sched schedule, sources []graph.VertexID, blocks []SourceBlock, sink func(blockResult) error) error {
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
	p := producer{g: g, runner: runner, opt: opt, sched: sched, sources: sources, blocks: blocks, send: send}
	if opt.Layout == arrowio.LayoutMatrix && sched.buildRecords != nil && sched.targets == nil {
		// The pool's blocks are full rows (a cutoff alone keeps them),
		// which every runner writes whole (the CPU runner too:
		// cpu.TestRunOverwritesStaleBlocks). On the CPU, reusing them
		// spares the page faults of fresh memory and the garbage of the
		// blocks written.
		p.pool = &blockPool{}
		p.pool.pin, _ = runner.(graph.HostPinner)
		if d, ok := runner.(graph.DeviceSet); ok {
			p.pool.keep = d.Depth(false) + 2 // started, at the sink, in its records
		}
	}
	errc := make(chan error, 1)
	go func() {
		defer close(results)
		if p.pool != nil {
			defer p.pool.close() // after every block started has landed
		}
		var err error
		defer func() {
			if err != nil {
				errc <- err
			}
		}()
		// A panic in the engine or a block's records fails this run alone
		// (a server's other queries go on).
		defer recovered.Catch(&err)
		if rr, ok := runner.(graph.ResidentRunner); ok && ahead && sched.residentMax > blockMax(blocks) {
			err = p.startResident(ctx, rr, async, sched.residentMax)
		} else if ahead {
			err = p.startAhead(ctx, async)
		} else {
			err = p.runInTurn(ctx)
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
	runner  graph.Runner
	opt     Options
	sched   schedule
	sources []graph.VertexID
	blocks  []SourceBlock
	send    func(blockResult) error
	// pool, when set, recycles the blocks' distance arrays (matrix records
	// of full rows, which every runner writes whole).
	pool *blockPool
}

// blockType is the type of the values of the blocks the runner fills.
func (p *producer) blockType() graph.DistType {
	if p.sched.blockType != 0 {
		return p.sched.blockType
	}
	return p.runner.DistType()
}

func (p *producer) newBlock(b SourceBlock) *graph.Block {
	if p.sched.selected {
		blk := graph.NewBlock(p.sources[b.Start:b.End], p.sched.nearest, p.runner.DistType(), false)
		blk.NumVertices = p.g.NumVertices()
		blk.CellTargets = make([]graph.VertexID, (b.End-b.Start)*p.sched.nearest)
		return blk
	}
	if p.pool != nil {
		return p.pool.block(p.sources[b.Start:b.End], p.g.NumVertices(), p.blockType(), p.opt.WithPredecessors || p.opt.WithPaths)
	}
	return graph.NewTargetBlock(p.sources[b.Start:b.End], p.sched.targets, p.g.NumVertices(), p.blockType(), p.opt.WithPredecessors || p.opt.WithPaths)
}

// result is what the sink gets of a computed block.
func (p *producer) result(b SourceBlock, blk *graph.Block) (blockResult, error) {
	if p.opt.WithPaths && blk.PathPred == nil && blk.Targets == nil {
		blk.PathPred = blk.Pred // full rows: the predecessors are the path's
	}
	if p.opt.Layout == arrowio.LayoutStats {
		// The stats sum the float64 distances; the sink rounds them.
		return blockResult{end: b.End, stats: graph.ComputeStatsThreads(blk, p.opt.Threads)}, nil
	}
	if p.sched.nearest > 0 && !p.sched.selected {
		if p.sched.rounds {
			roundRows(blk, p.opt.Threads) // the k nearest of the rounded values
		}
		blk = nearestOfThreads(blk, p.sched.nearest, p.opt.Threads)
	}
	if p.sched.rounds {
		blk = float32Block(blk, p.opt.Threads)
	}
	if p.sched.buildRecords != nil {
		recs, err := p.sched.buildRecords(blk)
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
	if t := p.sched.timings; t != nil {
		t.records += t1.Sub(t0)
		t.handOver += time.Since(t1)
	}
	if err != nil {
		res.release()
		return err
	}
	return nil
}

// runInTurn runs each block to the end before the next; the stats of
// several devices go through statsAhead.
func (p *producer) runInTurn(ctx context.Context) error {
	statsRunner, _ := p.runner.(graph.StatsRunner)
	if d, ok := p.runner.(graph.DeviceSet); ok && p.opt.Layout == arrowio.LayoutStats {
		return p.statsAhead(ctx, d)
	}
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
// On several devices (a graph.DeviceSet) it keeps as many blocks started
// as keep every device busy (Depth), and cuts the blocks of the last round
// among them (TailCuts).
func (p *producer) startAhead(ctx context.Context, async graph.AsyncRunner) error {
	ahead := 1
	devices, _ := async.(graph.DeviceSet)
	var blocks []graph.SourceBlock
	if devices != nil {
		ahead, blocks = devices.Depth(false)-1, seamBlocks(p.blocks)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var started []*startedBlock
	waitAll := func() { // nothing may write to a block after runBlocks returns
		cancel() // the blocks left stop where they can
		for _, s := range started {
			_ = s.w.Wait()
		}
	}
	finishOldest := func() error {
		s := started[0]
		started = started[1:]
		if err := p.finish(s); err != nil {
			waitAll()
			return err
		}
		return nil
	}
	for i, b := range p.blocks {
		blk := p.newBlock(b)
		t0 := time.Now()
		var w graph.Waiter
		var err error
		if devices != nil {
			w, err = devices.StartCut(ctx, blk, devices.TailCuts(i, blocks))
		} else {
			w, err = async.Start(ctx, blk)
		}
		p.tally(t0, nil)
		if err != nil {
			waitAll()
			return err
		}
		started = append(started, &startedBlock{b: b, blk: blk, w: w})
		if len(started) > ahead {
			if err := finishOldest(); err != nil {
				return err
			}
		}
	}
	for len(started) > 0 {
		if err := finishOldest(); err != nil {
			return err
		}
	}
	return nil
}

// statsAhead reduces the stats of the blocks on several devices: it keeps
// as many blocks submitted as keep every device busy
// (graph.DeviceSet.Depth), sends each block's stats on in order, and cuts
// the blocks of the last round among them (TailCuts).
func (p *producer) statsAhead(ctx context.Context, d graph.DeviceSet) error {
	type submitted struct {
		b SourceBlock
		j graph.StatsWaiter
	}
	ahead, blocks := d.Depth(true)-1, seamBlocks(p.blocks)
	ctx, cancel := context.WithCancel(ctx)
	var queued []submitted
	defer func() { // nothing may write to a block after runBlocks returns
		cancel() // the blocks left (after a failure) stop where they can
		for _, s := range queued {
			_ = s.j.Wait()
		}
	}()
	t0 := time.Now()
	sendOldest := func() error {
		s := queued[0]
		queued = queued[1:]
		if err := s.j.Wait(); err != nil {
			return err
		}
		p.tally(t0, nil)
		t0 = time.Now()
		return p.send(blockResult{end: s.b.End, stats: s.j.Stats()})
	}
	for i, b := range p.blocks {
		j, err := d.StartStats(ctx, p.sources[b.Start:b.End], d.TailCuts(i, blocks))
		if err != nil {
			return err
		}
		queued = append(queued, submitted{b, j})
		if len(queued) > ahead {
			if err := sendOldest(); err != nil {
				return err
			}
		}
	}
	for len(queued) > 0 {
		if err := sendOldest(); err != nil {
			return err
		}
	}
	return nil
}

// startedBlock is a block whose results are on their way.
type startedBlock struct {
	b   SourceBlock
	blk *graph.Block
	w   graph.Waiter
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
	if t := p.sched.timings; t != nil {
		t.compute += time.Since(t0)
		t.addDevice(dev)
	}
}

// startResident computes the blocks in device blocks of up to max sources
// (consecutive host blocks together) and starts each host block's rows
// from its device block before it waits for the previous host block.
//
// A device block that does not fit (graph.ErrResidentTooLarge) sends the rest
// of the run through startAhead, whose blocks halve where they must.
func (p *producer) startResident(ctx context.Context, rr graph.ResidentRunner, async graph.AsyncRunner, max int) error {
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
			p.pool.prefill(len(p.blocks), blockMax(p.blocks)*p.g.NumVertices(), p.blockType())
		}
		t0 := time.Now()
		res, err := rr.ComputeResident(ctx, p.sources[start:end])
		if errors.Is(err, graph.ErrResidentTooLarge) {
			rest := *p
			rest.blocks = p.blocks[i:]
			if p.sched.computeMax > 0 {
				rest.blocks = mergeBlocks(rest.blocks, p.sched.computeMax)
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
