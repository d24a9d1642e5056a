package gpu

// Hub rows shared among devices (issue 19): on several devices each
// runner of one graph keeps the same hub rows (hubs.go), and computing
// them all on every device repeats work that one device's blocks alone
// would not (R-MAT 18 on two H200s: 2.93 s with every device computing
// its rows itself). ShareHubRows groups the runners: the hub list is cut
// into a part per runner, each runner computes the parts no other has
// claimed, and copies the others' parts from their devices (peer to peer
// where cuDeviceCanAccessPeer allows it, through the driver's staging
// otherwise) once they are final.
//
// Choices: a runner waits for a part another runner is computing rather
// than computing it again; no wait is unbounded, since a part is claimed
// only by a runner that is computing it, on its own device goroutine,
// and a claim that fails is released for the others to take. A runner
// whose buffers are released (a reallocation, Close) withdraws its parts
// under the group's lock, which every copy holds, so no copy reads freed
// memory. Runners whose hub lists differ in length (other capacities)
// compute their rows alone.

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// hubGroup is the hub rows shared among runners of one graph.
type hubGroup struct {
	mu   sync.Mutex
	cond *sync.Cond
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

// ShareHubRows makes runners, of one graph on several devices (or several
// engines of one device), share their hub rows: each computes a part of
// them and copies the rest from the others. One runner alone needs no
// group.
func ShareHubRows(runners []*Runner) {
	if len(runners) < 2 {
		return
	}
	g := &hubGroup{parts: make([]hubPart, len(runners)), peer: true}
	g.cond = sync.NewCond(&g.mu)
	for _, r := range runners {
		r.mu.Lock()
		r.hubGroup = g
		r.mu.Unlock()
	}
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
func (g *hubGroup) ensureShared(r *Runner) (bool, error) {
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
		return false, nil
	}
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
					return true, err
				}
				p.state, p.at = partReady, r.dist.ptr+uint64(int64(r.hubs.firstRow+p.lo)*r.rowBytes())
				g.cond.Broadcast()
			case p.state == partReady && p.owner == r:
			case p.state == partReady:
				began := time.Now()
				peer, err := r.copyHubPart(p)
				if err != nil {
					return true, err
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
	return true, nil
}

// copyHubPart copies part p's rows from its owner's device into r's hub
// rows, and waits for the copy (with the group's lock held, so that the
// owner cannot free them meanwhile). It reports whether the copy went
// device to device (one context, or peer to peer) rather than through
// the driver's staging in host memory.
func (r *Runner) copyHubPart(p *hubPart) (bool, error) {
	dst, src := r.e.dev, p.owner.e.dev
	to := r.dist.ptr + uint64(int64(r.hubs.firstRow+p.lo)*r.rowBytes())
	size := uint64(int64(p.hi-p.lo) * r.rowBytes())
	d := dst.d
	peer := true
	if dst.ctx == src.ctx {
		if err := d.cuMemcpyDtoD_v2(to, p.at, size).Err("cuMemcpyDtoD_v2"); err != nil {
			return false, err
		}
	} else {
		var err error
		if peer, err = enablePeer(dst, src); err != nil {
			return false, err
		}
		if err := d.cuMemcpyPeer(to, dst.ctx, p.at, src.ctx, size).Err("cuMemcpyPeer"); err != nil {
			return false, err
		}
	}
	return peer, d.cuCtxSynchronize().Err("cuCtxSynchronize")
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
	how := "peer to peer"
	if !g.peer {
		how = "through host memory"
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
	g.mu.Lock()
	defer g.mu.Unlock()
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
