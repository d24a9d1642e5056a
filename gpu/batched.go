package gpu

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/trace"
)

// Batched is the engine's own kernel for non-negative weights: multi-source
// label correcting over groups of BatchWidth sources, kernels/batched.cu.
// It is not one of the user-facing algorithm names (graph.ParseAlgorithm
// refuses it): package pipeline asks for it when it resolves auto, and
// Prepare accepts it like the seed algorithms. Negative weights are refused
// as for dijkstra; predecessors come from kernels/predecessors.cu. The host
// plans each block (which sources the kernel computes, in which order and
// phases, and how the others' rows are derived) in package
// gpu/internal/plan; this file uploads the plan and launches the kernels.
const Batched graph.Algorithm = "batched"

// BatchWidth is the number of sources one warp relaxes together: a group of
// sources shares its frontier bitmasks, one 32-bit word per vertex.
const BatchWidth = plan.BatchWidth

// BatchedDescription says what auto runs when it picks Batched.
const BatchedDescription = "batched label-correcting (B=32 sources per warp-row)"

// batchedPlan: per source and vertex, the result row (D bytes) and the
// group-major working distances (D bytes, in aux). The frontier masks (per
// group of 32 sources: 2·n words plus 2·ceil(n/1024) summary words, 1/4
// byte per source and vertex and a little) live in the result buffer while
// the rounds run, since the result is written only by the transpose at the
// end; blocks too small for that borrow a temporary buffer.
var batchedPlan = kernelPlan{
	layout: func(t graph.DistType, _ bool) layout {
		return layout{dist: t.Size(), aux: t.Size()}
	},
	launch:              launchBatched,
	derivesPredecessors: always,
}

// batchedFrontierBytes is the size of the frontier storage for k sources
// over n vertices (see kernels/batched.cu): a header of batchedHeader bytes
// (the word that records the last round that changed anything), then the
// cur and next mask words and the cur and next summaries of every group;
// for near-far rounds (nearFar) a header of nearFarHeader bytes (the
// control words), then four mask arrays (two near frontiers, two far
// piles) and their four summaries.
func batchedFrontierBytes(n, k int, nearFar bool) int64 {
	groups := int64((k + BatchWidth - 1) / BatchWidth)
	if nearFar {
		return nearFarHeader + 4*groups*(4*int64(n)+4*batchedSummaryWords(n))
	}
	return batchedHeader + 4*groups*(2*int64(n)+2*batchedSummaryWords(n))
}

const (
	// batchedHeader is the bytes of the frontier storage before the masks.
	batchedHeader = 8
	// nearFarHeader is the same for near-far rounds: the control words
	// (kernels/batched.cu, NearFarControl: 11 words), rounded up so that
	// the masks start 128-byte aligned.
	nearFarHeader = 128
	// nearFarDoneWord is the index of the control word done (then rounds,
	// the launches run) among the control words.
	nearFarDoneWord = 9
)

func batchedSummaryWords(n int) int64 { return int64((n + 1023) >> 10) }

const (
	// batchedBlocksPerSM is the thread blocks of a round per multiprocessor:
	// 8 of 256 threads fill the 2048 threads of an SM of sm_70 .. sm_90; the
	// warps stride over the chunks. docs/benchmarks-history.md, "What changed, and what
	// was tried": register caps for 6 or 8 blocks per SM gained nothing.
	batchedBlocksPerSM = 8
	// batchedTransposeGrid caps the thread blocks of the transpose and the
	// fill; they stride over their work. Not measured: a grid past the
	// device's resident blocks only queues.
	batchedTransposeGrid = 1 << 16
	// batchedFirstRounds is the rounds launched before the first read of
	// the last-change word, and batchedMaxRounds the most between two reads
	// (doubling in between). docs/benchmarks-history.md, "GPU engine after the second
	// slice, H200" (convergence read back every 4–64 rounds).
	batchedFirstRounds = 4
	batchedMaxRounds   = 64
	// batchedOrderedRounds is the rounds after which the threshold is
	// dropped (plain label correcting), which bounds the rounds spent
	// waiting on a step too small for the distances. Not measured: a bound
	// far past the 572 rounds of the 256×256 grid (docs/benchmarks-history.md, "What
	// changed, and what was tried").
	batchedOrderedRounds = 1 << 14
)

