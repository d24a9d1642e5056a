package gpu

// Hub rows shared among devices (issue 19): on several devices each
// runner of one graph keeps the same hub rows (hubs.go), and computing
// them all on every device repeats what one device does once.
// ShareHubRows groups the runners, and the hub list is
// dealt into a part per runner. When every runner has asked for the rows
// (they start their first stats blocks together), they share one plan of
// the whole list (phasedRound): each phase's sources are cut by part, and
// each runner sends its new rows to the others as soon as it has them, so
// that later phases seed from all earlier rows as on one device; after
// the last phase each goes on to its block without waiting for the
// others' rows, and the block's plan runs what reads none of them first
// (lateHubRows, plan.Block.SplitLate). A runner
// that comes alone (hubArrivalWait) settles the group for parts: each part
// is computed whole by the runner that claims it first and copied by the
// others. Copies go peer to peer where cuDeviceCanAccessPeer allows it,
// through the driver's staging otherwise, on a stream that waits for
// neither device's kernels; a phase's rows whose distances fit go packed
// in 16 bits (hubsend.go). R-MAT 18's core (56,278 rows) on two H200s
// (docs/benchmarks-history.md, "Issues 18 and 19: hub rows" and "The shared hub rows
// sent as they come"): 2.1 s on one device; halves planned alone 1.58 s
// each; cut phase by phase 1.04 s each, and 0.11 s of copies.
//
// Choices: no wait is unbounded: a phase waits only for runners that
// have arrived, a part only for the runner computing it, and a runner
// that fails marks the round failed (the others then compute every row
// alone) or releases its claim. A runner whose buffers are released (a
// reallocation, Close) withdraws its parts, and waits for the others to
// finish a phased round's last phase and for every copy under way (a
// part's copy holds the group's lock; a phase's rows are sent without it,
// and counted), so that no copy touches freed memory. Runners whose hub
// lists differ in length (other capacities) compute their rows alone.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// hubGroup is the hub rows shared among runners of one graph.
type hubGroup struct {
	mu      sync.Mutex
	cond    *sync.Cond
	runners []*Runner
	// mode is how the runners share the rows: decided once, when every
	// runner has asked for them (modePhases) or hubArrivalWait after the
	// first did (modeParts); arrived counts them, and base holds each
	// one's first hub row's address.
	mode    int
	arrived int
	base    map[*Runner]uint64
	phased  *phasedRound
	// h is the length of the hub list the parts cut (the first runner's
	// to compute rows); parts are its pieces.
	h     int
	parts []hubPart
	// copies counts the parts taken from another device, copied their
	// bytes, copying the time the copies took and peer whether every
	// copy went peer to peer.
	copies  int
	copied  int64
	copying time.Duration
	peer    bool
	// inflight counts the phased round's copies under way, made with mu
	// released (pushSpans): no runner's rows are freed until it is 0.
	inflight int
	// lost counts the runners that went on before the last phase's rows
	// arrived and found a runner failed before sending them
	// (lateHubRows.wait).
	lost int
	// ahead is the plan of the whole hub list begun when the first
	// runner's run was sized (hubPlanAhead), for the runner that plans
	// the phased round.
	ahead *hubPlanAhead
	// stage is where each runner of the phased round receives rows
	// packed in 16 bits (hubsend.go): none where it takes none; packed
	// counts the spans sent so.
	stage  map[*Runner]*hubStage
	packed int
}

// hubPart is a piece [lo, hi) of the hub list: free, being computed by
// owner, or final in owner's rows from row firstRow + lo.
type hubPart struct {
	lo, hi int
	state  int
	owner  *Runner
	// at is the device address of the part's first row in owner's
	// buffer (valid while ready).
	at uint64
	// took is how long its computing took, on device (the owner's
	// ordinal) once ready.
	took   time.Duration
	device int
}

// The states of a hubPart.
const (
	partFree = iota
	partComputing
	partReady
)

// The modes of a hubGroup.
const (
	modeUndecided = iota
	modeParts     // each part computed whole by one runner, copied by the others
	modePhases    // each phase of one plan cut among the runners (phasedRound)
)

// hubArrivalWait is how long the first runner to need the hub rows waits
// for the others before the group settles for parts: the devices of one
// run start their first stats blocks within milliseconds, and a runner
// that comes later (or never) must not hold them longer. Not measured.
const hubArrivalWait = 2 * time.Second

