package gpu

// The phased round of shared hub rows (hubshare.go): one plan of the whole
// hub list, each phase cut among the runners, each runner's rows of a phase
// sent to the others as soon as it has them, and the late rows a block
// waits for.

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

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
	// finish, until it ran, makes the plan's later phases (hubStore.plan).
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
	joined map[*hubStore]bool
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

// ensurePhased is ensureShared in a phased round (modePhases), with g.mu
// held: the first runner plans the hub list; every runner computes its
// share of each phase, sends it to the others and waits for theirs, then
// derives the plan's minimums and leaves. Where there is nothing to
// derive, a runner that has sent its share of the last phase goes on
// without waiting for the others' (hs.rows.late): its next block starts on
// the rows it has while theirs cross the link (on two H200s the last
// phase's 11 GiB took 31 ms, which every block waited for; docs/benchmarks-history.md,
// "The last phase's rows cross while the blocks work"). tell hands the
// block's plan the rows that may come late, once the last phase is cut.
// Where a runner fails, the others compute every row alone.
func (g *hubGroup) ensurePhased(hs *hubStore, tell func([]bool)) error {
	j := slices.Index(g.runners, hs)
	// hs's stage, before the plan is waited for (peer access is on since
	// ShareHubRows, reachEachOther). Where it cannot be made, hs's rows go
	// whole.
	if st := newHubStage(hs, g.base[hs]); st != nil {
		g.stage[hs] = st
		defer hs.r.e.dev.free(&st.flag) // hs's packs are over when it returns (freed already when it goes on)
	}
	tracef(hs.r.ordinal, "hub rows: stage ready")
	if g.phased == nil {
		a := hs.run.ahead
		bp, finish, err := hs.plan(0, len(hs.rows.vertices))
		tracef(hs.r.ordinal, "hub rows: plan's first phase made")
		if err != nil {
			g.phased = &phasedRound{failed: true, joined: map[*hubStore]bool{}}
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
	ph.joined[hs] = true
	last := len(ph.done) - 1
	if !ph.failed && last >= 0 {
		pr, h := &ph.prep[last], g.h
		go func() {
			<-pr.ready
			tell(lateRowsOf(pr, j, h))
		}()
	}
	alone := func() error {
		for g.inflight > 0 { // a packed send may still write hs's block rows
			g.cond.Wait()
		}
		g.mu.Unlock()
		defer g.mu.Lock()
		return hs.compute(0, len(hs.rows.vertices))
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
			tracef(hs.r.ordinal, "hub phase %d: %d rows", i, len(part.Sources))
			g.mu.Unlock()
			began := time.Now()
			err := hs.runPlan(part, nil, pr.packed[j], 0, time.Now())
			g.mu.Lock()
			ph.took[j] += time.Since(began)
			ph.rows[j] += len(part.Sources)
			if err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		tracef(hs.r.ordinal, "hub phase %d computed", i)
		if hubPhaseFault != nil {
			if err := hubPhaseFault(g, ph, hs, i); err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		goOn := i == last && g.nothingToDerive(ph, hs)
		if st := g.stage[hs]; goOn && st != nil {
			// hs packs nothing more (the last phase's spans go whole):
			// its flag is freed now, while its context is idle, since
			// cuMemFree waits for the context's work, the copies queued
			// below included (5 ms before hs's block, R-MAT 18 on two
			// H200s; docs/benchmarks-history.md, "Where the round's start and end
			// went (traces of runs 1–3)").
			if err := hs.r.e.dev.free(&st.flag); err != nil {
				ph.failed = true
				g.cond.Broadcast()
				return err
			}
		}
		sent, err := g.pushSpans(hs, ph, pr, i, goOn)
		if err != nil {
			ph.failed = true
			g.cond.Broadcast()
			return err
		}
		if goOn {
			// hs's share counts as sent once its copies are waited for
			// (lateHubRows.wait), which its block does after queueing
			// the work that reads none of the others' shares.
			tracef(hs.r.ordinal, "hub phase %d: going on while the shares cross", i)
			hs.rows.late = &lateHubRows{g: g, ph: ph, hs: hs, sent: sent}
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
		if err := g.widen(hs, ph, pr, i); err != nil {
			ph.failed = true
			g.cond.Broadcast()
			return err
		}
		tracef(hs.r.ordinal, "hub phase %d: every device's share in place", i)
	}
	ph.copied++
	tracef(hs.r.ordinal, "hub phases copied")
	g.cond.Broadcast()
	if g.nothingToDerive(ph, hs) {
		// The core's rows all come from the kernel: the empty plan's run
		// took 17-29 ms on an H200, and its copy of the seeds' arcs 5 ms
		// (docs/benchmarks-history.md, "The shared hub rows sent as they come").
		return nil
	}
	d := ph.plan.Derivations()
	g.mu.Unlock()
	defer g.mu.Lock()
	tracef(hs.r.ordinal, "hub derivations: %d minimums, %d leaves", len(d.Mins), len(d.Derive))
	defer tracef(hs.r.ordinal, "hub derivations done")
	return hs.runPlan(d, nil, nil, 0, time.Now())
}

// nothingToDerive reports whether the round's plan derives no row from
// the rows its phases compute, once finished (with g.mu held, released
// meanwhile; finishPlan).
func (g *hubGroup) nothingToDerive(ph *phasedRound, hs *hubStore) bool {
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
// runner hs computed its share of phase i of a phased round; an error
// fails hs there, as a kernel's would.
var hubPhaseFault func(g *hubGroup, ph *phasedRound, hs *hubStore, i int) error

// lateHubRows are the rows of a phased round's last phase that the other
// runners still send when hs goes on without them (ensurePhased).
type lateHubRows struct {
	g  *hubGroup
	ph *phasedRound
	hs *hubStore
	// sent, when not nil, waits for hs's own share's copies (pushSpans).
	sent func() error
	// waited is set once wait was called.
	waited bool
}

// wait waits for hs's copies of its share of the round's last phase,
// counts it sent, and waits until every runner has sent its own (on hs's
// device goroutine). It reports lost where one failed first (hs's own
// copies included): hs's rows then lack a share, so hs.rows.ready is
// cleared and the next hubStore.ensure computes them. Called again, it
// returns at once (false).
func (l *lateHubRows) wait() (lost bool) {
	g, ph, hs := l.g, l.ph, l.hs
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
		tracef(hs.r.ordinal, "hub phase %d: sending failed: %v", last, err)
		ph.failed = true
	} else {
		ph.done[last]++
	}
	g.cond.Broadcast()
	for ph.done[last] < len(g.runners) && !ph.failed {
		g.cond.Wait()
	}
	if ph.failed {
		tracef(hs.r.ordinal, "hub rows lost: another device failed before its share arrived")
		hs.rows.ready = false
		g.lost++
		return true
	}
	ph.copied++
	tracef(hs.r.ordinal, "hub phases copied (waited %s)", time.Since(began).Round(time.Microsecond))
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
		joined: map[*hubStore]bool{}, prep: make([]phasePrep, phases), packed: map[[3]int]bool{}}
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

// pushSpans copies hs's rows of phase i of the round into every other
// runner's, with g.mu held on entry and on return but not during the
// copies: a runner sends its rows as soon as it has computed them, while
// the others may still compute theirs, and a phase is done once every
// runner has sent its own. The span lies in hs's part of the hub list,
// which no other runner writes: beside hs's rows of the phase it may
// cover hs's rows of other phases, earlier ones the same on every device
// and later ones computed on none yet. g.inflight keeps a runner's
// memory from being freed (hubStore.leave) while a copy writes into it.
// R-MAT 18's core on two H200s (docs/benchmarks-history.md, "The shared hub rows sent
// as they come"): pulling the others' rows after each phase with the lock
// held, each runner's copies waited behind the other's (106 ms of copies
// in all, 65 ms after the last phase); pulled at once they shared the link
// (30 and 60 ms after the last phase).
//
// With async (a last phase that hs leaves without waiting) the copies are
// only queued where they go peer to peer, and sent, when not nil, waits
// for them and counts them, with g.mu released (on hs's device goroutine).
// Otherwise a receiver with a stage gets the span packed in 16 bits where
// its values fit (hubsend.go; ph.packed says so), and widens it once every
// share of the phase is in (widen).
func (g *hubGroup) pushSpans(hs *hubStore, ph *phasedRound, pr *phasePrep, i int, async bool) (sent func() error, err error) {
	j := slices.Index(g.runners, hs)
	sp := pr.span[j]
	if sp[1] <= sp[0] || ph.failed {
		return nil, nil
	}
	at := uint64(int64(sp[0]) * hs.rowBytes())
	size := int64(sp[1]-sp[0]) * hs.rowBytes()
	var to []*hubStore
	for _, other := range g.runners {
		if other != hs {
			to = append(to, other)
		}
	}
	var packs []packedSend
	if !async {
		packs = g.packedSends(hs, pr, i)
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
	count := int64(sp[1]-sp[0]) * int64(hs.r.n)
	packed, err := g.sendPacked(hs, packs, g.base[hs]+at, count)
	if err != nil {
		return fail(err)
	}
	peer, queued := true, false
	for _, o := range to {
		if packed[o] {
			continue
		}
		p, q, err := copyDevice(hs.r.e.dev, o.r.e.dev, hs.r.e.dev, g.base[o]+at, g.base[hs]+at, uint64(size), !async)
		if err != nil {
			if queued { // the copies queued before it still write
				hs.r.e.dev.d.cuStreamSynchronize(hs.r.e.dev.peerStream)
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
		tracef(hs.r.ordinal, "hub phase %d: sent to %d devices (%.1f GiB each in %s%s)", i, len(to), float64(size)/(1<<30), took.Round(time.Millisecond), how)
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
		dv := hs.r.e.dev
		return func() error {
			return done(dv.d.cuStreamSynchronize(dv.peerStream).Err("cuStreamSynchronize (peer stream)"))
		}, nil
	}
	err = done(nil)
	g.mu.Lock()
	return nil, err
}
