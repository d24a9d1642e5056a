package plan

// A cutoff in the kernel (issue 17, `--cutoff D`): the rounds relax no arc
// past D, so a source's search covers only its ball of radius D. Three
// things of the plan then change.
//
//   - Arcs (Graph.ArcsByWeight): the cutoff rounds walk a copy of the arcs
//     with every vertex's in rising weight, so that an expansion stops at
//     the first arc that leads past D instead of reading every arc of a
//     hub whose distance is near D (kernels/batched.cu, batchedRound).
//   - Rounds (RoundsWithin): with integer weights of at least wmin > 0,
//     a shortest path within D has at most ⌊D / wmin⌋ arcs, and round h of
//     the kernel leaves every vertex whose shortest path has h arcs final
//     (a vertex made final in a round is in the next round's frontier).
//     The round after the last change changes nothing, so ⌊D / wmin⌋ + 1
//     rounds always converge: the host launches that many before it first
//     reads the last-change word, rather than reading after 4, 8, 16 ...
//     (gpu/batched.go, runPhase).
//   - Reductions (Graph.StartWithin): the minimums and the phases trade
//     dense passes over rows of n distances for kernel work. A row derived
//     by a minimum reads one row per arc of its source, a later phase's
//     seeds one row per arc into earlier phases, where a kernel source
//     costs a fill and a transpose of its row (three passes) and its
//     search. Under a cutoff whose ball is a small share of the graph the
//     search costs little, and the derivations cost more than they save:
//     a graph whose sampled sources mostly reach fewer than
//     Config.CutoffReach of its vertices within the cutoff plans without
//     minimums and in one phase. Leaves stay: a leaf's row reads its
//     parent's row once and writes its own, two passes.
//
// Not measured on a GPU yet: the share is a guess to be checked with
// BenchmarkBatchedSuite's cutoff variants (package gpu).

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

// RoundsWithin is the number of rounds after which the batched kernel has
// converged on g when it relaxes nothing past cut and expands every vertex
// as soon as it changes (no round threshold): ⌊cut / g.MinWeight⌋ + 1 for
// integer weights of at least 1, or 0 (unknown) for float weights (their
// rounded sums are not bounded by a count of arcs), zero weights, an
// infinite cutoff, or more rounds than an int holds.
func RoundsWithin(g *graph.CSR, cut float64) int {
	if g.Type.IsFloat() || !(g.MinWeight >= 1) || !(cut >= 0) || math.IsInf(cut, 1) {
		return 0
	}
	hops := math.Floor(cut / g.MinWeight)
	if hops >= math.MaxInt32 {
		return 0
	}
	return int(hops) + 1
}

// reachSamples is the number of vertices, spread evenly over the vertex
// order, whose balls Graph.smallBall measures.
const reachSamples = 16

// smallBall reports whether most of reachSamples sources reach fewer than
// share of g's vertices within cut: a bounded Dijkstra from each, stopped
// as soon as it settles that many, on a core each. The answer is kept per
// cutoff and share.
func (pg *Graph) smallBall(cut, share float64) bool {
	key := [2]float64{cut, share}
	pg.ballMu.Lock()
	defer pg.ballMu.Unlock()
	if small, ok := pg.balls[key]; ok {
		return small
	}
	g := pg.g
	n := g.NumVertices
	limit := max(1, int(math.Ceil(share*float64(n))))
	samples := min(reachSamples, n)
	under := make([]bool, samples)
	var wg sync.WaitGroup
	for i := range samples {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := int32(int64(i) * int64(n) / int64(samples))
			under[i] = ballSize(g, s, cut, limit) < limit
		}()
	}
	wg.Wait()
	small := 2*countTrue(under) > samples
	if pg.balls == nil {
		pg.balls = map[[2]float64]bool{}
	}
	pg.balls[key] = small
	return small
}

func countTrue(b []bool) int {
	c := 0
	for _, x := range b {
		if x {
			c++
		}
	}
	return c
}

// ballArcs bounds the arcs ballSize reads per vertex of its limit: a
// search past it (hubs) counts as a large ball.
const ballArcs = 64

