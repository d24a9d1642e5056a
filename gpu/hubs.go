package gpu

// Hub rows (plan.Config.HubRows, issue 18): a stats block that holds a
// small share of the vertices (R-MAT 20's blocks hold 1.9 % on an 80 GB
// device) has few of its sources' neighbours among its own sources, so the
// plan's leaves, minimums and phases, which read rows of the block, find
// little to derive. The runner keeps the rows of the graph's hubs (the
// vertices of highest out-degree, whose rows most shortest paths pass
// through) on the device past the block's rows, computed once by the
// batched kernel beside the first such block, and every block's plan
// reads them as resident rows (plan.Graph.StartResident): a leaf of a hub
// and a minimum over hubs are derived, a hub among the block's sources is
// copied from its row, and a block of one phase starts its sources from
// the hubs' rows. Where the run's sources are cut into blocks in the
// runner's order (Runner.BlockOrder), the hubs come first and in the hub
// rows' order, so that a block copies them in one piece.
//
// Choices: the hub rows live in the first result slot's distance buffer,
// past its capacity's rows, so that the derivation, minimum and seed
// kernels, which address rows by index in that buffer, read them with no
// change; the view r.buf.dist that the block's kernels see (and whose start
// holds the first phase's frontier) stops at the capacity's rows. They are
// kept for the blocks that compute into the first slot alone: stats blocks
// (RunStats under plan.Config.OneSlotStats) and blocks of the k nearest
// selected on the device (narrowing.selectsInOneSlot), whose selection reads
// the block's rows and never the hub rows past them. A Start of full rows
// reallocates both slots, and the rows are computed again by the next
// block of one slot. Not with predecessors, a cutoff in the kernel, or
// float weights whose sums are not exact (nothing would read them). At
// most plan.Config.HubRows rows, which StatsFixedBytes reserves, and at
// most one per plan.Config.HubShare of the block's sources.

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// hubStore is a runner's hub rows: which hubs it keeps and where, whether
// they are computed (rows), what SizeStatsRun chose for the run and the
// plan it began (run), and the group of runners of the graph on other
// devices that share them (group, hubshare.go). The rows themselves lie in
// its runner's first result slot, past the block's rows, and its runner
// runs their plans (runPlan): the store decides which rows, when and from
// where; the runner's kernels compute them.
type hubStore struct {
	r     *Runner
	rows  hubState
	run   hubRunSize
	group *hubGroup
}

// hubState is the runner's hub rows: the hubs (in the graph's numbering),
// the block row of the first hub's row in the first result slot (its
// capacity), and whether the rows are computed.
type hubState struct {
	vertices []int32
	firstRow int
	ready    bool
	// took is how long filling them took (computed, waited for or
	// copied), for --verbose.
	took time.Duration
	// late, when set, are rows other devices still send (a phased
	// round's last phase, hubshare.go): a block may start on the rows
	// it has, and waits for these before reading them.
	late *lateHubRows
	// tell, when set, hands the block's plan made beside the hub rows
	// (planBesideHubRows) the rows that may arrive late, by hub index
	// (nil: none), once they are known; a second call does nothing.
	tell func(late []bool)
}

// possible reports whether the runner may keep hub rows for its
// stats blocks: plan.Config.HubRows and OneSlotStats set, the batched
// kernel without predecessors or a cutoff in the kernel, and
// rows derived from others exact (integer weights, or floats whose sums
// are exact under ExactFloats).
func (hs *hubStore) possible() bool {
	c := hs.r.bk.cfg.Config
	if c.HubRows == 0 || !c.OneSlotStats || hs.r.req.Algorithm != Batched || hs.r.req.WithPredecessors ||
		hs.r.bk.cuts() || hs.r.n < 2 {
		return false
	}
	return derivesExactly(hs.r.distType, hs.r.bk.cfg, hs.r.bk.graph)
}

// derivesExactly reports whether rows the batched kernel's plan derives
// from others equal the kernel's own: integer distances, or floats whose
// sums are exact under plan.Config.ExactFloats.
func derivesExactly(t graph.DistType, c batchedConfig, pg *plan.Graph) bool {
	return !t.IsFloat() || (c.ExactFloats && pg.ExactSums())
}

