package gpu

// The algorithm ch on the device: PHAST (Delling, Goldberg, Nowatzyk,
// Werneck, IPDPS 2011) batched over a block of sources, on a contraction
// hierarchy built on the host (package hierarchy). Per block the device
// puts every source at 0 in its vertex-major table, runs the upward phase
// as a sweep over the upward levels (a DP in rising rank, where the CPU's
// PHAST runs a Dijkstra: for thousands of sources at once the device's
// O(arcs) per source beats the host's searches, measured), then the
// downward sweep over the downward levels, one kernel a level each
// (kernels/ch.cu), and gathers the table into the block's rows, which then
// travel and reduce as every kernel's rows do (targets, cutoff, k nearest,
// the matrix's values). The stats layout of every vertex (RunStats) skips
// the rows: the table is reduced where it lies, each source's positions in
// chunks, added in a fixed order (measured on the 256² grid's all pairs:
// 8.7 ms against 15.0 ms for the rows and about 8 ms for their reduction).
//
// Choices: int32 distances only (the graph's type; the hierarchy's
// weights must fit, and PrepareCH refuses a hierarchy whose heaviest arc
// does not). The table lives in the block's auxiliary buffer (4 bytes a
// vertex and source, as the rows).

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/trace"
)

// chSweep is a runner's hierarchy: its sweep's arrays on the host and on
// the device, and the events that time the phases of a block.
type chSweep struct {
	sweep *hierarchy.Sweep
	// The downward phase's arcs by position (start, tail, weight), the
	// upward phase's order and arcs, each vertex's position.
	arcStart, arcTail, arcWeight, position      devBuf
	upOrder, upArcStart, upArcTail, upArcWeight devBuf
	// live is the upward phase's byte per position and group of 32
	// sources: whether any of their distances there is finite (grown to
	// the largest block).
	live devBuf
	// stats, while RunStats runs, makes a block's last phase reduce the
	// stats layout's words from the table into r.buf.stats
	// (ch_stats_i32, through partial's chunks) instead of gathering its
	// rows: the rows would only be read once by the stats kernel.
	stats   bool
	partial devBuf
	// phases mark the ends of the table's start, the upward and the
	// downward phase (0 until the first block).
	phases [3]uintptr
}

var chPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size()}
	},
	launch:              func(r *Runner, k int) error { return r.ch.launch(r, k) },
	derivesPredecessors: never,
}

