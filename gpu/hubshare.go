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
	"strings"
	"sync"
	"time"

	"github.com/pathctl/pathctl/gpu/internal/plan"
)

// hubGroup is the hub rows shared among runners of one graph.
type hubGroup struct {
	mu      sync.Mutex
	cond    *sync.Cond
	runners []*hubStore
	// mode is how the runners share the rows: decided once, when every
	// runner has asked for them (modePhases) or hubArrivalWait after the
	// first did (modeParts); arrived counts them, and base holds each
	// one's first hub row's address.
	mode    int
	arrived int
	base    map[*hubStore]uint64
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
	stage  map[*hubStore]*hubStage
	packed int
}

// hubPart is a piece [lo, hi) of the hub list: free, being computed by
// owner, or final in owner's rows from row firstRow + lo.
type hubPart struct {
	lo, hi int
	state  int
	owner  *hubStore
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

// ShareHubRows makes runners, of one graph on several devices (or several
// engines of one device), share their hub rows: each computes a part of
// them and copies the rest from the others. One runner alone needs no
// group.
func ShareHubRows(runners []*Runner) {
	if len(runners) < 2 {
		return
	}
	stores := make([]*hubStore, len(runners))
	for i, r := range runners {
		stores[i] = &r.hubs
	}
	g := &hubGroup{parts: make([]hubPart, len(runners)), peer: true, runners: stores, base: map[*hubStore]uint64{}, stage: map[*hubStore]*hubStage{}}
	g.cond = sync.NewCond(&g.mu)
	for _, r := range runners {
		r.mu.Lock()
		r.hubs.group = g
		r.mu.Unlock()
	}
	reachEachOther(stores)
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
func reachEachOther(stores []*hubStore) {
	var wg sync.WaitGroup
	for _, hs := range stores {
		if hs.r.e == nil || !hs.possible() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dv := hs.r.e.dev
			dv.do(func() error {
				for _, o := range stores {
					if o.r.e != nil && o.r.e.dev.ctx != dv.ctx {
						enablePeer(dv, o.r.e.dev)
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
}

// copiedParts is how many parts of the hub rows the runner's group took
// from another device than the one that computed them (0 without a
// group), for tests and --verbose.
func (hs *hubStore) copiedParts() int {
	g := hs.group
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.copies
}

// ensureShared fills hs's hub rows from the group (on hs's device
// goroutine): the parts no runner has claimed are computed here, the
// parts another runner computes are waited for and copied. It reports
// false, doing nothing, where hs's hub list is not the group's length.
func (g *hubGroup) ensureShared(hs *hubStore, tell func([]bool)) (bool, error) {
	h := len(hs.rows.vertices)
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
		g.base[hs] = hs.r.buf.dist.ptr + uint64(int64(hs.rows.firstRow)*hs.rowBytes())
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
	if g.mode == modePhases && (g.phased == nil || !g.phased.joined[hs]) {
		return true, g.ensurePhased(hs, tell)
	}
	tell(nil) // every row in place before hs's block
	return true, g.ensureParts(hs)
}

// ensureParts is ensureShared by parts (modeParts, or a runner that needs
// the rows again after its phased round), with g.mu held.
func (g *hubGroup) ensureParts(hs *hubStore) error {
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
				p.state, p.owner = partComputing, hs
				g.mu.Unlock()
				began := time.Now()
				err := hs.compute(p.lo, p.hi)
				g.mu.Lock()
				p.took, p.device = time.Since(began), hs.r.e.dev.ordinal
				if err != nil {
					p.state, p.owner = partFree, nil
					g.cond.Broadcast()
					return err
				}
				p.state, p.at = partReady, hs.r.buf.dist.ptr+uint64(int64(hs.rows.firstRow+p.lo)*hs.rowBytes())
				g.cond.Broadcast()
			case p.state == partReady && p.owner == hs:
			case p.state == partReady:
				began := time.Now()
				peer, err := hs.copyPart(p)
				if err != nil {
					return err
				}
				g.copies++
				g.copied += int64(p.hi-p.lo) * hs.rowBytes()
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

// runPlan runs a plan of hub rows whose own rows start at 0 (its
// later phases finished by finish, when not nil, while the first runs;
// packed ahead, when packed is not nil; runPlan) in the hub rows from hub
// first on: the block's kernels, which address rows from the start of
// r.buf.dist, see a view of the first slot's rows that starts there, so that
// the plan need not be shifted and its first phase runs before the rest
// of it is made. Its device time adds to the runner's kernel time; began
// is when its planning began.
func (hs *hubStore) runPlan(bp *plan.Block, finish func(), packed *plan.Packed, first int, began time.Time) error {
	if bp.Rows == nil {
		bp.Rows = ownRows(len(bp.Sources)) // the hubs, not the block's sources
	}
	view := hs.r.buf.dist
	row := hs.rowBytes()
	hs.r.buf.dist = devBuf{ptr: hs.r.buf.slots[0].dist.ptr + uint64(int64(hs.rows.firstRow+first)*row), size: int64(len(hs.rows.vertices)-first) * row}
	// The first phase's frontier lies where a block's would, in the
	// block's rows: a part of a later phase (one phase of its own, a
	// phased round) would otherwise lay it over the earlier phases' rows.
	hs.r.frontierRows = view
	defer func() { hs.r.buf.dist, hs.r.frontierRows = view, devBuf{} }()
	if err := runPlan(hs.r, bp, finish, packed, began, nil); err != nil {
		return err
	}
	hs.r.kernelTime += hs.r.e.dev.lastKernel
	return nil
}

// report says, for --verbose, what the runner's hub rows (hubs.go)
// cost: how many, where each part was computed and in how long, and what
// was copied between devices; empty where the runner keeps none.
func (hs *hubStore) report() string {
	hs.r.mu.Lock()
	h, took := len(hs.rows.vertices), hs.rows.took
	g := hs.group
	hs.r.mu.Unlock()
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
			fmt.Fprintf(&b, " %d computed on device %d in %s", ph.rows[j], o.r.e.dev.ordinal, ph.took[j].Round(time.Millisecond))
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

// leave withdraws the parts hs computed, before its buffers are
// freed: the other runners compute them again if they still need them.
func (hs *hubStore) leave() {
	g := hs.group
	if g == nil {
		return
	}
	if l := hs.rows.late; l != nil { // hs's own count of the last phase, first
		hs.rows.late = nil
		l.wait()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// A phased round's rows are read by the others until each has copied
	// the last phase.
	for ph := g.phased; ph != nil && ph.joined[hs] && !ph.failed && ph.copied < len(g.runners); {
		g.cond.Wait()
	}
	for g.inflight > 0 { // a copy may write hs's rows (pushSpans)
		g.cond.Wait()
	}
	for i := range g.parts {
		if p := &g.parts[i]; p.owner == hs && p.state == partReady {
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
func (hs *hubStore) rowBytes() int64 { return int64(hs.r.n) * int64(hs.r.distType.Size()) }