// forBlock is the number of hub rows a stats block of k sources keeps:
// none where hubStore.possible is false or the block holds every vertex;
// else, once the run is sized (SizeStatsRun), its hub rows, at most k
// (the hubs' own block has the block's buffers); before, or without the
// call, plan.Config.HubRows, at most k and, under plan.Config.HubShare,
// at most one per HubShare of the block's sources.
func (hs *hubStore) forBlock(k int) int {
	if !hs.possible() || k >= hs.r.n {
		return 0
	}
	if hs.run.sized {
		return min(hs.run.rows, k)
	}
	if hs.r.bk.cfg.HubRows < 0 { // plan.HubRowsAuto: sized by the run alone
		return 0
	}
	h := min(hs.r.bk.cfg.HubRows, k)
	if s := hs.r.bk.cfg.HubShare; s > 0 {
		h = min(h, k/s)
	}
	return h
}

// hubRunSize is what SizeStatsRun chose: sized, the hub rows of the run's
// blocks, and their plan, begun then (hubPlanAhead).
type hubRunSize struct {
	sized bool
	rows  int
	ahead *hubPlanAhead
}

// hubPlanAhead is the plan of the whole hub list, made on the host in a
// goroutine of its own from the moment the run is sized: the list is
// known then, and its plan (a block of every hub, with phases) took 140
// ms of R-MAT 18's run on two H200s when made once the devices asked for
// the rows (docs/benchmarks-history.md, "The host off the devices' path"). started is
// closed once Start returned (block, finish and err set: the first phase
// final, the later phases' order and seeds still to come), done once
// finish ran too.
type hubPlanAhead struct {
	vertices      []int32
	started, done chan struct{}
	block         *plan.Block
	err           error
	// first, for the runners of a group, is the plan's first phase cut
	// among their parts (cutPhase), made before started is closed: the
	// phased round's first phase then need not wait for its cut (5.7 ms
	// of R-MAT 18's on two H200s; docs/benchmarks-history.md, "Where the round's start
	// and end went (traces of runs 1–3)").
	first *phaseCut
	// taken is set by the one runner that takes the block (the runners
	// of a group share one plan made ahead, hubshare.go).
	taken atomic.Bool
}

// planAhead begins the plan of the h hub rows a run keeps (on any
// goroutine, before the run's first block).
func (hs *hubStore) planAhead(h int) {
	if h <= 0 {
		return
	}
	v, err := hs.vertices(h)
	if err != nil {
		return // the block's own planning says why
	}
	g := hs.group
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.ahead != nil && slices.Equal(g.ahead.vertices, v) {
			hs.run.ahead = g.ahead // planned by another runner of the group
			return
		}
	}
	a := &hubPlanAhead{vertices: v, started: make(chan struct{}), done: make(chan struct{})}
	hs.run.ahead = a
	if g != nil {
		g.ahead = a
	}
	var his []int // the parts' ends (ensureShared's), where a group shares the rows
	if g != nil {
		for _, b := range handBounds(len(v), len(g.parts)) {
			his = append(his, b[1])
		}
	}
	pg, cfg, ordinal := hs.r.bk.graph, hs.r.bk.cfg.HubPlan(), hs.r.ordinal
	go func() {
		defer close(a.done)
		tracef(ordinal, "plan of %d hub rows ahead", len(v))
		var finish func()
		a.block, finish, a.err = pg.StartResident(v, cfg, math.Inf(1), plan.Resident{})
		if a.err == nil && his != nil {
			first := cutPhase(a.block, 0, his)
			a.first = &first
		}
		close(a.started)
		if finish != nil {
			finish()
		}
		tracef(ordinal, "plan of %d hub rows ahead made", len(v))
	}()
}