// phasedRound is the hub rows computed from one plan of the whole hub
// list (the core's phases seed later rows from earlier ones, which halves
// planned alone lose: R-MAT 18's core on an H200, 2.1 s whole, a dealt
// half alone 1.58 s): each phase's sources are cut among the runners by
// the part their row lies in, every runner sends its rows of a phase to
// the others and waits for theirs (each part's rows of one phase are one
// span, as the hub list is dealt and its phases follow falling degree),
// and each derives the plan's minimums and leaves itself at the end.
type phasedRound struct {
	plan *plan.Block
	// finish, until it ran, makes the plan's later phases (hubPlan).
	finish func()
	// prep is each phase cut among the runners, made ahead by prepare.
	prep []phasePrep
	done []int // per phase, the runners that computed and sent their share
	// copied counts the runners done with the last phase; failed is set
	// when one fails, and the others then compute every row alone.
	copied int
	failed bool
	took   []time.Duration // per runner, computing its shares
	rows   []int           // per runner, the rows it computed
	joined map[*Runner]bool
	// packed holds, by phase, sender and receiver (their indices among
	// the runners), the spans sent packed, which the receiver widens.
	packed map[[3]int]bool
}

// phasePrep is one phase of a phased round cut among its runners, read
// once ready is closed.
type phasePrep struct {
	ready chan struct{}
	phaseCut
}

// phaseCut is one phase of a plan cut among runners whose parts end at
// his: per runner, the positions in plan.Sources of its share, the rows
// [lo, hi) they cover, and the plan of its share packed for the device
// (nil where it has none).
type phaseCut struct {
	his    []int
	share  [][]int
	span   [][2]int32
	part   []*plan.Block
	packed []*plan.Packed
}

// ShareHubRows makes runners, of one graph on several devices (or several
// engines of one device), share their hub rows: each computes a part of
// them and copies the rest from the others. One runner alone needs no
// group.
func ShareHubRows(runners []*Runner) {
	if len(runners) < 2 {
		return
	}
	g := &hubGroup{parts: make([]hubPart, len(runners)), peer: true, runners: runners, base: map[*Runner]uint64{}, stage: map[*Runner]*hubStage{}}
	g.cond = sync.NewCond(&g.mu)
	for _, r := range runners {
		r.mu.Lock()
		r.hubGroup = g
		r.mu.Unlock()
	}
	reachEachOther(runners)
}

