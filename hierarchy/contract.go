package hierarchy

// Contraction: classic contraction hierarchies (Geisberger, Sanders,
// Schultes, Delling, "Contraction Hierarchies: Faster and Simpler
// Hierarchical Routing in Road Networks", WEA 2008), on directed graphs,
// contracted in rounds of independent vertices as parallel CH does
// (Vetter, "Parallel Time-Dependent Contraction Hierarchies", 2009; the
// OSRM contractor).
//
// Choices:
//   - Each remaining vertex keeps its out-arcs and in-arcs to remaining
//     vertices, so one-way streets need nothing special: contracting v adds
//     u→x (weight w(u,v)+w(v,x)) for an in-arc u→v and an out-arc v→x
//     unless a witness path u⇝x that avoids v is at most as long.
//   - A round takes every remaining vertex whose priority is below those
//     of all its neighbours (ties broken by a hash of the id, so that a
//     grid of equal priorities still yields many), an independent set I.
//     Its vertices are ordered by priority and contracted concurrently,
//     their witness searches on every worker over the graph as it was at
//     the start of the round. The search for the i-th vertex of I avoids
//     the first i (itself included): every witness it finds then also
//     exists when I is contracted one by one in that order, so the round
//     is a serial contraction with searches that see a little less (a few
//     more shortcuts, never a wrong one), whatever the weights (ties and
//     zero weights included) and whatever the worker count. The shortcuts
//     are then applied in that order, and the neighbours' priorities
//     recomputed on every worker: the hierarchy is the same for any
//     number of workers.
//   - One witness search per in-neighbour u: a Dijkstra from u over the
//     remaining graph, stopped once it has settled every out-neighbour of
//     v, passed the largest w(u,v)+w(v,x) or settled its limit of
//     vertices. A shortcut is added whenever the search
//     did not find a witness, so the limits cost shortcuts, never
//     correctness.
//   - Priority = 2·edge difference (shortcuts added minus arcs removed) +
//     contracted neighbours + level (one more than the highest level of a
//     contracted neighbour): the first spreads the contraction evenly, the
//     last two keep the hierarchy shallow. Priorities are estimated with
//     smaller search limits and recomputed for the neighbours of the
//     vertices each round contracts.
//   - Contraction order is the rank; the arcs a vertex still has when it
//     is contracted all lead to higher ranks, and they are appended in
//     that order, so the upward and downward graphs come out already laid
//     out by rank.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/graph"
)

// arc is an arc of the remaining graph: its other end, its weight and the
// vertex a shortcut bypasses (-1 for an arc of the graph).
type arc struct {
	to, mid int32
	w       int64
}

type builder struct {
	out, in    [][]arc
	contracted []bool
	deleted    []int32  // contracted neighbours
	level      []int32  // one more than the highest contracted neighbour's
	pri        []int64  // current priority
	roundPos   []uint32 // 1 + position in the round's independent set, 0 outside it
	opts       Options
	workers    int
	witnesses  []*witness // one per worker
	added      int64      // shortcuts added or lowered
	limit      int64      // ErrTooManyShortcuts past this
	arcs       int64      // arcs of the remaining graph
}

type shortcut struct {
	from, to int32
	w        int64
}

