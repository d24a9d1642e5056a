package gpu

// The batched kernel's launches for one block (batched.go): where the
// block's plan lies on the device, its phases in order, their rounds
// (near-far or not), the copies from resident rows and the derivations
// after them.

import (
	"errors"
	"math"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/internal/trace"
)

// batchedRun is where a block's plan lies on the device: the kernel's
// sources and their rows (int32 arrays; rows 0 for the block's own order),
// the phases' source counts and frontier storage, the later phases' seeds
// (4 words per source, in phase order) and the arcs (2 words each) of seeds
// and minimums, and the derivations after the kernel.
type batchedRun struct {
	// nearFar runs near-far rounds with buckets of width delta
	// (plan.Config.NearFar).
	nearFar       bool
	delta         float64
	phases        []int
	sources, rows []uint64 // per phase; rows 0 for the block's own order
	frontiers     []uint64
	seeds, arcs   uint64
	// seedFirst: the seeds start with the first phase's sources
	// (plan.Block.SeedFirst), else with the second's.
	seedFirst bool
	after     derivations
	// copies are the rows copied from resident rows after the phases
	// (plan.Block.Copies).
	copies []plan.Copy
	// later, when set, completes the plan on the device (its later
	// phases' sources, rows and seeds, the derivations) before the second
	// phase.
	later func() error
	// early, when set, splits the work around hub rows that arrive late
	// (plan.Block.SplitLate): what reads none of them runs first, then
	// late is waited for (when set), then the rest.
	early *plan.Early
	late  *lateHubRows
}

// derivations is where the device copy of a plan's derivations lies:
// the leaves' (4 words each, passes[0] then passes[1] of them) and the
// minimums' (4 words each, reading the arcs of batchedRun).
type derivations struct {
	leaves   uint64
	passes   [2]int
	mins     uint64
	minCount int
}

// runBatched launches a block's phases in order (the plan's later part
// uploaded before the second), then the minimums and the leaves'
// derivations, between two CUDA events. Under a cutoff in the kernel it
// first uploads the arcs in rising weight where they are not yet there
// (uploadArcsByWeight).
func runBatched(dv *device, r *Runner, run *batchedRun) error {
	n := r.n
	if err := r.csr.uploadArcsByWeight(dv, r.bk.cuts(), r.bk.graph); err != nil {
		return err
	}
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	suffix := typeSuffix(r.distType)
	prefix := "batched_"
	if run.nearFar {
		prefix = "batched_nf"
	}
	name := prefix + "round_" + suffix
	if r.bk.cuts() {
		name = prefix + "cutround_" + suffix
	}
	phases := func() error {
		off := 0
		for i, k := range run.phases {
			if i == 1 && run.later != nil {
				if err := run.later(); err != nil {
					return err
				}
			}
			seeds := uint64(0)
			switch {
			case run.seedFirst:
				seeds = run.seeds + uint64(8*4*off)
			case i > 0:
				seeds = run.seeds + uint64(8*4*(off-run.phases[0]))
			}
			if k == 0 { // every source of the block copied or derived
				continue
			}
			if err := runPhase(dv, r, run, name, k, run.frontiers[i], run.sources[i], run.rows[i], seeds, run.arcs); err != nil {
				return err
			}
			off += k
		}
		return nil
	}
	cut := r.bk.stopBits()
	// derive queues the copies [c0, c1), the minimums [m0, m1) and the
	// leaves [l0, l1) of the first pass and [p0, p1) of the second
	// (run.after is read here: the first phase's run.later sets it).
	derive := func(c0, c1, m0, m1, l0, l1, p0, p1 int) error {
		after := run.after
		if err := copyResidentRows(dv, r.buf.dist.ptr, int64(n)*int64(r.distType.Size()), run.copies[c0:c1]); err != nil {
			return err
		}
		if m1 > m0 {
			if err := dv.launchAsync("batched_mins_"+suffix, batchedGrid(int64(m1-m0)*int64(n)), r.buf.dist.ptr, int32(n), after.mins+uint64(8*4*m0),
				int64(m1-m0), run.arcs, r.csr.weights.ptr, cut); err != nil {
				return err
			}
		}
		for _, pass := range [][2]int{{l0, l1}, {after.passes[0] + p0, after.passes[0] + p1}} {
			if pass[1] <= pass[0] {
				continue
			}
			total := int64(pass[1]-pass[0]) * int64(n)
			if err := dv.launchAsync("batched_derive_"+suffix, batchedGrid(total), r.buf.dist.ptr, int32(n), after.leaves+uint64(8*4*pass[0]), int64(pass[1]-pass[0]),
				r.csr.weights.ptr, cut); err != nil {
				return err
			}
		}
		return nil
	}
	all := func() [4]int {
		return [4]int{len(run.copies), run.after.minCount, run.after.passes[0], run.after.passes[1]}
	}
	if e := run.early; e != nil {
		// What reads no late row first, while the late rows land.
		early := func() error {
			if !e.KernelLate {
				if err := phases(); err != nil {
					return err
				}
			}
			return derive(0, e.Copies, 0, e.Mins, 0, e.Passes[0], 0, 0)
		}
		if err := early(); err != nil {
			return err
		}
		var mid uintptr // (traced: when the early part ends on the device)
		var landed time.Time
		if trace.On() && dv.d.cuEventCreate(&mid, 0) == Success {
			defer dv.d.cuEventDestroy_v2(mid)
			dv.d.cuEventRecord(mid, 0)
			queued := time.Now()
			defer func() {
				var early, rest float32
				dv.d.cuEventElapsedTime(&early, dv.start, mid)
				dv.d.cuEventElapsedTime(&rest, mid, dv.stop)
				tracef(r.ordinal, "block split around the late rows: early part %.1f ms on the device, the rest %.1f ms; the rows landed %s after the early part was queued",
					early, rest, landed.Sub(queued).Round(time.Microsecond))
			}()
		}
		if run.late != nil && run.late.wait() {
			// Another device failed before its rows landed: compute them
			// here (their kernels use the block's rows), then the early
			// part again.
			if err := r.hubs.ensure(); err != nil {
				return err
			}
			if err := early(); err != nil {
				return err
			}
		}
		landed = time.Now()
		if e.KernelLate {
			if err := phases(); err != nil {
				return err
			}
		}
		a := all()
		if err := derive(e.Copies, a[0], e.Mins, a[1], e.Passes[0], a[2], 0, a[3]); err != nil {
			return err
		}
	} else {
		if err := phases(); err != nil {
			return err
		}
		a := all()
		if err := derive(0, a[0], 0, a[1], 0, a[2], 0, a[3]); err != nil {
			return err
		}
	}
	return dv.finishTimed(name)
}

