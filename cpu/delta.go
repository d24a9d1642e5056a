package cpu

// Algorithm: "delta" — seed 001: delta-stepping (Meyer and Sanders) on the
// dist/predist rounds of seed 000. Vertices wait in buckets of width Δ by
// distance. The current bucket is emptied by rounds that relax only its
// light arcs (w <= Δ) into predist with atomicMin, folding improvements
// back into buckets (possibly the current one again); the vertices settled
// in the bucket (the seed's Req) then relax their heavy arcs (w > Δ) once,
// and the walk moves to the next non-empty bucket.
//
// Choices:
//   - Δ is req.Delta when given (rounded down to at least 1 for integer
//     distances); otherwise max weight / average out-degree, so that a vertex
//     has about one light arc on uniform weights: few light re-relaxations
//     per bucket, while the number of buckets stays near the weighted
//     diameter over Δ (Meyer and Sanders' choice of Δ = Θ(1/d) for weights
//     in [0, 1]). All-zero weights take Δ = 1.
//   - Buckets are cyclic: every live distance lies within max weight of the
//     current bucket, so max weight / Δ + 3 slots suffice (one of slack for
//     float rounding at bucket edges). Δ is raised if that would exceed
//     1<<16 slots. Entries are removed lazily: a vertex whose distance moved
//     to another bucket is skipped when its old slot comes round.
//   - Zero weights are light and keep a vertex in the current bucket, which
//     the light rounds repeat until empty.
//   - Sources spread over workers; a bucket's light rounds split over
//     helpers on large graphs when a block has fewer sources than threads.
//   - Predecessors come from tight arcs after convergence (tightTree).

import (
	"fmt"
	"math"

	"github.com/pathctl/pathctl/graph"
)

const maxDeltaBuckets = 1 << 16

// setDelta picks Δ and the number of cyclic buckets.
func (r *runner[D]) setDelta(asked float64) error {
	if asked < 0 || math.IsNaN(asked) || math.IsInf(asked, 0) {
		return fmt.Errorf("cpu: delta %v must be a positive number", asked)
	}
	isFloat := graph.TypeOf[D]().IsFloat()
	maxW := float64(r.maxW)
	delta := asked
	if delta == 0 {
		avgDegree := max(1, float64(len(r.targets))/float64(max(1, r.n)))
		delta = maxW / avgDegree
	}
	if delta == 0 {
		delta = 1
	}
	if !isFloat {
		delta = max(1, math.Floor(delta))
	}
	if maxW/delta+3 > maxDeltaBuckets {
		delta = maxW / (maxDeltaBuckets - 4)
		if !isFloat {
			delta = math.Ceil(delta)
		}
	}
	r.delta = D(delta)
	r.deltaBucket = int64(maxW/delta) + 3
	return nil
}

// bucketOf is floor(d / Δ), clamped far below int64 overflow.
func bucketOf[D graph.Number](d, delta D) int64 {
	if graph.TypeOf[D]().IsFloat() {
		q := math.Floor(float64(d) / float64(delta))
		return int64(min(q, 1<<60))
	}
	return int64(d) / int64(delta)
}

func solveDelta[D graph.Number](ws *workspace[D], src graph.VertexID, dist []D, pred []graph.VertexID) error {
	r := ws.r
	inf := graph.Infinity[D]()
	delta, nb := r.delta, r.deltaBucket
	predist := grow(&ws.predist, r.n)
	flags := grow(&ws.flags, r.n)
	inReq := grow(&ws.inReq, r.n)
	buckets := grow(&ws.buckets, int(nb))
	for i := range buckets {
		buckets[i] = buckets[i][:0]
	}
	fill(dist, inf)
	fill(predist, inf)
	dist[src], predist[src] = 0, 0
	buckets[0] = append(buckets[0], src)
	pending := 1 // entries in all buckets, stale ones included
	var cur int64
	// place files every vertex lowered by a fold into its bucket (never
	// one before the current, whatever float rounding says).
	place := func(touched []graph.VertexID) {
		for _, v := range touched {
			flags[v] = 0
			if predist[v] < dist[v] {
				dist[v] = predist[v]
				b := max(bucketOf(dist[v], delta), cur)
				buckets[b%nb] = append(buckets[b%nb], v)
				pending++
			}
		}
	}
	for pending > 0 {
		slot := cur % nb
		if len(buckets[slot]) == 0 {
			cur++
			continue
		}
		req := ws.req[:0]
		for len(buckets[slot]) > 0 {
			if err := ws.ctx.Err(); err != nil {
				return err
			}
			// Take the bucket's live entries, once each, as the frontier.
			entries := buckets[slot]
			buckets[slot] = ws.spare[:0]
			pending -= len(entries)
			front := ws.front[:0]
			for _, v := range entries {
				if bucketOf(dist[v], delta) <= cur && flags[v] == 0 {
					flags[v] = 1
					front = append(front, v)
					if inReq[v] == 0 {
						inReq[v] = 1
						req = append(req, v)
					}
				}
			}
			for _, v := range front {
				flags[v] = 0
			}
			ws.spare, ws.front = entries[:0], front
			place(ws.relaxToPredist(front, dist, predist, lightArcs, delta))
		}
		place(ws.relaxToPredist(req, dist, predist, heavyArcs, delta))
		for _, v := range req {
			inReq[v] = 0
		}
		ws.req = req
		if len(buckets[slot]) == 0 {
			cur++
		}
	}
	if pred != nil {
		ws.tightTree(src, dist, pred)
	}
	return nil
}