func contract(ctx context.Context, g *graph.CSR, w []int64, opts Options) (*Hierarchy, error) {
	n := g.NumVertices
	b := &builder{
		out: make([][]arc, n), in: make([][]arc, n),
		contracted: make([]bool, n), deleted: make([]int32, n), level: make([]int32, n),
		pri: make([]int64, n), roundPos: make([]uint32, n),
		opts:    opts,
		workers: max(1, min(opts.Workers, n/256+1)),
		limit:   int64(opts.MaxShortcutsPerArc*float64(len(g.Targets))) + 16,
		arcs:    int64(len(g.Targets)),
	}
	b.witnesses = make([]*witness, b.workers)
	for i := range b.witnesses {
		b.witnesses[i] = newWitness(n)
	}
	// 1. The remaining graph is the whole graph, arcs both ways.
	indeg := make([]int32, n)
	for _, v := range g.Targets {
		indeg[v]++
	}
	for v := range n {
		b.in[v] = make([]arc, 0, indeg[v])
		b.out[v] = make([]arc, 0, g.Offsets[v+1]-g.Offsets[v])
	}
	for u := range n {
		for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
			v := g.Targets[k]
			b.out[u] = append(b.out[u], arc{to: v, mid: -1, w: w[k]})
			b.in[v] = append(b.in[v], arc{to: int32(u), mid: -1, w: w[k]})
		}
	}

	// 2. Initial priorities on every worker.
	remaining := make([]int32, n)
	for v := range remaining {
		remaining[v] = int32(v)
	}
	b.updatePriorities(remaining)

	// 3. Rounds of independent sets until every vertex is contracted.
	h := &Hierarchy{n: n, rank: make([]int32, n), order: make([]int32, 0, n), derived: &derived{}}
	h.up.off = append(make([]int64, 0, n+1), 0)
	h.down.off = append(make([]int64, 0, n+1), 0)
	round := &round{}
	for len(remaining) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hierarchy: the build stopped after contracting %d of %d vertices: %w", len(h.order), n, err)
		}
		set := b.independentSet(remaining, round)
		b.shortcutsOfSet(set, round)
		touched := b.apply(h, set, round)
		if b.added > b.limit {
			return nil, fmt.Errorf("%w: more than %.3g per arc after contracting %d of %d vertices",
				ErrTooManyShortcuts, opts.MaxShortcutsPerArc, len(h.order), n)
		}
		if left := n - len(h.order); left >= minDenseCore && float64(b.arcs) > coreDegreeBound(opts.MaxCoreDegree, n, left)*float64(left) {
			return nil, fmt.Errorf("%w: after contracting %d of %d vertices the %d left have %.0f arcs each on average, past %.0f",
				ErrTooManyShortcuts, len(h.order), n, left, float64(b.arcs)/float64(left), coreDegreeBound(opts.MaxCoreDegree, n, left))
		}
		b.updatePriorities(touched)
		remaining = slices.DeleteFunc(remaining, func(v int32) bool { return b.contracted[v] })
	}

	// 4. Heads and bypassed vertices as ranks.
	for _, half := range []*arcs{&h.up, &h.down} {
		for k, x := range half.head {
			half.head[k] = h.rank[x]
			if m := half.mid[k]; m >= 0 {
				half.mid[k] = h.rank[m]
			}
		}
		half.head, half.w, half.mid = slices.Clip(half.head), slices.Clip(half.w), slices.Clip(half.mid)
	}
	return h, nil
}

// round holds one round's buffers, reused by the next.
type round struct {
	picked     [][]int32    // per worker: the vertices of the set it found
	set        []int32      // the independent set, in contraction order
	shortcuts  [][]shortcut // per worker: the shortcuts it found
	found      []span       // found[i]: where set[i]'s shortcuts are
	touched    []int32      // neighbours of the set, once each
	seen       []bool       // seen[x]: x is in touched
	neighbours []int32      // one vertex's neighbours
}

// span is a range of one worker's shortcuts.
type span struct {
	worker     int32
	start, end int32
}

// tieBreak orders vertices of equal priority by a fixed hash of the id,
// so that the local minima of a region of equal priorities are spread
// over it rather than all at its lowest id.
func tieBreak(v int32) uint32 {
	x := uint32(v) * 0x9e3779b1
	x ^= x >> 15
	x *= 0x85ebca77
	x ^= x >> 13
	return x
}

// before reports whether u's key (priority, tie break, id) is below v's.
func (b *builder) before(u, v int32) bool {
	if b.pri[u] != b.pri[v] {
		return b.pri[u] < b.pri[v]
	}
	if hu, hv := tieBreak(u), tieBreak(v); hu != hv {
		return hu < hv
	}
	return u < v
}

// independentSet returns the remaining vertices whose key is below those
// of all their neighbours, in key order, and numbers them in b.roundPos.
func (b *builder) independentSet(remaining []int32, r *round) []int32 {
	if len(r.picked) != b.workers {
		r.picked = make([][]int32, b.workers)
	}
	b.parallelChunks(len(remaining), func(worker, lo, hi int) {
		for _, v := range remaining[lo:hi] {
			if b.isLocalMinimum(v) {
				r.picked[worker] = append(r.picked[worker], v)
			}
		}
	})
	r.set = r.set[:0]
	for i, list := range r.picked {
		r.set = append(r.set, list...)
		r.picked[i] = list[:0]
	}
	slices.SortFunc(r.set, func(u, v int32) int {
		switch {
		case b.before(u, v):
			return -1
		case b.before(v, u):
			return 1
		}
		return 0
	})
	for i, v := range r.set {
		b.roundPos[v] = uint32(i + 1)
	}
	return r.set
}