// copyResidentRows queues the copies of rows of rowBytes in the buffer at base,
// one device-to-device copy per run of rows consecutive on both sides
// (Runner.BlockOrder puts a block's hubs in the hub rows' order, so that
// it copies them in one piece). The copies are ordered with the kernels
// before and after them on the same stream.
func copyResidentRows(dv *device, base uint64, rowBytes int64, copies []plan.Copy) error {
	for i := 0; i < len(copies); {
		j := i + 1
		for j < len(copies) && copies[j].Dst == copies[j-1].Dst+1 && copies[j].Src == copies[j-1].Src+1 {
			j++
		}
		dst, src := base+uint64(int64(copies[i].Dst)*rowBytes), base+uint64(int64(copies[i].Src)*rowBytes)
		if err := dv.d.cuMemcpyDtoD_v2(dst, src, uint64(int64(j-i)*rowBytes)).Err("cuMemcpyDtoD_v2"); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// batchedGrid is the thread blocks of a kernel striding over count elements.
func batchedGrid(count int64) int {
	return int(min((count+threadsPerBlock-1)/threadsPerBlock, batchedTransposeGrid))
}

// runPhase runs the round kernel name for k sources (device int32 arrays
// sources and rows, rows 0 for the identity) and transposes their
// distances into their rows of r.buf.dist: clear the frontier, start the
// working distances in r.buf.aux at infinity (or, with seeds, from the first
// phase's rows through batched_seedfill), put the sources at 0, and launch
// rounds over every group at once, back to back until one changes
// nothing. Near-far rounds (run.nearFar) lay the frontier out as
// batchedFrontierBytes says and run through runNearFarRounds. With a scratch (r.buf.scratch, scratch.go)
// runPhaseScratch runs it instead, and frontier is not read.
func runPhase(dv *device, r *Runner, run *batchedRun, name string, k int, frontier, sources, rows, seeds, arcs uint64) error {
	if r.buf.scratch > 0 {
		return runPhaseScratch(dv, r, name, k, sources, rows, seeds, arcs)
	}
	n := r.n
	groups := int64((k + BatchWidth - 1) / BatchWidth)
	maskWords := groups * int64(n)
	sumWords := groups * batchedSummaryWords(n)
	lastChange := frontier
	header, arrays := int64(batchedHeader), int64(2)
	if run.nearFar {
		header, arrays = nearFarHeader, 4
	}
	// cur and next are the first two mask arrays, curSum and nextSum the
	// first two summaries (near-far: M0, M1 and their summaries).
	cur := frontier + uint64(header)
	next := cur + uint64(4*maskWords)
	sums := cur + uint64(4*arrays*maskWords)
	curSum, nextSum := sums, sums+uint64(4*sumWords)
	words := arrays*maskWords + arrays*sumWords + header/4
	cells := int64(k) * int64(n)
	bits := "b32"
	if r.distType.Size() == 8 {
		bits = "b64"
	}
	step := r.bk.cfg.Step(r.bk.graph.Shape(), r.req.Delta)
	cut := r.bk.stopBits()
	tiles := int64((n+31)/32) * groups
	if err := dv.launchAsync("batched_fill_b32", batchedGrid(words), frontier, words, uint64(0)); err != nil {
		return err
	}
	if seeds != 0 {
		if err := dv.launchAsync("batched_seedfill_"+typeSuffix(r.distType), int(min(tiles, batchedTransposeGrid)), r.buf.dist.ptr, int32(n), int32(k),
			seeds, arcs, r.csr.weights.ptr, r.buf.aux.ptr, cut); err != nil {
			return err
		}
	} else if err := dv.launchAsync("batched_fill_"+bits, batchedGrid(cells), r.buf.aux.ptr, cells, infinityBits(r.distType)); err != nil {
		return err
	}
	if err := dv.launchAsync("batched_seed_"+bits, (k+threadsPerBlock-1)/threadsPerBlock, sources, int32(k), int32(n),
		r.buf.aux.ptr, cur, curSum); err != nil {
		return err
	}
	grid := batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)
	last := make([]int32, 1)
	if run.nearFar {
		if err := runNearFarRounds(dv, r, name, grid, k, r.buf.aux.ptr, cur, curSum, maskWords, sumWords, frontier, run.delta); err != nil {
			return err
		}
	} else if err := runRounds(dv, r, name, grid, k, r.buf.aux.ptr, cur, next, curSum, nextSum, lastChange, step, last); err != nil {
		return err
	}
	return dv.launchAsync("batched_transpose_"+bits, int(min(tiles, batchedTransposeGrid)), r.buf.aux.ptr, int32(n), int32(k),
		rows, r.buf.dist.ptr)
}

// runRounds launches rounds of the kernel name over k sources (working
// distances at aux, masks at cur, next, curSum, nextSum) back to back
// until one changes nothing, reading the last-change word into last
// every few rounds.
func runRounds(dv *device, r *Runner, name string, grid, k int, aux, cur, next, curSum, nextSum, lastChange uint64,
	step float64, last []int32) error {
	n := r.n
	arcTargets, arcWeights := r.csr.roundArcs(r.bk.cuts())
	cut := r.bk.stopBits()
	batch := r.bk.firstRounds(step)
	for round := int32(1); ; {
		for range batch {
			if err := dv.launchAsync(name, grid, r.csr.offsets.ptr, arcTargets, arcWeights, int32(n), int32(k),
				aux, cur, next, curSum, nextSum, lastChange, round, batchedThreshold(step, round), int32(r.bk.cfg.Sparse), uint64(0),
				cut); err != nil {
				return err
			}
			cur, next = next, cur
			curSum, nextSum = nextSum, curSum
			round++
		}
		if err := dv.readBack(unsafe.Pointer(&last[0]), lastChange, 4, name); err != nil {
			return err
		}
		if last[0] < round-1 {
			break
		}
		if round > math.MaxInt32/2 {
			return errors.New("gpu: batched kernel did not converge")
		}
		batch = min(2*batch, batchedMaxRounds)
	}
	return nil
}

// runNearFarRounds runs near-far rounds of the kernel name over k sources
// (working distances at aux; the four mask arrays from masks and their
// summaries from sums, maskStride and sumStride words apart; the control
// words at control) until the control words say done: it resets the
// control words with the bound at delta (batched_nfstart), then queues
// launches of the round kernel, each followed by batched_nfadvance, in
// batches that double from batchedFirstRounds to batchedMaxRounds, and
// reads the done word between batches (launches after done return at
// once).
func runNearFarRounds(dv *device, r *Runner, name string, grid, k int, aux, masks, sums uint64, maskStride, sumStride int64,
	control uint64, delta float64) error {
	n := r.n
	arcTargets, arcWeights := r.csr.roundArcs(r.bk.cuts())
	cut := r.bk.stopBits()
	if err := dv.launchAsync("batched_nfstart", 1, control, delta); err != nil {
		return err
	}
	state := make([]uint64, 2) // done, rounds (on the heap, as runRounds' last)
	launches := 0
	for batch := batchedFirstRounds; ; batch = min(2*batch, batchedMaxRounds) {
		for range batch {
			if err := dv.launchAsync(name, grid, r.csr.offsets.ptr, arcTargets, arcWeights, int32(n), int32(k), aux, masks, sums,
				maskStride, sumStride, control, int32(r.bk.cfg.Sparse), int32(r.bk.cfg.NearFarOwn), uint64(0), cut); err != nil {
				return err
			}
			if err := dv.launchAsync("batched_nfadvance", 1, control, delta); err != nil {
				return err
			}
			launches++
		}
		if err := dv.readBack(unsafe.Pointer(&state[0]), control+8*nearFarDoneWord, 16, name); err != nil {
			return err
		}
		if state[0] != 0 {
			return nil
		}
		if launches > math.MaxInt32/2 {
			return errors.New("gpu: batched near-far rounds did not converge")
		}
	}
}

// batchedThreshold is the distance up to which round expands vertices:
// step·round, or +Inf without a step or past batchedOrderedRounds.
func batchedThreshold(step float64, round int32) float64 {
	if step <= 0 || math.IsNaN(step) || round > batchedOrderedRounds {
		return math.Inf(1)
	}
	return step * float64(round)
}
