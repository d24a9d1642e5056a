package gpu

// Scratch working distances (plan.Config.ScratchBytes, issue 18): the
// batched kernel keeps its working distances group-major in r.buf.aux, a row
// per source beside the result row, so a stats block costs 8 bytes per
// source and vertex for int32 distances (one result slot, OneSlotStats).
// With a scratch, r.buf.aux is a fixed buffer of at most ScratchBytes: a phase
// runs its sources in slices that fit it, each slice filled (or seeded),
// relaxed to convergence and transposed into its result rows before the
// next, with its frontier masks in the scratch past its working
// distances. A source then costs its result row alone, and the blocks the
// pipeline plans (StatsBytesPerSource, less StatsFixedBytes) hold about
// twice the sources, so that more of the plan's leaves, minimums and
// phases apply.
//
// Choices: the slices run one after the other, each to convergence (the
// rounds of one slice read its own working distances only), and a later phase's seeds read the
// rows of the earlier phases, final in the result rows before it starts.
// Stats blocks only (RunStats under OneSlotStats): a Start reallocates a
// working row per source. Not with predecessors (their pass borrows
// r.buf.aux).

// scratchPossible reports whether the runner's stats blocks run with a
// scratch: plan.Config.ScratchBytes and OneSlotStats set, the batched
// kernel, no predecessors.
func (bk *batchedKernel) scratchPossible() bool {
	c := bk.cfg.Config
	return c.ScratchBytes > 0 && c.OneSlotStats && bk.req.Algorithm == Batched && !bk.req.WithPredecessors && bk.n > 0 &&
		!bk.scratchDeclined
}

// scratchPays reports whether a scratch gives this graph's stats blocks
// what pays for its slices (plan.Config.ScratchMinShare), on a device with
// free bytes free, of which the pipeline's stats budget takes 80 %: not
// where every source fits one block without it, nor where the blocks it
// allows hold fewer than ScratchMinShare of the vertices (R-MAT 18's
// blocks of 45 % of the vertices ran 1.48× faster with it, R-MAT 20's of
// 3.3 % 0.94×; docs/benchmarks-history.md, "Issue 18 (stats, every source)"). A
// ScratchMinShare of 0 always takes it. perSource is a stats block's
// device bytes per source (Runner.bytesPerSource of one slot), asked with
// the scratch declined and then without.
func (bk *batchedKernel) scratchPays(free int64, perSource func() int64) bool {
	share := bk.cfg.ScratchMinShare
	if share <= 0 {
		return true
	}
	budget := free / 10 * 8
	n := int64(bk.n)
	declined := bk.scratchDeclined
	defer func() { bk.scratchDeclined = declined }()
	bk.scratchDeclined = true
	without := perSource()
	bk.scratchDeclined = false
	with, fixed := perSource(), bk.scratchBytesFor(bk.scratchSources())
	if without > 0 && budget/without >= n {
		return false
	}
	return with > 0 && float64((budget-fixed)/with) >= share*float64(n)
}

// scratchFixedBytes is the device memory of a stats block's scratch
// (scratchBytesFor its slices), 0 where scratchPossible is false.
func (bk *batchedKernel) scratchFixedBytes() int64 {
	if !bk.scratchPossible() {
		return 0
	}
	return bk.scratchBytesFor(bk.scratchSources())
}

// scratchSources is the most sources one slice of the scratch holds: the
// working distances of ScratchBytes, rounded down to whole groups, at
// least one group; 0 without a scratch.
func (bk *batchedKernel) scratchSources() int {
	if !bk.scratchPossible() {
		return 0
	}
	row := int64(bk.n) * int64(bk.distType.Size())
	s := int(min(bk.cfg.ScratchBytes/row, int64(bk.n)+BatchWidth))
	return max(BatchWidth, s/BatchWidth*BatchWidth)
}

// scratchBytesFor is the device memory of a scratch for slices of s
// sources: their working distances, aligned to 256 bytes, then their
// frontier (batchedFrontierBytes).
func (bk *batchedKernel) scratchBytesFor(s int) int64 {
	return scratchDistBytes(bk.n, s, bk.distType.Size()) + batchedFrontierBytes(bk.n, s, false)
}

// scratchDistBytes is the bytes of the working distances of s sources over
// n vertices, rounded up to 256: where a slice's frontier starts.
func scratchDistBytes(n, s, size int) int64 {
	return (int64(s)*int64(n)*int64(size) + 255) &^ 255
}

// runPhaseScratch is runPhase with the scratch (r.buf.scratch sources a
// slice, r.buf.aux the scratch): for every slice of the phase's k sources
// (device int32 arrays sources and rows, rows 0 for the identity; seeds,
// when not 0, four words per source), clear its frontier, fill or seed its
// working distances, put its sources at 0, launch rounds until one changes
// nothing, and transpose it into its rows of r.buf.dist.
func runPhaseScratch(dv *device, r *Runner, name string, k int, sources, rows, seeds, arcs uint64) error {
	n := r.n
	size := r.distType.Size()
	bits := "b32"
	if size == 8 {
		bits = "b64"
	}
	step := r.bk.cfg.Step(r.bk.graph.Shape(), r.req.Delta)
	cut := r.bk.stopBits()
	grid := batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)
	last := make([]int32, 1)
	vm := r.buf.aux.ptr
	frontier := vm + uint64(scratchDistBytes(n, r.buf.scratch, size))
	for lo := 0; lo < k; lo += r.buf.scratch {
		sk := min(r.buf.scratch, k-lo)
		groups := int64((sk + BatchWidth - 1) / BatchWidth)
		maskWords := groups * int64(n)
		sumWords := groups * batchedSummaryWords(n)
		lastChange := frontier
		cur := frontier + batchedHeader
		next := cur + uint64(4*maskWords)
		curSum, nextSum := next+uint64(4*maskWords), next+uint64(4*maskWords+4*sumWords)
		words := 2*maskWords + 2*sumWords
		cells := int64(sk) * int64(n)
		tiles := int64((n+31)/32) * groups
		if err := dv.launchAsync("batched_fill_b32", batchedGrid(words+batchedHeader/4), frontier, words+batchedHeader/4, uint64(0)); err != nil {
			return err
		}
		if seeds != 0 {
			if err := dv.launchAsync("batched_seedfill_"+typeSuffix(r.distType), int(min(tiles, batchedTransposeGrid)), r.buf.dist.ptr, int32(n), int32(sk),
				seeds+uint64(8*4*lo), arcs, r.csr.weights.ptr, vm, cut); err != nil {
				return err
			}
		} else if err := dv.launchAsync("batched_fill_"+bits, batchedGrid(cells), vm, cells, infinityBits(r.distType)); err != nil {
			return err
		}
		if err := dv.launchAsync("batched_seed_"+bits, (sk+threadsPerBlock-1)/threadsPerBlock, sources+uint64(4*lo), int32(sk), int32(n),
			vm, cur, curSum); err != nil {
			return err
		}
		if err := runRounds(dv, r, name, grid, sk, vm, cur, next, curSum, nextSum, lastChange, step, last); err != nil {
			return err
		}
		// Rows 0 is the identity from the slice's first source on.
		sliceRows, dist := rows, r.buf.dist.ptr
		if rows != 0 {
			sliceRows += uint64(4 * lo)
		} else {
			dist += uint64(lo) * uint64(n) * uint64(size)
		}
		if err := dv.launchAsync("batched_transpose_"+bits, int(min(tiles, batchedTransposeGrid)), vm, int32(n), int32(sk),
			sliceRows, dist); err != nil {
			return err
		}
	}
	return nil
}
