package gpu

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
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

// batchedKernel is the host's side of a runner's batched kernel: its
// configuration, what its plans read of the graph beside the arcs (graph:
// the shape and breadth-first rank, measured on the first batched block,
// or shared with a kept copy's borrowers and another device's runner of
// the graph), the plan made before the engine opened (ahead, ahead.go:
// for the first batched block it matches; nil once taken or dropped), the
// request with the cutoff the kernels may stop at (batchedcut.go), and
// whether this device declined the stats blocks' scratch (scratch.go).
type batchedKernel struct {
	cfg   batchedConfig
	graph *plan.Graph
	ahead *HostPlan
	g     *graph.CSR
	req   graph.Request
	n     int
	// distType is the runner's; reqBits is the request's cutoff in it, as
	// the kernels read it (narrowing.cutBits).
	distType graph.DistType
	reqBits  uint64
	// scratchDeclined is set by Prepare where the scratch would not pay
	// on this device (scratchPays): the stats blocks keep a working row
	// per source.
	scratchDeclined bool
}

// defaultBatchedConfig is what Engine.Prepare gives every runner: the
// plan's default (plan.DefaultConfig).
func defaultBatchedConfig() batchedConfig {
	return batchedConfig{Config: plan.DefaultConfig()}
}

// launchBatched runs the batched kernel for the k sources in r.buf.sources:
// plan the kernel's sources (plan.Graph.StartResident under r.bk.cfg,
// beside the hub rows kept resident (hubs.go) where there are: leaves and
// minimums left out, phases split, groups clustered; or take the plan
// made ahead, ahead.go), fill the working distances with infinity and clear the
// masks, seed the sources, launch rounds back to back until one changes
// nothing, transpose into the rows of r.buf.dist, and derive the rows of the
// leaves. Launches are asynchronous; the device time of the whole sequence
// is left in dv.lastKernel for Runner.launch.
func launchBatched(r *Runner, k int) error {
	if len(r.blockSources) != k {
		return fmt.Errorf("gpu: batched launch of %d sources with %d on the host", k, len(r.blockSources))
	}
	early := planBesideHubRows(r)
	if err := r.hubs.ensure(); err != nil {
		if early != nil {
			<-early // the plan's goroutine reads the runner's sources
		}
		return fmt.Errorf("gpu: batched: hub rows: %w", err)
	}
	late := r.hubs.rows.late // rows still arriving from other devices
	r.hubs.rows.late = nil
	began := time.Now()
	var (
		bp     *plan.Block
		finish func()
		packed *plan.Packed
		err    error
	)
	if early != nil {
		tracef(r.ordinal, "waiting for the plan made beside the hub rows")
		p := <-early
		tracef(r.ordinal, "plan taken")
		bp, packed, err = p.block, p.packed, p.err
	} else {
		bp, finish, packed, err = r.bk.startPlan(r.blockSources, r.bk.cutoff(), r.hubs.resident())
	}
	if err == nil && late != nil && bp.Early == nil {
		// A plan not split around them waits for them first.
		if late.wait() {
			err = r.hubs.ensure()
		}
		late = nil
	}
	if err == nil {
		err = runPlan(r, bp, finish, packed, began, late)
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
// sources, r.buf.sources).
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

// planBesideHubRows starts, where the block's hub rows of r are still to be
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
func planBesideHubRows(r *Runner) chan earlyPlan {
	if r.hubs.rows.ready || len(r.hubs.rows.vertices) == 0 {
		return nil
	}
	res := plan.Resident{Vertices: r.hubs.rows.vertices, FirstRow: int32(r.hubs.rows.firstRow)}
	sources, cut := r.blockSources, r.bk.cutoff()
	out := make(chan earlyPlan, 1)
	lateRows := make(chan []bool, 1)
	var once sync.Once
	r.hubs.rows.tell = func(late []bool) { once.Do(func() { lateRows <- late }) }
	ahead := r.hubs.run.ahead
	go func() {
		if ahead != nil {
			<-ahead.done
		}
		tracef(r.ordinal, "plan of %d sources beside the hub rows", len(sources))
		bp, finish, packed, err := r.bk.startPlan(sources, cut, res)
		if err == nil && packed == nil {
			if finish != nil {
				finish()
			}
			// hubStore.ensure tells which rows may come late, if any.
			if late := <-lateRows; late != nil && bp.Rows != nil {
				bp.SplitLate(func(row int32) bool {
					i := row - res.FirstRow
					return i >= 0 && int(i) < len(late) && late[i]
				})
				if e := bp.Early; e != nil {
					tracef(r.ordinal, "plan split around the late rows: early %d of %d copies, %d of %d minimums, %d of %d leaves; kernel late %v",
						e.Copies, len(bp.Copies), e.Mins, len(bp.Mins), e.Passes[0], len(bp.Derive), e.KernelLate)
				}
			}
			packed = completePlan(bp, nil)
		}
		tracef(r.ordinal, "plan beside the hub rows made")
		out <- earlyPlan{block: bp, packed: packed, err: err}
	}()
	return out
}

// runPlan uploads the plan bp of r's block in r.buf.sources (its later part
// completed by finish, when not nil, while the first phase runs; packed,
// when not nil, is the whole plan made ahead and packed) and runs
// it (runBatched); began is when its planning began, the host's plan
// time.
func runPlan(r *Runner, bp *plan.Block, finish func(), packed *plan.Packed, began time.Time, late *lateHubRows) (err error) {
	dv := r.e.dev
	n := r.n
	run := batchedRun{seedFirst: bp.SeedFirst, copies: bp.Copies, early: bp.Early, late: late}
	if late != nil && bp.Early == nil {
		return errors.New("gpu: batched: late hub rows beside a plan not split around them")
	}
	if r.buf.scratch == 0 { // a scratch's slices run the threshold rounds (scratch.go)
		run.nearFar, run.delta = r.bk.cfg.NearFar(r.bk.graph.Shape(), r.req.Delta)
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
	if r.buf.scratch == 0 { // with a scratch the frontiers lie in it (scratch.go)
		need := make([]int64, len(run.phases))
		where := make([]devBuf, len(run.phases))
		where[0] = r.buf.dist
		if r.frontierRows.ptr != 0 {
			where[0] = r.frontierRows // hub rows: hubStore.runPlan
		}
		if bp.Early != nil && bp.Early.KernelLate {
			where[0] = devBuf{} // the block's rows hold the early part's
		}
		for i := 1; i < len(run.phases); i++ {
			at := (int64(run.phases[i])*int64(n)*int64(r.distType.Size()) + 255) &^ 255
			if at < r.buf.aux.size {
				where[i] = devBuf{ptr: r.buf.aux.ptr + uint64(at), size: r.buf.aux.size - at}
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
		run.sources[i] = r.buf.sources.ptr + uint64(4*bp.PhaseStart(i))
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