// reachEachOther enables each device's access to the others' memory,
// where the runners may keep hub rows, before their buffers are
// allocated: enabled once they hold R-MAT 18's rows, it took the last
// device to join the phased round 10 ms of the first phase (the other's
// memory is mapped then), which the allocations take in part once it is
// on, beside each other (two H200s: the first phase began 19-20 ms after
// the blocks against 24-25; docs/benchmarks-history.md, "Where the round's start and
// end went (traces of runs 1–3)"). Where it fails, the rows go through the
// host, and the copies report the error.
func reachEachOther(runners []*Runner) {
	var wg sync.WaitGroup
	for _, r := range runners {
		if r.e == nil || !r.hubRowsPossible() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.e.dev.do(func() error {
				for _, o := range runners {
					if o.e != nil && o.e.dev.ctx != r.e.dev.ctx {
						enablePeer(r.e.dev, o.e.dev)
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
}

// HubRowsCopied is how many parts of the hub rows the runner's group took
// from another device than the one that computed them (0 without a
// group), for tests and --verbose.
func (r *Runner) HubRowsCopied() int {
	g := r.hubGroup
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.copies
}

// ensureShared fills r's hub rows from the group (on r's device
// goroutine): the parts no runner has claimed are computed here, the
// parts another runner computes are waited for and copied. It reports
// false, doing nothing, where r's hub list is not the group's length.
func (g *hubGroup) ensureShared(r *Runner, tell func([]bool)) (bool, error) {
	h := len(r.hubs.vertices)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.h == 0 {
		g.h = h
		for i, b := range handBounds(h, len(g.parts)) {
			g.parts[i] = hubPart{lo: b[0], hi: b[1]}
		}
	}
	if g.h != h {
		tell(nil)
		return false, nil
	}
	if g.mode == modeUndecided {
		g.base[r] = r.dist.ptr + uint64(int64(r.hubs.firstRow)*r.rowBytes())
		g.arrived++
		switch {
		case g.arrived == len(g.runners):
			g.mode = modePhases
			g.cond.Broadcast()
		case g.arrived == 1:
			time.AfterFunc(hubArrivalWait, func() {
				g.mu.Lock()
				defer g.mu.Unlock()
				if g.mode == modeUndecided {
					g.mode = modeParts
				}
				g.cond.Broadcast()
			})
		}
		for g.mode == modeUndecided {
			g.cond.Wait()
		}
	}
	if g.mode == modePhases && (g.phased == nil || !g.phased.joined[r]) {
		return true, g.ensurePhased(r, tell)
	}
	tell(nil) // every row in place before r's block
	return true, g.ensureParts(r)
}

// ensureParts is ensureShared by parts (modeParts, or a runner that needs
// the rows again after its phased round), with g.mu held.
func (g *hubGroup) ensureParts(r *Runner) error {
	have := make([]bool, len(g.parts))
	for left := len(g.parts); left > 0; {
		progressed := false
		for i := range g.parts {
			p := &g.parts[i]
			if have[i] {
				continue
			}
			if p.lo == p.hi { // fewer hubs than runners
				have[i], left, progressed = true, left-1, true
				continue
			}
			switch {
			case p.state == partFree:
				p.state, p.owner = partComputing, r
				g.mu.Unlock()
				began := time.Now()
				err := r.computeHubRows(p.lo, p.hi)
				g.mu.Lock()
				p.took, p.device = time.Since(began), r.e.dev.ordinal
				if err != nil {
					p.state, p.owner = partFree, nil
					g.cond.Broadcast()
					return err
				}
				p.state, p.at = partReady, r.dist.ptr+uint64(int64(r.hubs.firstRow+p.lo)*r.rowBytes())
				g.cond.Broadcast()
			case p.state == partReady && p.owner == r:
			case p.state == partReady:
				began := time.Now()
				peer, err := r.copyHubPart(p)
				if err != nil {
					return err
				}
				g.copies++
				g.copied += int64(p.hi-p.lo) * r.rowBytes()
				g.copying += time.Since(began)
				g.peer = g.peer && peer
			default: // another runner computes it
				continue
			}
			have[i] = true
			left--
			progressed = true
		}
		if left > 0 && !progressed {
			g.cond.Wait()
		}
	}
	return nil
}

// ensurePhased is ensureShared in a phased round (modePhases), with g.mu
// held: the first runner plans the hub list; every runner computes its
// share of each phase, sends it to the others and waits for theirs, then
// derives the plan's minimums and leaves. Where there is nothing to
// derive, a runner that has sent its share of the last phase goes on
// without waiting for the others' (r.hubs.late): its next block starts on
// the rows it has while theirs cross the link (on two H200s the last
// phase's 11 GiB took 31 ms, which every block waited for; docs/benchmarks-history.md,
// "The last phase's rows cross while the blocks work"). tell hands the
// block's plan the rows that may come late, once the last phase is cut.
// Where a runner fails, the others compute every row alone.
func (g *hubGroup) ensurePhased(r *Runner, tell func([]bool)) error {
	j := slices.Index(g.runners, r)
	// r's stage, before the plan is waited for (peer access is on since
	// ShareHubRows, reachEachOther). Where it cannot be made, r's rows go
	// whole.
	if st := newHubStage(r, g.base[r]); st != nil {
		g.stage[r] = st
		defer r.e.dev.free(&st.flag) // r's packs are over when it returns (freed already when it goes on)
	}
	tracef(r.ordinal(), "hub rows: stage ready")
	if g.phased == nil {
		a := r.hubRun.ahead
		bp, finish, err := r.hubPlan(0, len(r.hubs.vertices))
		tracef(r.ordinal(), "hub rows: plan's first phase made")
		if err != nil {
			g.phased = &phasedRound{failed: true, joined: map[*Runner]bool{}}
			g.cond.Broadcast()
			return err
		}
		var first *phaseCut
		if a != nil && a.block == bp {
			first = a.first
		}
		g.phased = newPhasedRound(bp, finish, g.parts, len(g.runners), first)
	}
	ph := g.phased
	ph.joined[r] = true
	last := len(ph.done) - 1
	if !ph.failed && last >= 0 {
		pr, h := &ph.prep[last], g.h
		go func() {
			<-pr.ready
			tell(lateRowsOf(pr, j, h))
		}()
	}
	alone := func() error {
		for g.inflight > 0 { // a packed send may still write r's block rows
			g.cond.Wait()
		}
		g.mu.Unlock()
		defer g.mu.Lock()
		return r.computeHubRows(0, len(r.hubs.vertices))
	}
	if ph.failed {
		return alone()
	}
	for i := range len(ph.done) {
		if ph.failed {
			return alone()
		}
		pr := g.phase(ph, i)
		if ph.failed {
			return alone()
		}
		if part := pr.part[j]; part != nil {
			tracef(r.ordinal(), "hub phase %d: %d rows", i, len(part.Sources))
			g.mu.Unlock()
			began := time.Now()
			err := r.runHubPlan(part, nil, pr.packed[j], 0, time.Now())
			g.mu.Lock()
			ph.took[j] += time.Since(began)
			ph.rows[j] += len(part.Sources)
			if err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		tracef(r.ordinal(), "hub phase %d computed", i)
		if hubPhaseFault != nil {
			if err := hubPhaseFault(g, ph, r, i); err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		goOn := i == last && g.nothingToDerive(ph, r)
		if st := g.stage[r]; goOn && st != nil {
			// r packs nothing more (the last phase's spans go whole):
			// its flag is freed now, while its context is idle, since
			// cuMemFree waits for the context's work, the copies queued
			// below included (5 ms before r's block, R-MAT 18 on two
			// H200s; docs/benchmarks-history.md, "Where the round's start and end
			// went (traces of runs 1–3)").
			if err := r.e.dev.free(&st.flag); err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		sent, err := g.pushSpans(r, ph, pr, i, goOn)
		if err != nil {
			ph.failed = true
			g.cond.Broadcast()
			return err
		}
		if goOn {
			// r's share counts as sent once its copies are waited for
			// (lateHubRows.wait), which its block does after queueing
			// the work that reads none of the others' shares.
			tracef(r.ordinal(), "hub phase %d: going on while the shares cross", i)
			r.hubs.late = &lateHubRows{g: g, ph: ph, r: r, sent: sent}
			return nil
		}
		ph.done[i]++
		g.cond.Broadcast()
		for ph.done[i] < len(g.runners) && !ph.failed {
			g.cond.Wait()
		}
		if ph.failed {
			return alone()
		}
		if err := g.widen(r, ph, pr, i); err != nil {
			ph.failed = true
			g.cond.Broadcast()
			return err
		}
		tracef(r.ordinal(), "hub phase %d: every device's share in place", i)
	}
	ph.copied++
	tracef(r.ordinal(), "hub phases copied")
	g.cond.Broadcast()
	if g.nothingToDerive(ph, r) {
		// The core's rows all come from the kernel: the empty plan's run
		// took 17-29 ms on an H200, and its copy of the seeds' arcs 5 ms
		// (docs/benchmarks-history.md, "The shared hub rows sent as they come").
		return nil
	}
	d := ph.plan.Derivations()
	g.mu.Unlock()
	defer g.mu.Lock()
	tracef(r.ordinal(), "hub derivations: %d minimums, %d leaves", len(d.Mins), len(d.Derive))
	defer tracef(r.ordinal(), "hub derivations done")
	return r.runHubPlan(d, nil, nil, 0, time.Now())
}

// nothingToDerive reports whether the round's plan derives no row from
// the rows its phases compute, once finished (with g.mu held, released
// meanwhile; finishPlan).
func (g *hubGroup) nothingToDerive(ph *phasedRound, r *Runner) bool {
	g.finishPlan(ph) // (done already past a first phase)
	return len(ph.plan.Mins) == 0 && len(ph.plan.Derive) == 0
}

// lateRowsOf marks, among the h hub rows, those the runners but runner j
// send in the phase pr (their spans, which may hold rows of earlier
// phases too, rewritten with the same values).
func lateRowsOf(pr *phasePrep, j, h int) []bool {
	late := make([]bool, h)
	for o, sp := range pr.span {
		if o != j && len(pr.share[o]) > 0 {
			for row := sp[0]; row < sp[1]; row++ {
				late[row] = true
			}
		}
	}
	return late
}

// hubPhaseFault, when set (by tests), is called with g.mu held after
// runner r computed its share of phase i of a phased round; an error
// fails r there, as a kernel's would.
var hubPhaseFault func(g *hubGroup, ph *phasedRound, r *Runner, i int) error

// lateHubRows are the rows of a phased round's last phase that the other
// runners still send when r goes on without them (ensurePhased).
type lateHubRows struct {
	g  *hubGroup
	ph *phasedRound
	r  *Runner
	// sent, when not nil, waits for r's own share's copies (pushSpans).
	sent func() error
	// waited is set once wait was called.
	waited bool
}

// wait waits for r's copies of its share of the round's last phase,
// counts it sent, and waits until every runner has sent its own (on r's
// device goroutine). It reports lost where one failed first (r's own
// copies included): r's rows then lack a share, so r.hubs.ready is
// cleared and the next ensureHubRows computes them. Called again, it
// returns at once (false).
func (l *lateHubRows) wait() (lost bool) {
	g, ph, r := l.g, l.ph, l.r
	if l.waited {
		return false
	}
	l.waited = true
	began := time.Now()
	var err error
	if l.sent != nil {
		err = l.sent()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	last := len(ph.done) - 1
	if err != nil {
		tracef(r.ordinal(), "hub phase %d: sending failed: %v", last, err)
		ph.failed = true
	} else {
		ph.done[last]++
	}
	g.cond.Broadcast()
	for ph.done[last] < len(g.runners) && !ph.failed {
		g.cond.Wait()
	}
	if ph.failed {
		tracef(r.ordinal(), "hub rows lost: another device failed before its share arrived")
		r.hubs.ready = false
		g.lost++
		return true
	}
	ph.copied++
	tracef(r.ordinal(), "hub phases copied (waited %s)", time.Since(began).Round(time.Microsecond))
	g.cond.Broadcast()
	return false
}

// newPhasedRound is the phased round of bp, the plan of the hub list
// among m runners holding parts, whose later phases finish completes
// (nil: complete). Each phase is cut among the runners and each share
// planned and packed aside (prepare), while the earlier phases run: made
// by the runner that came first, under the group's lock, the cut and
// plan of a share held the phases' start 6-15 ms on R-MAT 18's core
// (docs/benchmarks-history.md, "The shared hub rows sent as they come"). first, when
// not nil, is the first phase cut already (with the plan made ahead,
// hubPlanAhead), taken where it was cut for these parts.
func newPhasedRound(bp *plan.Block, finish func(), parts []hubPart, m int, first *phaseCut) *phasedRound {
	phases := bp.NumPhases()
	ph := &phasedRound{plan: bp, done: make([]int, phases), took: make([]time.Duration, m), rows: make([]int, m),
		joined: map[*Runner]bool{}, prep: make([]phasePrep, phases), packed: map[[3]int]bool{}}
	if finish != nil {
		ph.finish = sync.OnceFunc(finish)
	}
	his := partEnds(parts)
	for i := range ph.prep {
		ph.prep[i].ready = make(chan struct{})
	}
	if first != nil && slices.Equal(first.his, his) {
		ph.prep[0].phaseCut = *first
		close(ph.prep[0].ready)
	} else {
		first = nil
	}
	go ph.prepare(ph.finish, his, first != nil)
	return ph
}

// partEnds are the ends of parts, as phaseCut reads them.
func partEnds(parts []hubPart) []int {
	his := make([]int, len(parts))
	for i, p := range parts {
		his[i] = p.hi
	}
	return his
}

// prepare cuts each phase of the round's plan among its runners
// (cutPhase) in phase order, from the second where the first is cut
// already (skipFirst); a phase past the first waits for the plan's finish
// first.
func (ph *phasedRound) prepare(finish func(), his []int, skipFirst bool) {
	for i := range ph.prep {
		if i == 0 && skipFirst {
			continue
		}
		if i > 0 && finish != nil {
			finish()
		}
		pr := &ph.prep[i]
		pr.phaseCut = cutPhase(ph.plan, i, his)
		close(pr.ready)
	}
}

// cutPhase cuts phase i of bp among the runners of parts ending at his (a
// source goes to the runner of the part its row lies in) and plans and
// packs each share. Phase i must be final (the first is once the plan's
// Start returned, the later ones once its finish ran).
func cutPhase(bp *plan.Block, i int, his []int) phaseCut {
	m := len(his)
	c := phaseCut{his: his, share: make([][]int, m), span: make([][2]int32, m)}
	for at := bp.PhaseStart(i); at < bp.PhaseStart(i+1); at++ {
		row := int32(at)
		if bp.Rows != nil {
			row = bp.Rows[at]
		}
		o := 0
		for o+1 < len(his) && int(row) >= his[o] {
			o++
		}
		if len(c.share[o]) == 0 || row < c.span[o][0] {
			c.span[o][0] = row
		}
		c.span[o][1] = max(c.span[o][1], row+1)
		c.share[o] = append(c.share[o], at)
	}
	c.part, c.packed = make([]*plan.Block, m), make([]*plan.Packed, m)
	for j, share := range c.share {
		if len(share) > 0 {
			part := bp.PhasePart(i, share)
			packed := part.Pack(0, part.NumPhases(), true)
			c.part[j], c.packed[j] = part, &packed
		}
	}
	return c
}

// finishPlan waits, with g.mu released meanwhile, until the plan's later
// phases are made (their order and seeds, which the derivations read);
// with g.mu held.
func (g *hubGroup) finishPlan(ph *phasedRound) {
	if ph.finish == nil {
		return
	}
	fin := ph.finish
	g.mu.Unlock()
	fin()
	g.mu.Lock()
	ph.finish = nil
}

// phase waits, with g.mu released meanwhile, until phase i of the round
// is cut among the runners (prepare); with g.mu held.
func (g *hubGroup) phase(ph *phasedRound, i int) *phasePrep {
	pr := &ph.prep[i]
	g.mu.Unlock()
	<-pr.ready
	g.mu.Lock()
	return pr
}

// pushSpans copies r's rows of phase i of the round into every other
// runner's, with g.mu held on entry and on return but not during the
// copies: a runner sends its rows as soon as it has computed them, while
// the others may still compute theirs, and a phase is done once every
// runner has sent its own. The span lies in r's part of the hub list,
// which no other runner writes: beside r's rows of the phase it may
// cover r's rows of other phases, earlier ones the same on every device
// and later ones computed on none yet. g.inflight keeps a runner's
// memory from being freed (leaveHubGroup) while a copy writes into it.
// R-MAT 18's core on two H200s (docs/benchmarks-history.md, "The shared hub rows sent
// as they come"): pulling the others' rows after each phase with the lock
// held, each runner's copies waited behind the other's (106 ms of copies
// in all, 65 ms after the last phase); pulled at once they shared the link
// (30 and 60 ms after the last phase).
//
// With async (a last phase that r leaves without waiting) the copies are
// only queued where they go peer to peer, and sent, when not nil, waits
// for them and counts them, with g.mu released (on r's device goroutine).
// Otherwise a receiver with a stage gets the span packed in 16 bits where
// its values fit (hubsend.go; ph.packed says so), and widens it once every
// share of the phase is in (widen).
func (g *hubGroup) pushSpans(r *Runner, ph *phasedRound, pr *phasePrep, i int, async bool) (sent func() error, err error) {
	j := slices.Index(g.runners, r)
	sp := pr.span[j]
	if sp[1] <= sp[0] || ph.failed {
		return nil, nil
	}
	at := uint64(int64(sp[0]) * r.rowBytes())
	size := int64(sp[1]-sp[0]) * r.rowBytes()
	var to []*Runner
	for _, other := range g.runners {
		if other != r {
			to = append(to, other)
		}
	}
	var packs []packedSend
	if !async {
		packs = g.packedSends(r, pr, i)
	}
	g.inflight++
	g.mu.Unlock()
	began := time.Now()
	fail := func(err error) (func() error, error) {
		g.mu.Lock()
		g.inflight--
		g.cond.Broadcast()
		return nil, err
	}
	count := int64(sp[1]-sp[0]) * int64(r.n)
	packed, err := g.sendPacked(r, packs, g.base[r]+at, count)
	if err != nil {
		return fail(err)
	}
	peer, queued := true, false
	for _, o := range to {
		if packed[o] {
			continue
		}
		p, q, err := copyDevice(r.e.dev, o.e.dev, r.e.dev, g.base[o]+at, g.base[r]+at, uint64(size), !async)
		if err != nil {
			if queued { // the copies queued before it still write
				r.e.dev.d.cuStreamSynchronize(r.e.dev.peerStream)
			}
			return fail(err)
		}
		peer, queued = peer && p, queued || q
	}
	done := func(err error) error { // with g.mu released
		took := time.Since(began)
		how := ""
		if len(packed) > 0 {
			how = fmt.Sprintf(", to %d of them in 16 bits", len(packed))
		}
		tracef(r.ordinal(), "hub phase %d: sent to %d devices (%.1f GiB each in %s%s)", i, len(to), float64(size)/(1<<30), took.Round(time.Millisecond), how)
		g.mu.Lock()
		defer g.mu.Unlock()
		g.inflight--
		g.cond.Broadcast()
		if err != nil {
			return err
		}
		for k, o := range g.runners {
			if packed[o] {
				ph.packed[[3]int{i, j, k}] = true
			}
		}
		g.copies += len(to)
		g.packed += len(packed)
		g.copied += size*int64(len(to)-len(packed)) + packedBytes(count)*int64(len(packed))
		g.copying += took
		g.peer = g.peer && peer
		return nil
	}
	if queued {
		g.mu.Lock()
		dv := r.e.dev
		return func() error {
			return done(dv.d.cuStreamSynchronize(dv.peerStream).Err("cuStreamSynchronize (peer stream)"))
		}, nil
	}
	err = done(nil)
	g.mu.Lock()
	return nil, err
}

// runHubPlan runs a plan of hub rows whose own rows start at 0 (its
// later phases finished by finish, when not nil, while the first runs;
// packed ahead, when packed is not nil; runPlan) in the hub rows from hub
// first on: the block's kernels, which address rows from the start of
// r.dist, see a view of the first slot's rows that starts there, so that
// the plan need not be shifted and its first phase runs before the rest
// of it is made. Its device time adds to the runner's kernel time; began
// is when its planning began.
func (r *Runner) runHubPlan(bp *plan.Block, finish func(), packed *plan.Packed, first int, began time.Time) error {
	if bp.Rows == nil {
		bp.Rows = ownRows(len(bp.Sources)) // the hubs, not the block's sources
	}
	view := r.dist
	row := r.rowBytes()
	r.dist = devBuf{ptr: r.slots[0].dist.ptr + uint64(int64(r.hubs.firstRow+first)*row), size: int64(len(r.hubs.vertices)-first) * row}
	// The first phase's frontier lies where a block's would, in the
	// block's rows: a part of a later phase (one phase of its own, a
	// phased round) would otherwise lay it over the earlier phases' rows.
	r.frontierRows = view
	defer func() { r.dist, r.frontierRows = view, devBuf{} }()
	if err := r.runPlan(bp, finish, packed, began, nil); err != nil {
		return err
	}
	r.kernelTime += r.e.dev.lastKernel
	return nil
}

// copyHubPart copies part p's rows from its owner's device into r's hub
// rows, and waits for the copy (with the group's lock held, so that the
// owner cannot free them meanwhile). It reports whether the copy went
// device to device (one context, or peer to peer) rather than through
// the driver's staging in host memory.
func (r *Runner) copyHubPart(p *hubPart) (bool, error) {
	to := r.dist.ptr + uint64(int64(r.hubs.firstRow+p.lo)*r.rowBytes())
	peer, _, err := copyDevice(r.e.dev, r.e.dev, p.owner.e.dev, to, p.at, uint64(int64(p.hi-p.lo)*r.rowBytes()), true)
	return peer, err
}

// copyDevice copies size bytes at src on device from to dst on device to,
// from the goroutine of device cur (one of the two, whose context is
// current there), and waits for the copy unless wait is false and the
// copy is queued on cur's peer stream (queued; synchronize that stream
// for it). It reports whether the copy went device to device (one
// context, or peer to peer) rather than through the driver's staging in
// host memory.
func copyDevice(cur, to, from *device, dst, src, size uint64, wait bool) (peer, queued bool, err error) {
	d := to.d
	peer = true
	if to.ctx == from.ctx {
		if err := d.cuMemcpyDtoD_v2(dst, src, size).Err("cuMemcpyDtoD_v2"); err != nil {
			return false, false, err
		}
	} else {
		other := from
		if cur == from {
			other = to
		}
		if peer, err = enablePeer(cur, other); err != nil {
			return false, false, err
		}
		// On cur's peer stream, which waits for no kernel of either
		// device: the rows copied are final (the kernels that wrote them
		// were waited for), and the receiver's kernels meanwhile touch
		// other rows.
		if err := d.cuMemcpyPeerAsync(dst, to.ctx, src, from.ctx, size, cur.peerStream).Err("cuMemcpyPeerAsync"); err != nil {
			return false, false, err
		}
		if !wait {
			return peer, true, nil
		}
		return peer, false, d.cuStreamSynchronize(cur.peerStream).Err("cuStreamSynchronize (peer stream)")
	}
	return peer, false, d.cuCtxSynchronize().Err("cuCtxSynchronize")
}

// HubRowsReport says, for --verbose, what the runner's hub rows (hubs.go)
// cost: how many, where each part was computed and in how long, and what
// was copied between devices; empty where the runner keeps none.
func (r *Runner) HubRowsReport() string {
	r.mu.Lock()
	h, took := len(r.hubs.vertices), r.hubs.took
	g := r.hubGroup
	r.mu.Unlock()
	if h == 0 {
		return ""
	}
	if g == nil || g.h != h {
		return fmt.Sprintf("%d hub rows computed in %s", h, took.Round(time.Millisecond))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	how := "peer to peer"
	if !g.peer {
		how = "through host memory"
	}
	if ph := g.phased; ph != nil && !ph.failed {
		fmt.Fprintf(&b, "%d hub rows in %d phases shared by %d devices:", h, len(ph.done), len(g.runners))
		for j, o := range g.runners {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d computed on device %d in %s", ph.rows[j], o.e.dev.ordinal, ph.took[j].Round(time.Millisecond))
		}
		if g.packed > 0 {
			how += fmt.Sprintf(", %d of them packed in 16 bits", g.packed)
		}
		fmt.Fprintf(&b, "; %d spans copied between devices (%.1f GiB in %s, %s)", g.copies, float64(g.copied)/(1<<30), g.copying.Round(time.Millisecond), how)
		return b.String()
	}
	fmt.Fprintf(&b, "%d hub rows in %d parts:", h, len(g.parts))
	for i, p := range g.parts {
		if i > 0 {
			b.WriteString(",")
		}
		if p.state == partReady {
			fmt.Fprintf(&b, " %d computed on device %d in %s", p.hi-p.lo, p.device, p.took.Round(time.Millisecond))
		} else {
			fmt.Fprintf(&b, " %d not kept", p.hi-p.lo)
		}
	}
	fmt.Fprintf(&b, "; %d parts copied between devices (%.1f GiB in %s, %s)", g.copies, float64(g.copied)/(1<<30), g.copying.Round(time.Millisecond), how)
	return b.String()
}

// leaveHubGroup withdraws the parts r computed, before its buffers are
// freed: the other runners compute them again if they still need them.
func (r *Runner) leaveHubGroup() {
	g := r.hubGroup
	if g == nil {
		return
	}
	if l := r.hubs.late; l != nil { // r's own count of the last phase, first
		r.hubs.late = nil
		l.wait()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// A phased round's rows are read by the others until each has copied
	// the last phase.
	for ph := g.phased; ph != nil && ph.joined[r] && !ph.failed && ph.copied < len(g.runners); {
		g.cond.Wait()
	}
	for g.inflight > 0 { // a copy may write r's rows (pushSpans)
		g.cond.Wait()
	}
	for i := range g.parts {
		if p := &g.parts[i]; p.owner == r && p.state == partReady {
			p.state, p.owner, p.at = partFree, nil, 0
		}
	}
	g.cond.Broadcast()
}

// handBounds are where the m hands of a list of h dealt (hubs.go) lie in
// it: [lo, hi) each.
func handBounds(h, m int) [][2]int {
	out := make([][2]int, m)
	lo := 0
	for i := range out {
		hi := lo + (h-i+m-1)/m
		out[i] = [2]int{lo, hi}
		lo = hi
	}
	return out
}

// rowBytes is the size of one distance row.
func (r *Runner) rowBytes() int64 { return int64(r.n) * int64(r.distType.Size()) }

// enablePeer lets dst's context read src's memory where the devices allow
// it, and reports whether they do (the driver stages copies through the
// host otherwise).
func enablePeer(dst, src *device) (bool, error) {
	var can int32
	if err := dst.d.cuDeviceCanAccessPeer(&can, dst.handle, src.handle).Err("cuDeviceCanAccessPeer"); err != nil {
		return false, err
	}
	if can == 0 {
		return false, nil
	}
	if r := dst.d.cuCtxEnablePeerAccess(src.ctx, 0); r != resultPeerAlreadyEnabled {
		if err := r.Err("cuCtxEnablePeerAccess"); err != nil {
			return false, err
		}
	}
	return true, nil
}