// batchedConfig is how a runner runs the batched kernel: the host's plan
// and the rounds' tuning (plan.Config, from a Tuning). Each runner holds its own (newRunner), so that tests run
// configurations side by side.
type batchedConfig struct {
	plan.Config
}

// defaultBatchedConfig is what Engine.Prepare gives every runner: the
// plan's default (plan.DefaultConfig).
func defaultBatchedConfig() batchedConfig {
	return batchedConfig{Config: plan.DefaultConfig()}
}

// launchBatched runs the batched kernel for the k sources in r.sources:
// plan the kernel's sources (plan.Graph.StartResident under r.batched,
// beside the hub rows kept resident (hubs.go) where there are: leaves and
// minimums left out, phases split, groups clustered; or take the plan
// made ahead, ahead.go), fill the working distances with infinity and clear the
// masks, seed the sources, launch rounds back to back until one changes
// nothing, transpose into the rows of r.dist, and derive the rows of the
// leaves. Launches are asynchronous; the device time of the whole sequence
// is left in dv.lastKernel for Runner.launch.
func launchBatched(r *Runner, k int) error {
	if len(r.blockSources) != k {
		return fmt.Errorf("gpu: batched launch of %d sources with %d on the host", k, len(r.blockSources))
	}
	early := r.planBesideHubRows()
	if err := r.ensureHubRows(); err != nil {
		if early != nil {
			<-early // the plan's goroutine reads the runner's sources
		}
		return fmt.Errorf("gpu: batched: hub rows: %w", err)
	}
	late := r.hubs.late // rows still arriving from other devices
	r.hubs.late = nil
	began := time.Now()
	var (
		bp     *plan.Block
		finish func()
		packed *plan.Packed
		err    error
	)
	if early != nil {
		tracef(r.ordinal(), "waiting for the plan made beside the hub rows")
		p := <-early
		tracef(r.ordinal(), "plan taken")
		bp, packed, err = p.block, p.packed, p.err
	} else {
		bp, finish, packed, err = r.startPlan(r.blockSources, r.kernelCutoff(), r.residentRows())
	}
	if err == nil && late != nil && bp.Early == nil {
		// A plan not split around them waits for them first.
		if late.wait() {
			err = r.ensureHubRows()
		}
		late = nil
	}
	if err == nil {
		err = r.runPlan(bp, finish, packed, began, late)
	}
	if late != nil {
		late.wait() // (at once where the run waited already)
	}
	if err != nil {
		return fmt.Errorf("gpu: batched: %w", err)
	}
	return nil
}

// ownRows are the rows 0 .. k-1: a plan's sources in their own order,
// made explicit so that runPlan uploads them (nil Rows take the block's
// sources, r.sources).
func ownRows(k int) []int32 {
	rows := make([]int32, k)
	for i := range rows {
		rows[i] = int32(i)
	}
	return rows
}

// earlyPlan is a block's plan made while its hub rows are computed.
type earlyPlan struct {
	block  *plan.Block
	packed *plan.Packed
	err    error
}