// prepareCH is Engine.PrepareCH.
func prepareCH(ctx context.Context, e *Engine, g *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (*Runner, error) {
	switch {
	case req.Algorithm != graph.CH:
		return nil, fmt.Errorf("gpu: PrepareCH of the algorithm %s", req.Algorithm)
	case req.WithPredecessors:
		return nil, errors.New("gpu: the algorithm ch keeps no predecessors")
	case g.Type != graph.DistInt32:
		return nil, fmt.Errorf("gpu: the algorithm ch runs on int32 distances only so far, not %s", g.Type)
	case h == nil || h.NumVertices() != g.NumVertices:
		return nil, errors.New("gpu: PrepareCH without the graph's hierarchy")
	}
	sw, err := hierarchy.NewSweep(h)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	r, err := e.prepare(ctx, g, req, defaultBatchedConfig())
	if err != nil {
		return nil, err
	}
	r.ch = &chSweep{sweep: sw}
	if err := e.dev.do(func() error { return r.ch.upload(e.dev) }); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// upload puts the sweep's arrays on dv (on the device goroutine).
func (c *chSweep) upload(dv *device) error {
	sw := c.sweep
	var err error
	for _, b := range []struct {
		buf  *devBuf
		host []byte
	}{
		{&c.arcStart, asBytes(sw.ArcStart)}, {&c.arcTail, asBytes(sw.ArcTail)}, {&c.arcWeight, asBytes(sw.ArcWeight)},
		{&c.position, asBytes(sw.Position)}, {&c.upOrder, asBytes(sw.UpOrder)}, {&c.upArcStart, asBytes(sw.UpArcStart)},
		{&c.upArcTail, asBytes(sw.UpArcTail)}, {&c.upArcWeight, asBytes(sw.UpArcWeight)},
	} {
		if len(b.host) == 0 {
			continue
		}
		if *b.buf, err = dv.upload(b.host); err != nil {
			return err
		}
	}
	return nil
}

// release frees the device arrays and events (nil-safe; on the device
// goroutine).
func (c *chSweep) release(dv *device) error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, b := range []*devBuf{&c.arcStart, &c.arcTail, &c.arcWeight, &c.position, &c.upOrder, &c.upArcStart, &c.upArcTail, &c.upArcWeight, &c.live, &c.partial} {
		errs = append(errs, dv.free(b))
	}
	for i, ev := range c.phases {
		if ev != 0 {
			errs = append(errs, dv.d.cuEventDestroy_v2(ev).Err("cuEventDestroy_v2"))
			c.phases[i] = 0
		}
	}
	return errors.Join(errs...)
}

// launch computes the rows of the k sources in r.buf.sources into
// r.buf.dist, with r.buf.aux as the table (on the device goroutine), and
// traces the device time of each phase.
func (c *chSweep) launch(r *Runner, k int) error {
	if c == nil {
		return errors.New("gpu: the algorithm ch needs a hierarchy (PrepareCH)")
	}
	dv := r.e.dev
	for i := range c.phases {
		if c.phases[i] == 0 {
			if err := dv.d.cuEventCreate(&c.phases[i], 0).Err("cuEventCreate"); err != nil {
				return err
			}
		}
	}
	n, sw, table := r.n, c.sweep, r.buf.aux.ptr
	cells := uint64(k) * uint64(n)
	mark := func(ev uintptr) error { return dv.d.cuEventRecord(ev, 0).Err("cuEventRecord") }
	if err := mark(dv.start); err != nil {
		return err
	}
	if err := dv.d.cuMemsetD32_v2(table, uint32(math.MaxInt32), cells).Err("cuMemsetD32_v2 (ch table)"); err != nil {
		return err
	}
	liveWords := (uint64(n)*((uint64(k)+31)/32) + 3) / 4
	if err := ensureBuf(dv, &c.live, int64(4*liveWords)); err != nil {
		return err
	}
	if err := dv.d.cuMemsetD32_v2(c.live.ptr, 0, liveWords).Err("cuMemsetD32_v2 (ch live groups)"); err != nil {
		return err
	}
	if err := dv.launchAsync("ch_sources_i32", batchedGrid(int64(k)), table, c.live.ptr, int32(k), c.position.ptr, r.buf.sources.ptr); err != nil {
		return err
	}
	if err := mark(c.phases[0]); err != nil {
		return err
	}
	for l := range sw.UpLevels() {
		first, last := sw.UpLevelStart[l], sw.UpLevelStart[l+1]
		if sw.UpArcStart[last] == sw.UpArcStart[first] {
			continue // no arc enters the level
		}
		groups := (int64(k) + 31) / 32
		err := dv.launchAsync("ch_up_live_i32", batchedGrid(int64(last-first)*groups), c.live.ptr, int32(k), first, last,
			c.upOrder.ptr, c.upArcStart.ptr, c.upArcTail.ptr)
		if err != nil {
			return err
		}
		err = dv.launchAsync("ch_up_i32", batchedGrid(int64(last-first)*int64(k)), table, c.live.ptr, int32(k), first, last,
			c.upOrder.ptr, c.upArcStart.ptr, c.upArcTail.ptr, c.upArcWeight.ptr)
		if err != nil {
			return err
		}
	}
	if err := mark(c.phases[1]); err != nil {
		return err
	}
	for l := range sw.Levels() {
		first, last := sw.LevelStart[l], sw.LevelStart[l+1]
		if sw.ArcStart[last] == sw.ArcStart[first] {
			continue
		}
		err := dv.launchAsync("ch_down_i32", chLevelGrid(k, last-first), table, c.live.ptr, int32(k), first, last,
			c.arcStart.ptr, c.arcTail.ptr, c.arcWeight.ptr)
		if err != nil {
			return err
		}
	}
	if err := mark(c.phases[2]); err != nil {
		return err
	}
	last := "rows"
	if c.stats {
		last = "stats"
		if err := c.reduceStats(r, k); err != nil {
			return err
		}
	} else {
		tiles := (uint64(n) + 31) / 32 * ((uint64(k) + 31) / 32)
		if err := dv.launchAsync("ch_rows_i32", int(min(tiles, batchedTransposeGrid)), table, int32(k), int32(n), c.position.ptr, r.buf.dist.ptr); err != nil {
			return err
		}
	}
	if err := dv.finishTimed("ch_" + last); err != nil {
		return err
	}
	if trace.On() {
		var ms [4]float32
		bounds := []uintptr{dv.start, c.phases[0], c.phases[1], c.phases[2], dv.stop}
		for i := range ms {
			_ = dv.d.cuEventElapsedTime(&ms[i], bounds[i], bounds[i+1])
		}
		tracef(dv.ordinal, "ch of %d sources: table %.2f ms, upward %.2f ms (%d levels), downward %.2f ms (%d levels), %s %.2f ms",
			k, ms[0], ms[1], sw.UpLevels(), ms[2], sw.Levels(), last, ms[3])
	}
	return nil
}

// chLevelGrid is the grid of ch_down_i32 over a level of positions for k
// sources (kernels/ch.cu, item): rows of ceil(k / threadsPerBlock)
// blocks, one row a position, as many rows as the level has positions and
// batchedTransposeGrid blocks allow (one at least).
func chLevelGrid(k int, positions int32) int {
	row := (int64(k) + threadsPerBlock - 1) / threadsPerBlock
	return int(row * max(1, min(int64(positions), batchedTransposeGrid/row)))
}

// chStatsThreads is about how many threads ch_stats_i32 runs: a block's
// positions are cut into as many chunks per source as give that many (a
// variable for the tests, which make chunks of many positions on small
// graphs).
var chStatsThreads = 1 << 20

// reduceStats queues the reduction of the k sources' stats words from the
// table into r.buf.stats (kernels/ch.cu, ch_stats_i32 and
// ch_stats_sum_i32; on the device goroutine).
func (c *chSweep) reduceStats(r *Runner, k int) error {
	dv, n := r.e.dev, r.n
	chunks := int64(max(1, min(n, (chStatsThreads+k-1)/k)))
	if err := ensureBuf(dv, &c.partial, statsWords*8*chunks*int64(k)); err != nil {
		return err
	}
	grid := func(threads int64) int { return int((threads + threadsPerBlock - 1) / threadsPerBlock) }
	if err := dv.launchAsync("ch_stats_i32", grid(chunks*int64(k)), r.buf.aux.ptr, int32(k), int32(n), c.position.ptr,
		r.buf.sources.ptr, int32(chunks), c.partial.ptr); err != nil {
		return err
	}
	return dv.launchAsync("ch_stats_sum_i32", grid(int64(k)), c.partial.ptr, int32(k), int32(chunks), r.buf.stats.ptr)
}

// ensureBuf grows b to size bytes (on the device goroutine).
func ensureBuf(dv *device, b *devBuf, size int64) error {
	if b.size >= size {
		return nil
	}
	if err := dv.free(b); err != nil {
		return err
	}
	var err error
	*b, err = dv.alloc(size)
	if isOutOfMemory(err) {
		return outOfMemory(dv, 0, size, err)
	}
	return err
}