// plan is the plan of hub rows lo to hi, in rows of its own from 0
// (hubStore.runPlan places them), in the phases of plan.Config.HubPlan: the one
// begun when the run was sized where it is the whole list (taken once),
// else made now. Its first phase is final; finish, when not nil, waits for
// the rest (the later phases' order and seeds, the derivations' arcs),
// which the first phase's kernels need not wait for.
func (hs *hubStore) plan(lo, hi int) (bp *plan.Block, finish func(), err error) {
	if a := hs.run.ahead; a != nil && lo == 0 && hi == len(hs.rows.vertices) && slices.Equal(a.vertices, hs.rows.vertices) {
		hs.run.ahead = nil
		if a.taken.CompareAndSwap(false, true) {
			<-a.started
			if a.err != nil || a.block.NumPhases() == 1 {
				<-a.done
				return a.block, nil, a.err
			}
			return a.block, func() { <-a.done }, nil
		}
	}
	return hs.r.bk.graph.StartResident(hs.rows.vertices[lo:hi], hs.r.bk.cfg.HubPlan(), math.Inf(1), plan.Resident{})
}

// size sizes the hub rows of a stats run of sources sources whose
// blocks have budget bytes of device memory (graph.StatsRunSizer): none
// where one block holds them all, else at most plan.Config.HubRows (where
// not plan.HubRowsAuto), the
// core's vertices under plan.Config.HubCore, a HubShare-th of the rows the
// budget holds, and what leaves the blocks half the budget (the pipeline
// gives fixed bytes at most half). Measured on R-MAT 18, every source
// (docs/benchmarks-history.md, "Issues 18 and 19: hub rows"): on an H100, blocks of
// 83,521 sources without hub rows, 6.1 s; with 20,000, 30,000 and 40,000
// hub rows, 4.5, 3.8 and 3.6 s; on an H200, 3.2 s without, 2.5-2.8 s with
// the 56,278 of the core.
func (hs *hubStore) size(sources int, budget int64) {
	hs.run = hubRunSize{sized: true}
	if !hs.possible() || budget <= 0 {
		return
	}
	scratch := hs.r.bk.scratchFixedBytes()
	per, row := hs.r.StatsBytesPerSource(), hs.rowBytes()
	if per <= 0 || row <= 0 {
		return
	}
	rows := (budget - scratch) / per // sources a block of the whole budget holds
	if rows >= int64(sources) || rows <= 0 {
		return
	}
	h := (budget/2 - scratch) / row
	if hs.r.bk.cfg.HubRows > 0 {
		h = min(h, int64(hs.r.bk.cfg.HubRows))
	}
	if s := hs.r.bk.cfg.HubShare; s > 0 {
		h = min(h, rows/int64(s))
	}
	if hs.r.bk.cfg.HubCore {
		core, err := hs.r.bk.graph.Core(hs.r.n, hs.r.bk.cfg.Config)
		if err != nil {
			return // no hub rows: the block's plan does without
		}
		h = min(h, int64(len(core)))
	}
	hs.run.rows = int(max(h, 0))
	hs.planAhead(hs.run.rows)
}

// fixedBytes is the device memory a stats block takes whatever its
// size (graph.StatsSizer): the scratch working distances where
// scratchPossible (scratch.go), and the plan.Config.HubRows distance rows
// the block may keep where hubStore.possible.
func (hs *hubStore) fixedBytes() int64 {
	b := hs.r.bk.scratchFixedBytes()
	switch {
	case hs.run.sized:
		b += int64(hs.run.rows) * hs.rowBytes()
	case hs.possible() && hs.r.bk.cfg.HubRows > 0:
		b += int64(min(hs.r.bk.cfg.HubRows, hs.r.n)) * hs.rowBytes()
	}
	return b
}

// resident are the hub rows the block's plan may read: none until
// they are computed.
func (hs *hubStore) resident() plan.Resident {
	if !hs.rows.ready {
		return plan.Resident{}
	}
	return plan.Resident{Vertices: hs.rows.vertices, FirstRow: int32(hs.rows.firstRow)}
}