func (b *builder) isLocalMinimum(v int32) bool {
	for _, a := range b.out[v] {
		if b.before(a.to, v) {
			return false
		}
	}
	for _, a := range b.in[v] {
		if b.before(a.to, v) {
			return false
		}
	}
	return true
}

// shortcutsOfSet finds, on every worker, the shortcuts each vertex of the
// set needs (the graph is read only).
func (b *builder) shortcutsOfSet(set []int32, r *round) {
	if len(r.shortcuts) != b.workers {
		r.shortcuts = make([][]shortcut, b.workers)
	}
	for i := range r.shortcuts {
		r.shortcuts[i] = r.shortcuts[i][:0]
	}
	r.found = slices.Grow(r.found[:0], len(set))[:len(set)]
	b.parallelChunks(len(set), func(worker, lo, hi int) {
		ws := b.witnesses[worker]
		for i := lo; i < hi; i++ {
			v := set[i]
			start := len(r.shortcuts[worker])
			b.shortcutsOf(v, ws, b.roundPos[v], b.opts.WitnessSettled, func(u, x int32, w int64) {
				r.shortcuts[worker] = append(r.shortcuts[worker], shortcut{u, x, w})
			})
			r.found[i] = span{int32(worker), int32(start), int32(len(r.shortcuts[worker]))}
		}
	})
}

// apply contracts the set in order: ranks, the hierarchy's arcs, the
// removal from the remaining graph and the shortcuts. It returns the
// remaining neighbours of the set, once each.
func (b *builder) apply(h *Hierarchy, set []int32, r *round) []int32 {
	if r.seen == nil {
		r.seen = make([]bool, len(b.out))
	}
	r.touched = r.touched[:0]
	for i, v := range set {
		// v's remaining arcs lead to higher ranks: they are v's upward
		// and downward arcs.
		h.rank[v] = int32(len(h.order))
		h.order = append(h.order, v)
		for _, a := range b.out[v] {
			h.up.head, h.up.w, h.up.mid = append(h.up.head, a.to), append(h.up.w, a.w), append(h.up.mid, a.mid)
		}
		for _, a := range b.in[v] {
			h.down.head, h.down.w, h.down.mid = append(h.down.head, a.to), append(h.down.w, a.w), append(h.down.mid, a.mid)
		}
		h.up.off = append(h.up.off, int64(len(h.up.head)))
		h.down.off = append(h.down.off, int64(len(h.down.head)))
		// Remove v from the remaining graph and add its shortcuts.
		b.contracted[v] = true
		r.neighbours = r.neighbours[:0]
		for _, a := range b.out[v] {
			b.in[a.to] = removeArc(b.in[a.to], v)
			r.neighbours = append(r.neighbours, a.to)
		}
		for _, a := range b.in[v] {
			b.out[a.to] = removeArc(b.out[a.to], v)
			r.neighbours = append(r.neighbours, a.to)
		}
		b.arcs -= int64(len(b.out[v]) + len(b.in[v]))
		b.out[v], b.in[v] = nil, nil
		f := r.found[i]
		for _, s := range r.shortcuts[f.worker][f.start:f.end] {
			b.addArc(s.from, s.to, s.w, v)
		}
		// The neighbours' counts, each neighbour once.
		slices.Sort(r.neighbours)
		for _, x := range slices.Compact(r.neighbours) {
			b.deleted[x]++
			b.level[x] = max(b.level[x], b.level[v]+1)
			if !r.seen[x] {
				r.seen[x] = true
				r.touched = append(r.touched, x)
			}
		}
	}
	for _, v := range set {
		b.roundPos[v] = 0
	}
	for _, x := range r.touched {
		r.seen[x] = false
	}
	return r.touched
}

// updatePriorities recomputes the priorities of vertices on every worker.
func (b *builder) updatePriorities(vertices []int32) {
	b.parallelChunks(len(vertices), func(worker, lo, hi int) {
		ws := b.witnesses[worker]
		for _, v := range vertices[lo:hi] {
			b.pri[v] = b.priority(v, ws)
		}
	})
}

// maxSimulatedPairs bounds the in·out pairs whose witnesses priority
// searches for: a vertex of more (a hub of a social or R-MAT graph, with
// thousands of arcs) is assumed to need a shortcut for every pair, the
// most it could, at no cost; it is contracted late either way. Road-like
// grids keep degrees below 32 until about a thousand vertices are left.
const maxSimulatedPairs = 32 * 32

