package cpu

import (
	"context"
	"sort"

	"github.com/pathctl/pathctl/graph"
)

// workspace holds one worker's buffers, reused from source to source (and
// from block to block through the runner's pool): each kernel takes what it
// needs. Flag slices are all zero between sources.
type workspace[D graph.Number] struct {
	r   *runner[D]
	ctx context.Context
	par int // helper goroutines per source

	predist      []D
	flags, inReq []uint32
	front, next  []graph.VertexID
	touched, req []graph.VertexID
	locals       [][]graph.VertexID // one output list per helper
	parts        []graph.VertexID   // arc-balanced vertex ranges, par+1 bounds
	changed      []bool             // per helper
	packed       []uint64           // bfs: (hops, predecessor) pairs
	buckets      [][]graph.VertexID // delta and dial: cyclic buckets
	spare        []graph.VertexID
	heap         []heapEntry[D]
	pos          []int32
	seen         []bool
	bits         []uint64 // dial: the non-empty buckets
	full         []D      // a full row, gathered into some targets' columns
	fullPred     []graph.VertexID
	near         *nearSearch[D] // the k-nearest searches' (knearest.go)
}

func (r *runner[D]) workspace(ctx context.Context, par int) *workspace[D] {
	ws, _ := r.pool.Get().(*workspace[D])
	if ws == nil {
		ws = &workspace[D]{r: r}
	}
	ws.ctx, ws.par = ctx, par
	if len(ws.locals) < par {
		ws.locals = make([][]graph.VertexID, par)
		ws.changed = make([]bool, par)
	}
	return ws
}

// popsPerCheck is how many queue pops a serial search (the auto kernels of
// auto.go) makes between two looks at its context: 1–2 ms of work at average
// degree 16 (cpu's BenchmarkAPSP auto rows: a source of 4,096 pops takes
// about 0.4 ms on one core), so that Ctrl-C stops a single large source at
// once, while the check costs a decrement per pop (BFS tests its queue
// index instead). The round-based kernels look once per round.
const popsPerCheck = 1 << 14

// ctxPoll looks at a search's context every popsPerCheck pops.
type ctxPoll struct {
	ctx  context.Context
	left int
}

func newCtxPoll(ctx context.Context) ctxPoll { return ctxPoll{ctx: ctx, left: popsPerCheck} }

// err counts one pop and, every popsPerCheck of them, returns the
// context's error (nil while the search may go on).
func (p *ctxPoll) err() error {
	if p.left--; p.left > 0 {
		return nil
	}
	p.left = popsPerCheck
	return p.ctx.Err()
}

func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

func fill[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// relaxClass selects the arcs a relaxation pass visits.
type relaxClass uint8

const (
	allArcs   relaxClass = iota
	lightArcs            // w <= Δ
	heavyArcs            // w > Δ
)

// relaxToPredist is the relax half of the seeds' dijkstra and delta rounds:
// for every u of front and every arc (u, v, w) of the class, it lowers
// predist[v] to dist[u] + w with atomicMin; the targets it lowers are
// returned once each (claimed through ws.flags, which the caller clears).
// dist is read-only meanwhile.
func (ws *workspace[D]) relaxToPredist(front []graph.VertexID, dist, predist []D, class relaxClass, delta D) []graph.VertexID {
	r := ws.r
	inf := graph.Infinity[D]()
	forChunks(ws.par, len(front), func(h, lo, hi int) {
		local := ws.locals[h][:0]
		for _, u := range front[lo:hi] {
			du := dist[u]
			for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
				w := r.weights[k]
				if class == lightArcs && w > delta || class == heavyArcs && w <= delta {
					continue
				}
				v := r.targets[k]
				nd := addPositive(du, w, inf)
				if nd > r.cut {
					continue // past the cutoff: never relaxed (Request.Cutoff)
				}
				if atomicMin(&predist[v], nd) && claim(&ws.flags[v]) {
					local = append(local, v)
				}
			}
		}
		ws.locals[h] = local
	})
	return ws.gather(&ws.touched)
}

// gather concatenates the helpers' lists into *into.
func (ws *workspace[D]) gather(into *[]graph.VertexID) []graph.VertexID {
	out := (*into)[:0]
	for h := range ws.par {
		out = append(out, ws.locals[h]...)
		ws.locals[h] = ws.locals[h][:0]
	}
	*into = out
	return out
}

// arcParts splits the vertices into ws.par ranges of about equal arc
// counts, for the edge-parallel kernel.
func (ws *workspace[D]) arcParts() []graph.VertexID {
	r := ws.r
	parts := grow(&ws.parts, ws.par+1)
	m := r.offsets[r.n]
	parts[0] = 0
	for h := 1; h < ws.par; h++ {
		target := m * int64(h) / int64(ws.par)
		parts[h] = graph.VertexID(sort.Search(r.n, func(u int) bool { return r.offsets[u] >= target }))
		parts[h] = max(parts[h], parts[h-1])
	}
	parts[ws.par] = graph.VertexID(r.n)
	return parts
}

// tightTree derives predecessors from converged distances: a breadth-first
// walk from src over tight arcs (dist[u] + w == dist[v] in D's arithmetic),
// each vertex taking the first tight arc that reaches it. The result is a
// shortest-path tree rooted at src: no cycle, even through zero-weight
// cycles, because every vertex is entered once from one already in the
// tree. Ties go to the vertex discovered first. With exact arithmetic every
// reachable vertex is entered (arcs of a shortest path are tight); with
// non-negative float weights too (the tree Dijkstra builds is made of tight
// arcs). Should rounding around negative float weights leave one out, it
// takes any tight arc into it.
func (ws *workspace[D]) tightTree(src graph.VertexID, dist []D, pred []graph.VertexID) {
	r := ws.r
	inf, lowest := graph.Infinity[D](), lowestOf[D]()
	seen := grow(&ws.seen, r.n)
	fill(seen, false)
	fill(pred, -1)
	queue := append(ws.spare[:0], src)
	seen[src] = true
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		du := dist[u]
		for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
			v := r.targets[k]
			if !seen[v] && addSigned(du, r.weights[k], inf, lowest) == dist[v] {
				seen[v], pred[v] = true, u
				queue = append(queue, v)
			}
		}
	}
	ws.spare = queue[:0]
	if len(queue) == r.n {
		return
	}
	for u := 0; u < r.n; u++ {
		if dist[u] == inf {
			continue
		}
		for k := r.offsets[u]; k < r.offsets[u+1]; k++ {
			v := r.targets[k]
			if !seen[v] && dist[v] != inf && addSigned(dist[u], r.weights[k], inf, lowest) == dist[v] {
				seen[v], pred[v] = true, graph.VertexID(u)
			}
		}
	}
}