// ensure computes the hub rows where the buffers hold room for them
// and they are not yet computed (on the device goroutine, before the
// block's plan): from the runners sharing them (hubshare.go) where hs has
// a group, else here (hubStore.compute).
func (hs *hubStore) ensure() error {
	h := &hs.rows
	tell := h.tell
	h.tell = nil
	if tell == nil {
		tell = func([]bool) {}
	}
	defer tell(nil)
	if l := h.late; l != nil { // a block before this one went on without them
		h.late = nil
		l.wait() // (where lost, h.ready is cleared: computed below)
	}
	if h.ready || len(h.vertices) == 0 {
		return nil
	}
	began := time.Now()
	tracef(hs.r.ordinal, "hub rows: %d", len(h.vertices))
	defer func() {
		h.took = time.Since(began)
		tracef(hs.r.ordinal, "hub rows ready")
	}()
	shared := false
	if hs.group == nil {
		tell(nil) // the plan need not wait for the rows
	}
	if g := hs.group; g != nil {
		var err error
		if shared, err = g.ensureShared(hs, tell); err != nil {
			return err
		}
	}
	if !shared {
		if err := hs.compute(0, len(h.vertices)); err != nil {
			return err
		}
	}
	h.ready = true
	return nil
}

// compute computes the rows of hubs lo to hi: the batched kernel
// over them, planned as a block of their own (its phases seeded from
// earlier ones, nothing read from the block's rows) and run in rows
// firstRow+lo, firstRow+lo+1, ... of the first slot (hubStore.runPlan). Its
// device time adds to the runner's kernel time.
func (hs *hubStore) compute(lo, hi int) error {
	began := time.Now()
	bp, finish, err := hs.plan(lo, hi)
	if err != nil {
		return err
	}
	tracef(hs.r.ordinal, "hub rows: plan's first phase made")
	return hs.runPlan(bp, finish, nil, lo, began)
}

// vertices are the h vertices whose rows the runner keeps as hub rows:
// the graph's core (plan.Graph.Core) under plan.Config.HubCore, else its
// hubs (plan.Graph.Hubs); fewer where the core is smaller.
func (hs *hubStore) vertices(h int) ([]int32, error) {
	var v []int32
	if hs.r.bk.cfg.HubCore {
		var err error
		if v, err = hs.r.bk.graph.Core(h, hs.r.bk.cfg.Config); err != nil {
			return nil, err
		}
	} else {
		v = hs.r.bk.graph.Hubs(h)
	}
	if g := hs.group; g != nil {
		v = dealt(v, len(g.parts))
	}
	return v, nil
}

// dealt deals v into m hands in turn and returns the hands one after the
// other: the group's parts (hubshare.go), consecutive pieces of the list,
// then each hold hubs of every degree, and take about as long to compute
// (R-MAT 18's core cut in halves by degree: 1.3 s for the first on an
// H200, 1.9 s for the second).
func dealt(v []int32, m int) []int32 {
	out := make([]int32, 0, len(v))
	for hand := range m {
		for i := hand; i < len(v); i += m {
			out = append(out, v[i])
		}
	}
	return out
}

// alloc records, for buffers of capacity k just allocated for a
// stats block, the hubs whose rows the first slot holds past its
// capacity's (hubRows of them); their rows are computed by the next
// batched launch.
func (hs *hubStore) alloc(k, hubRows int) error {
	hs.leave()
	hs.rows = hubState{}
	if hubRows > 0 {
		v, err := hs.vertices(hubRows)
		if err != nil {
			return fmt.Errorf("gpu: hub rows: %w", err)
		}
		hs.rows = hubState{vertices: v, firstRow: k}
	}
	return nil
}

// blockRows is the view of slot s's distance rows that a block's kernels
// see: the rows of the buffers' capacity, without the hub rows past them.
func (hs *hubStore) blockRows(s *resultSlot) devBuf {
	d := s.dist
	if len(hs.rows.vertices) > 0 && s == &hs.r.buf.slots[0] {
		d.size = int64(hs.r.buf.capacity) * int64(hs.r.n) * int64(hs.r.distType.Size())
	}
	return d
}