// planBesideHubRows starts, where the block's hub rows are still to be
// computed (hubs.go), its plan on the host in a goroutine of its own: the
// plan reads which vertices the hub rows hold and where, not their
// distances, so it is made, finished and packed while the device (or the
// devices sharing them, hubshare.go) computes them, instead of after.
// R-MAT 18 on two H200s: each device's block after the hub rows waited
// 50-75 ms for its plan (docs/benchmarks-history.md, "The host off the devices'
// path"). It begins once the plan of the hub rows made ahead
// (hubPlanAhead), if any, is done: the two plans spread over every core,
// and the hub rows' later phases wait for theirs (two H200s: 207-215 ms
// for the hub rows' plan beside the blocks' against 144-171 on other
// hosts, and their second phase began 18-30 ms late; docs/benchmarks-history.md, "The
// hub rows' plan beside the blocks' plans"). nil where there is nothing
// to wait for.
func (r *Runner) planBesideHubRows() chan earlyPlan {
	if r.hubs.ready || len(r.hubs.vertices) == 0 {
		return nil
	}
	res := plan.Resident{Vertices: r.hubs.vertices, FirstRow: int32(r.hubs.firstRow)}
	sources, cut := r.blockSources, r.kernelCutoff()
	out := make(chan earlyPlan, 1)
	lateRows := make(chan []bool, 1)
	var once sync.Once
	r.hubs.tell = func(late []bool) { once.Do(func() { lateRows <- late }) }
	ahead := r.hubRun.ahead
	go func() {
		if ahead != nil {
			<-ahead.done
		}
		tracef(r.ordinal(), "plan of %d sources beside the hub rows", len(sources))
		bp, finish, packed, err := r.startPlan(sources, cut, res)
		if err == nil && packed == nil {
			if finish != nil {
				finish()
			}
			// ensureHubRows tells which rows may come late, if any.
			if late := <-lateRows; late != nil && bp.Rows != nil {
				bp.SplitLate(func(row int32) bool {
					i := row - res.FirstRow
					return i >= 0 && int(i) < len(late) && late[i]
				})
				if e := bp.Early; e != nil {
					tracef(r.ordinal(), "plan split around the late rows: early %d of %d copies, %d of %d minimums, %d of %d leaves; kernel late %v",
						e.Copies, len(bp.Copies), e.Mins, len(bp.Mins), e.Passes[0], len(bp.Derive), e.KernelLate)
				}
			}
			packed = completePlan(bp, nil)
		}
		tracef(r.ordinal(), "plan beside the hub rows made")
		out <- earlyPlan{block: bp, packed: packed, err: err}
	}()
	return out
}