// minDenseCore is the fewest remaining vertices for which a dense core
// (Options.MaxCoreDegree) gives up: the last vertices of every graph are
// dense, and this many cost little whatever their degree.
const minDenseCore = 1024

// coreDegreeBound is the most arcs per vertex the remaining graph may
// have on average when left of n vertices remain: base, plus base/4 for
// every halving of the vertices. Contraction thins road-like graphs
// (a 1000² grid keeps 4 to 13 arcs per vertex until 1 % are left, 28 at
// 1,024 left, against a bound of 26 and 56) while graphs without a
// hierarchy turn dense at once (R-MAT 14: 39 arcs per vertex once 30 %
// are left, against 23).
func coreDegreeBound(base float64, n, left int) float64 {
	return base * (1 + math.Log2(float64(n)/float64(left))/4)
}

// priority estimates v's priority: 2·edge difference + contracted
// neighbours + level. The weight 2 on the edge difference was measured on
// 128² grids against 1: about 10 % fewer shortcuts and smaller search
// spaces.
func (b *builder) priority(v int32, ws *witness) int64 {
	removed := len(b.in[v]) + len(b.out[v])
	added := len(b.in[v]) * len(b.out[v]) // the most: no witness
	if added <= maxSimulatedPairs {
		added = b.shortcutsOf(v, ws, 0, b.opts.SimulateSettled, nil)
	}
	return 2*int64(added-removed) + int64(b.deleted[v]) + int64(b.level[v])
}

// shortcutsOf counts the shortcuts that contracting v needs with witness
// searches of at most settled vertices, and passes each to
// emit when emit is not nil. The searches avoid v and the vertices of the
// round's set numbered at most pos (none for pos 0).
func (b *builder) shortcutsOf(v int32, ws *witness, pos uint32, settled int, emit func(u, x int32, w int64)) int {
	outs := b.out[v]
	if len(outs) == 0 || len(b.in[v]) == 0 {
		return 0
	}
	count := 0
	for _, in := range b.in[v] {
		u := in.to
		ws.nextStamp()
		for _, o := range outs {
			if o.to != u {
				ws.addTarget(o.to, in.w+o.w)
			}
		}
		if len(ws.targets) == 0 {
			continue
		}
		ws.search(b, u, v, pos, settled)
		for _, o := range outs {
			if o.to != u && ws.dist(o.to) > in.w+o.w {
				count++
				if emit != nil {
					emit(u, o.to, in.w+o.w)
				}
			}
		}
		ws.reset()
	}
	return count
}

// addArc adds the shortcut u→x of weight w bypassing v, or lowers the
// weight of an arc u→x already there.
func (b *builder) addArc(u, x int32, w int64, v int32) {
	b.added++
	for i := range b.out[u] {
		if a := &b.out[u][i]; a.to == x {
			if w < a.w {
				a.w, a.mid = w, v
				for j := range b.in[x] {
					if c := &b.in[x][j]; c.to == u {
						c.w, c.mid = w, v
					}
				}
			}
			return
		}
	}
	b.out[u] = append(b.out[u], arc{to: x, mid: v, w: w})
	b.in[x] = append(b.in[x], arc{to: u, mid: v, w: w})
	b.arcs++
}

// removeArc removes the arc to v from list (order is not kept).
func removeArc(list []arc, v int32) []arc {
	for i := range list {
		if list[i].to == v {
			list[i] = list[len(list)-1]
			return list[:len(list)-1]
		}
	}
	return list
}

// parallelChunks calls work(worker, lo, hi) over [0, count) in chunks on
// the builder's workers. Chunks are of 64 items, fewer where that would
// leave workers idle: the last rounds contract a few dense vertices each,
// whose witness searches cost the most, and ran on one core when a round
// of 64 or fewer went whole to the caller (a quarter of the build's wall
// on 16 cores).
func (b *builder) parallelChunks(count int, work func(worker, lo, hi int)) {
	chunk := min(64, max(count/(4*b.workers), 1))
	if b.workers == 1 || count <= 1 {
		if count > 0 {
			work(0, 0, count)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(b.workers, (count+chunk-1)/chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= count {
					return
				}
				work(w, lo, min(lo+chunk, count))
			}
		}()
	}
	wg.Wait()
}