// ballSize is the number of vertices within cut of s (s included), or
// limit once it reaches limit or has read ballArcs·limit arcs: Dijkstra
// over a binary heap with lazy deletion, its labels in a map (the ball is
// small where it matters).
func ballSize(g *graph.CSR, s int32, cut float64, limit int) int {
	dist := map[int32]float64{s: 0}
	settled := map[int32]bool{}
	heap := []ballItem{{0, s}}
	arcs := int64(0)
	for len(heap) > 0 && len(settled) < limit {
		if arcs > ballArcs*int64(limit) {
			return limit
		}
		it := heap[0]
		heap = popBall(heap)
		if settled[it.v] || it.d > dist[it.v] {
			continue
		}
		settled[it.v] = true
		arcs += g.Offsets[it.v+1] - g.Offsets[it.v]
		for e := g.Offsets[it.v]; e < g.Offsets[it.v+1]; e++ {
			v := g.Targets[e]
			d := it.d + g.WeightAt(e)
			if d > cut || settled[v] {
				continue
			}
			if old, ok := dist[v]; ok && old <= d {
				continue
			}
			dist[v] = d
			heap = pushBall(heap, ballItem{d, v})
		}
	}
	return len(settled)
}

// ballItem is an entry of ballSize's heap: a label and its vertex.
type ballItem struct {
	d float64
	v int32
}

func pushBall(h []ballItem, it ballItem) []ballItem {
	h = append(h, it)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].d <= h[i].d {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popBall(h []ballItem) []ballItem {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].d < h[m].d {
			m = l
		}
		if r < len(h) && h[r].d < h[m].d {
			m = r
		}
		if m == i {
			return h
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// withinCutoff is cfg for a block under a cutoff of cut in the kernel
// (+Inf: none): without minimums and phases where the graph's balls of
// radius cut are small (smallBall, Config.CutoffReach), else cfg.
func (pg *Graph) withinCutoff(cfg Config, cut float64) Config {
	if math.IsInf(cut, 1) || cfg.CutoffReach <= 0 || (!cfg.Mins && cfg.Seeds == 0) {
		return cfg
	}
	if pg.smallBall(cut, cfg.CutoffReach) {
		cfg.Mins, cfg.Seeds = false, 0
	}
	return cfg
}

// ArcsByWeight is the graph's arcs with every vertex's in rising weight
// (ties by target), as the batched kernel's cutoff rounds walk them
// (kernels/batched.cu, batchedRound): targets, and weights of the CSR's
// weight type. Offsets are the CSR's. Sorted once, rows chunked over every
// core, and kept.
func (pg *Graph) ArcsByWeight() ([]int32, any) {
	pg.byWeightOnce.Do(func() {
		switch w := pg.g.Weights.(type) {
		case []int32:
			pg.byWeightTargets, pg.byWeight = sortRowsByWeight(pg.g, w)
		case []int64:
			pg.byWeightTargets, pg.byWeight = sortRowsByWeight(pg.g, w)
		case []float32:
			pg.byWeightTargets, pg.byWeight = sortRowsByWeight(pg.g, w)
		case []float64:
			pg.byWeightTargets, pg.byWeight = sortRowsByWeight(pg.g, w)
		}
	})
	return pg.byWeightTargets, pg.byWeight
}

// sortRowsByWeight copies g's arcs with each row sorted by (weight,
// target), rows in chunks of at least 1024 on every core.
func sortRowsByWeight[D graph.Number](g *graph.CSR, weights []D) ([]int32, []D) {
	m := len(g.Targets)
	targets, out := make([]int32, m), make([]D, m)
	type arc struct {
		w D
		t int32
	}
	n := g.NumVertices
	workers := runtime.GOMAXPROCS(0)
	per := max(1024, (n+workers-1)/workers)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var row []arc
			for u := lo; u < hi; u++ {
				a, b := g.Offsets[u], g.Offsets[u+1]
				row = row[:0]
				for e := a; e < b; e++ {
					row = append(row, arc{weights[e], g.Targets[e]})
				}
				slices.SortFunc(row, func(x, y arc) int {
					if c := cmp.Compare(x.w, y.w); c != 0 {
						return c
					}
					return cmp.Compare(x.t, y.t)
				})
				for i, x := range row {
					out[a+int64(i)], targets[a+int64(i)] = x.w, x.t
				}
			}
		}()
	}
	wg.Wait()
	return targets, out
}