// runPlan uploads the plan bp of the block in r.sources (its later part
// completed by finish, when not nil, while the first phase runs; packed,
// when not nil, is the whole plan made ahead and packed) and runs
// it (runBatched); began is when its planning began, the host's plan
// time.
func (r *Runner) runPlan(bp *plan.Block, finish func(), packed *plan.Packed, began time.Time, late *lateHubRows) (err error) {
	dv := r.e.dev
	n := r.n
	run := batchedRun{seedFirst: bp.SeedFirst, copies: bp.Copies, early: bp.Early, late: late}
	if late != nil && bp.Early == nil {
		return errors.New("gpu: batched: late hub rows beside a plan not split around them")
	}
	if r.scratch == 0 { // a scratch's slices run the threshold rounds (scratch.go)
		run.nearFar, run.delta = r.batched.NearFar(r.planGraph.Shape(), r.req.Delta)
	}
	for i := range bp.NumPhases() {
		run.phases = append(run.phases, bp.PhaseStart(i+1)-bp.PhaseStart(i))
	}
	// The first phase's frontier lies in the result rows, which only its
	// transpose writes; a later phase's behind its working distances in
	// aux (the result rows then hold the earlier phases' rows). A
	// temporary buffer serves where one does not fit.
	var bufs []devBuf // the plan's uploads and the temporary frontier
	defer func() {
		for i := range bufs {
			err = errors.Join(err, dv.free(&bufs[i]))
		}
	}()
	run.frontiers = make([]uint64, len(run.phases))
	if r.scratch == 0 { // with a scratch the frontiers lie in it (scratch.go)
		need := make([]int64, len(run.phases))
		where := make([]devBuf, len(run.phases))
		where[0] = r.dist
		if r.frontierRows.ptr != 0 {
			where[0] = r.frontierRows // hub rows: runHubPlan
		}
		if bp.Early != nil && bp.Early.KernelLate {
			where[0] = devBuf{} // the block's rows hold the early part's
		}
		for i := 1; i < len(run.phases); i++ {
			at := (int64(run.phases[i])*int64(n)*int64(r.distType.Size()) + 255) &^ 255
			if at < r.aux.size {
				where[i] = devBuf{ptr: r.aux.ptr + uint64(at), size: r.aux.size - at}
			}
		}
		tempAt := int64(0)
		for i, c := range run.phases {
			need[i] = batchedFrontierBytes(n, c, run.nearFar)
			if where[i].size < need[i] {
				tempAt = max(tempAt, need[i])
			}
		}
		var temp devBuf
		if tempAt > 0 {
			if temp, err = dv.alloc(tempAt); err != nil {
				return err
			}
			bufs = append(bufs, temp)
		}
		for i := range run.phases {
			run.frontiers[i] = where[i].ptr
			if where[i].size < need[i] {
				run.frontiers[i] = temp.ptr
			}
		}
	}
	run.sources, run.rows = make([]uint64, len(run.phases)), make([]uint64, len(run.phases))
	for i := range run.phases {
		run.sources[i] = r.sources.ptr + uint64(4*bp.PhaseStart(i))
	}
	// upload sends a packed part of the plan (plan.Block.Pack) and points
	// run at it.
	upload := func(p plan.Packed) error {
		buf, err := dv.upload(asBytes(p.Words))
		if err != nil {
			return err
		}
		bufs = append(bufs, buf)
		word := func(w int) uint64 { return buf.ptr + uint64(8*w) }
		base := bp.PhaseStart(p.From)
		for i := p.From; i < p.To; i++ {
			run.sources[i] = word(0) + uint64(4*(bp.PhaseStart(i)-base))
			run.rows[i] = word(p.Rows) + uint64(4*(bp.PhaseStart(i)-base))
		}
		if p.Rest {
			run.seeds, run.arcs = word(p.Seeds), word(p.Arcs)
			run.after = derivations{leaves: word(p.Derive), passes: bp.Passes, mins: word(p.Mins), minCount: len(bp.Mins)}
		}
		return nil
	}
	switch {
	case bp.Rows == nil:
	case packed != nil: // planned ahead (ahead.go), complete
		err = upload(*packed)
	case finish == nil:
		err = upload(bp.Pack(0, len(run.phases), true))
	default:
		// The first phase's sources and rows now; the rest of the plan is
		// finished, packed and uploaded while the first phase runs.
		if err = upload(bp.Pack(0, 1, false)); err != nil {
			break
		}
		done := make(chan plan.Packed, 1)
		go func() {
			finish()
			done <- bp.Pack(1, len(run.phases), true)
		}()
		run.later = func() error {
			began := time.Now()
			err := upload(<-done)
			r.host.plan += time.Since(began)
			return err
		}
	}
	r.host.plan += time.Since(began)
	if err != nil {
		return err
	}
	return runBatched(dv, r, &run)
}

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
	if err := r.uploadArcsByWeight(); err != nil {
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
	if r.kernelCuts() {
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
	cut := r.batchedCut()
	// derive queues the copies [c0, c1), the minimums [m0, m1) and the
	// leaves [l0, l1) of the first pass and [p0, p1) of the second
	// (run.after is read here: the first phase's run.later sets it).
	derive := func(c0, c1, m0, m1, l0, l1, p0, p1 int) error {
		after := run.after
		if err := copyResidentRows(dv, r.dist.ptr, int64(n)*int64(r.distType.Size()), run.copies[c0:c1]); err != nil {
			return err
		}
		if m1 > m0 {
			if err := dv.launchAsync("batched_mins_"+suffix, batchedGrid(int64(m1-m0)*int64(n)), r.dist.ptr, int32(n), after.mins+uint64(8*4*m0),
				int64(m1-m0), run.arcs, r.weights.ptr, cut); err != nil {
				return err
			}
		}
		for _, pass := range [][2]int{{l0, l1}, {after.passes[0] + p0, after.passes[0] + p1}} {
			if pass[1] <= pass[0] {
				continue
			}
			total := int64(pass[1]-pass[0]) * int64(n)
			if err := dv.launchAsync("batched_derive_"+suffix, batchedGrid(total), r.dist.ptr, int32(n), after.leaves+uint64(8*4*pass[0]), int64(pass[1]-pass[0]),
				r.weights.ptr, cut); err != nil {
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
				tracef(r.ordinal(), "block split around the late rows: early part %.1f ms on the device, the rest %.1f ms; the rows landed %s after the early part was queued",
					early, rest, landed.Sub(queued).Round(time.Microsecond))
			}()
		}
		if run.late != nil && run.late.wait() {
			// Another device failed before its rows landed: compute them
			// here (their kernels use the block's rows), then the early
			// part again.
			if err := r.ensureHubRows(); err != nil {
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

// batchedCut is the cutoff the batched kernels stop at, as the bits of a
// distance of the runner's type: the request's cutoff (cutBits, as the
// gather reads it) when it has one and the configuration lets the kernels
// apply it (plan.Config.KernelCutoff), else the type's infinity, which
// stops nothing. The batched kernel runs on non-negative weights only,
// where a search that never passes the cutoff still finds every distance
// at most the cutoff exactly; a clip after it would change nothing, and a
// cutoff alone runs none (rowsClippedByKernel).
func (r *Runner) batchedCut() uint64 {
	if r.kernelCuts() {
		return r.cutBits()
	}
	return infinityBits(r.distType)
}

// kernelCuts reports whether the batched kernels stop at the request's
// cutoff: it has one below the distance type's infinity, and the
// configuration lets them (plan.Config.KernelCutoff). The rounds are then
// the cutoff variants (batched_cutround_*), over the arcs in rising weight
// (arcsByWeight).
func (r *Runner) kernelCuts() bool {
	return r.req.Algorithm == Batched && r.req.HasCutoff && r.batched.KernelCutoff && r.cutBits() != infinityBits(r.distType)
}

// kernelCutoff is the cutoff the batched kernels stop at (batchedCut) as
// the plan reads it: the request's, or +Inf where the kernels compute full
// rows.
func (r *Runner) kernelCutoff() float64 {
	if r.kernelCuts() {
		return r.req.Cutoff
	}
	return math.Inf(1)
}

// arcsByWeight is the device copy of the arcs of the graph the batched
// kernel walks (plan.Graph.ArcsByWeight of r.planGraph: every vertex's arcs
// in rising weight), which the cutoff rounds read instead of r.targets and
// r.weights; from is the plan graph it was made from. The offsets are
// r.offsets. The other kernels (derivations, predecessors) index arcs in
// the CSR's own order and read r.weights.
type arcsByWeight struct {
	targets, weights devBuf
	from             *plan.Graph
}

// uploadArcsByWeight sorts and uploads r.byWeight for a runner whose
// batched kernels stop at a cutoff (kernelCuts), or again where the plan
// graph changed since (on the device goroutine); else it does nothing.
// The copy costs m · (4 + the distance's size) bytes of device memory.
func (r *Runner) uploadArcsByWeight() error {
	if !r.kernelCuts() || r.byWeight.from == r.planGraph {
		return nil
	}
	if err := r.releaseArcsByWeight(); err != nil {
		return err
	}
	targets, weights := r.planGraph.ArcsByWeight()
	w, err := sliceBytes(weights)
	if err != nil {
		return err
	}
	dv := r.e.dev
	if r.byWeight.targets, err = dv.upload(asBytes(targets)); err != nil {
		return err
	}
	if r.byWeight.weights, err = dv.upload(w); err != nil {
		return err
	}
	r.byWeight.from = r.planGraph
	return nil
}

// releaseArcsByWeight frees r.byWeight (on the device goroutine).
func (r *Runner) releaseArcsByWeight() error {
	dv := r.e.dev
	r.byWeight.from = nil
	return errors.Join(dv.free(&r.byWeight.targets), dv.free(&r.byWeight.weights))
}

// roundArcs are the device arrays of arc targets and weights the round
// kernels read: r.byWeight's under a cutoff in the kernel, else the CSR's.
func (r *Runner) roundArcs() (targets, weights uint64) {
	if r.kernelCuts() {
		return r.byWeight.targets.ptr, r.byWeight.weights.ptr
	}
	return r.targets.ptr, r.weights.ptr
}

// firstRounds is the rounds runPhase launches before it first reads
// whether the last one changed anything: plan.RoundsWithin's bound under
// a cutoff in the kernel, when there is one, no round threshold holds
// vertices back (step 0) and it is at most batchedMaxRounds, else
// batchedFirstRounds. The bound lets a phase under a small cutoff end
// after one read.
func (r *Runner) firstRounds(step float64) int {
	if b := plan.RoundsWithin(r.g, r.kernelCutoff()); b > 0 && b <= batchedMaxRounds && math.IsInf(batchedThreshold(step, 1), 1) {
		return b
	}
	return batchedFirstRounds
}

// batchedGrid is the thread blocks of a kernel striding over count elements.
func batchedGrid(count int64) int {
	return int(min((count+threadsPerBlock-1)/threadsPerBlock, batchedTransposeGrid))
}

// runPhase runs the round kernel name for k sources (device int32 arrays
// sources and rows, rows 0 for the identity) and transposes their
// distances into their rows of r.dist: clear the frontier, start the
// working distances in r.aux at infinity (or, with seeds, from the first
// phase's rows through batched_seedfill), put the sources at 0, and launch
// rounds over every group at once, back to back until one changes
// nothing. Near-far rounds (run.nearFar) lay the frontier out as
// batchedFrontierBytes says and run through runNearFarRounds. With a scratch (r.scratch, scratch.go)
// runPhaseScratch runs it instead, and frontier is not read.
func runPhase(dv *device, r *Runner, run *batchedRun, name string, k int, frontier, sources, rows, seeds, arcs uint64) error {
	if r.scratch > 0 {
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
	step := r.batched.Step(r.planGraph.Shape(), r.req.Delta)
	cut := r.batchedCut()
	tiles := int64((n+31)/32) * groups
	if err := dv.launchAsync("batched_fill_b32", batchedGrid(words), frontier, words, uint64(0)); err != nil {
		return err
	}
	if seeds != 0 {
		if err := dv.launchAsync("batched_seedfill_"+typeSuffix(r.distType), int(min(tiles, batchedTransposeGrid)), r.dist.ptr, int32(n), int32(k),
			seeds, arcs, r.weights.ptr, r.aux.ptr, cut); err != nil {
			return err
		}
	} else if err := dv.launchAsync("batched_fill_"+bits, batchedGrid(cells), r.aux.ptr, cells, infinityBits(r.distType)); err != nil {
		return err
	}
	if err := dv.launchAsync("batched_seed_"+bits, (k+threadsPerBlock-1)/threadsPerBlock, sources, int32(k), int32(n),
		r.aux.ptr, cur, curSum); err != nil {
		return err
	}
	grid := batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)
	last := make([]int32, 1)
	if run.nearFar {
		if err := runNearFarRounds(dv, r, name, grid, k, r.aux.ptr, cur, curSum, maskWords, sumWords, frontier, run.delta); err != nil {
			return err
		}
	} else if err := runRounds(dv, r, name, grid, k, r.aux.ptr, cur, next, curSum, nextSum, lastChange, step, last); err != nil {
		return err
	}
	return dv.launchAsync("batched_transpose_"+bits, int(min(tiles, batchedTransposeGrid)), r.aux.ptr, int32(n), int32(k),
		rows, r.dist.ptr)
}

// runRounds launches rounds of the kernel name over k sources (working
// distances at aux, masks at cur, next, curSum, nextSum) back to back
// until one changes nothing, reading the last-change word into last
// every few rounds.
func runRounds(dv *device, r *Runner, name string, grid, k int, aux, cur, next, curSum, nextSum, lastChange uint64,
	step float64, last []int32) error {
	n := r.n
	arcTargets, arcWeights := r.roundArcs()
	cut := r.batchedCut()
	batch := r.firstRounds(step)
	for round := int32(1); ; {
		for range batch {
			if err := dv.launchAsync(name, grid, r.offsets.ptr, arcTargets, arcWeights, int32(n), int32(k),
				aux, cur, next, curSum, nextSum, lastChange, round, batchedThreshold(step, round), int32(r.batched.Sparse), uint64(0),
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
	arcTargets, arcWeights := r.roundArcs()
	cut := r.batchedCut()
	if err := dv.launchAsync("batched_nfstart", 1, control, delta); err != nil {
		return err
	}
	state := make([]uint64, 2) // done, rounds (on the heap, as runRounds' last)
	launches := 0
	for batch := batchedFirstRounds; ; batch = min(2*batch, batchedMaxRounds) {
		for range batch {
			if err := dv.launchAsync(name, grid, r.offsets.ptr, arcTargets, arcWeights, int32(n), int32(k), aux, masks, sums,
				maskStride, sumStride, control, int32(r.batched.Sparse), int32(r.batched.NearFarOwn), uint64(0), cut); err != nil {
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

// infinityBits is graph.Infinity of t as the bits the fill kernel writes.
func infinityBits(t graph.DistType) uint64 {
	switch t {
	case graph.DistInt32:
		return math.MaxInt32
	case graph.DistInt64:
		return math.MaxInt64
	case graph.DistFloat32:
		return uint64(math.Float32bits(float32(math.Inf(1))))
	}
	return math.Float64bits(math.Inf(1))
}
