package gpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/pathctl/pathctl/graph"
)

// Batched is the engine's own kernel for non-negative weights: multi-source
// label correcting over groups of BatchWidth sources, kernels/batched.cu.
// It is not one of the user-facing algorithm names (graph.ParseAlgorithm
// refuses it): package pipeline asks for it when it resolves auto, and
// Prepare accepts it like the seed algorithms. Negative weights are refused
// as for dijkstra; predecessors come from kernels/predecessors.cu.
const Batched graph.Algorithm = "batched"

// BatchWidth is the number of sources one warp relaxes together: a group of
// sources shares its frontier bitmasks, one 32-bit word per vertex.
const BatchWidth = 32

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
// cur and next mask words and the cur and next summaries of every group.
func batchedFrontierBytes(n, k int) int64 {
	groups := int64((k + BatchWidth - 1) / BatchWidth)
	return batchedHeader + 4*groups*(2*int64(n)+2*batchedSummaryWords(n))
}

// batchedHeader is the bytes of the frontier storage before the masks.
const batchedHeader = 8

func batchedSummaryWords(n int) int64 { return int64((n + 1023) >> 10) }

const (
	// batchedBlocksPerSM is the thread blocks of a round per multiprocessor:
	// 8 of 256 threads fill the 2048 threads of an SM of sm_70 .. sm_90; the
	// warps stride over the chunks.
	batchedBlocksPerSM = 8
	// batchedTransposeGrid caps the thread blocks of the transpose and the
	// fill; they stride over their work.
	batchedTransposeGrid = 1 << 16
	// batchedMaxRounds is the most rounds launched between two reads of the
	// last-change word; the first read comes after batchedFirstRounds.
	batchedFirstRounds = 4
	batchedMaxRounds   = 64
)

// launchBatched runs the batched kernel for the k sources in r.sources:
// plan the kernel's sources (batchedPlanFor: leaves left out, groups
// clustered), fill the working distances with infinity and clear the
// masks, seed the sources, launch rounds back to back until one changes
// nothing, transpose into the rows of r.dist, and derive the rows of the
// leaves. Launches are asynchronous; the device time of the whole sequence
// is left in dv.lastKernel for Runner.launch.
func launchBatched(r *Runner, k int) (err error) {
	dv := r.e.dev
	n := r.n
	if len(r.blockSources) != k {
		return fmt.Errorf("gpu: batched launch of %d sources with %d on the host", k, len(r.blockSources))
	}
	began := time.Now()
	plan, finish := batchedPlanStart(r, r.blockSources)
	kk := len(plan.sources)
	run := batchedRun{}
	prev := 0
	for _, c := range append(slices.Clone(plan.cuts), kk) {
		run.phases = append(run.phases, c-prev)
		prev = c
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
	need := make([]int64, len(run.phases))
	where := make([]devBuf, len(run.phases))
	where[0] = r.dist
	for i := 1; i < len(run.phases); i++ {
		at := (int64(run.phases[i])*int64(n)*int64(r.distType.Size()) + 255) &^ 255
		if at < r.aux.size {
			where[i] = devBuf{ptr: r.aux.ptr + uint64(at), size: r.aux.size - at}
		}
	}
	tempAt := int64(0)
	for i, c := range run.phases {
		need[i] = batchedFrontierBytes(n, c)
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
	run.frontiers = make([]uint64, len(run.phases))
	for i := range run.phases {
		run.frontiers[i] = where[i].ptr
		if where[i].size < need[i] {
			run.frontiers[i] = temp.ptr
		}
	}
	run.sources, run.rows = make([]uint64, len(run.phases)), make([]uint64, len(run.phases))
	for i := range run.phases {
		run.sources[i] = r.sources.ptr + uint64(4*plan.phaseStart(i))
	}
	// upload sends a packed part of the plan (packPlan) and points run at
	// it.
	upload := func(p packedPlan) error {
		buf, err := dv.upload(asBytes(p.words))
		if err != nil {
			return err
		}
		bufs = append(bufs, buf)
		word := func(w int) uint64 { return buf.ptr + uint64(8*w) }
		base := plan.phaseStart(p.from)
		for i := p.from; i < p.to; i++ {
			run.sources[i] = word(0) + uint64(4*(plan.phaseStart(i)-base))
			run.rows[i] = word(p.rows) + uint64(4*(plan.phaseStart(i)-base))
		}
		if p.rest {
			run.seeds, run.arcs = word(p.seeds), word(p.arcs)
			run.after = derivations{leaves: word(p.derive), passes: plan.passes, mins: word(p.mins), minCount: len(plan.mins)}
		}
		return nil
	}
	switch {
	case plan.rows == nil:
	case finish == nil:
		err = upload(packPlan(plan, 0, len(run.phases), true))
	default:
		// The first phase's sources and rows now; the rest of the plan is
		// finished, packed and uploaded while the first phase runs.
		if err = upload(packPlan(plan, 0, 1, false)); err != nil {
			break
		}
		done := make(chan packedPlan, 1)
		go func() {
			finish()
			done <- packPlan(plan, 1, len(run.phases), true)
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

// batchedRun is where a block's plan lies on the device: the kernel's
// sources and their rows (int32 arrays; rows 0 for the block's own order),
// the phases' source counts and frontier storage, the later phases' seeds
// (4 words per source, in phase order) and the arcs (2 words each) of seeds
// and minimums, and the derivations after the kernel.
type batchedRun struct {
	phases        []int
	sources, rows []uint64 // per phase; rows 0 for the block's own order
	frontiers     []uint64
	seeds, arcs   uint64
	after         derivations
	// later, when set, completes the plan on the device (its later
	// phases' sources, rows and seeds, the derivations) before the second
	// phase.
	later func() error
}

// phaseStart is where phase i's sources start in plan.sources (i may be
// the number of phases: the end).
func (plan *kernelSources) phaseStart(i int) int {
	switch {
	case i == 0:
		return 0
	case i <= len(plan.cuts):
		return plan.cuts[i-1]
	}
	return len(plan.sources)
}

// packedPlan is a part of a plan packed into words for one upload: the
// sources, then the rows, of phases [from, to), and with rest the
// derivations, the minimums, the seeds and the arcs, at the word offsets
// given.
type packedPlan struct {
	words                           []int64
	from, to                        int
	rest                            bool
	rows, derive, mins, seeds, arcs int
}

// packPlan packs the sources and rows of phases [from, to) of plan and,
// with rest, its derivations, minimums, seeds and arcs.
func packPlan(plan *kernelSources, from, to int, rest bool) packedPlan {
	lo, hi := plan.phaseStart(from), plan.phaseStart(to)
	size := hi - lo + 2
	if rest {
		size += 4*len(plan.derive) + 4*len(plan.mins) + 4*len(plan.seeds) + 2*len(plan.minArcs)
	}
	p := packedPlan{from: from, to: to, rest: rest}
	p.words = packInt32s(make([]int64, 0, size), plan.sources[lo:hi])
	p.rows = len(p.words)
	p.words = packInt32s(p.words, plan.rows[lo:hi])
	if !rest {
		return p
	}
	p.derive = len(p.words)
	for _, d := range plan.derive {
		p.words = append(p.words, int64(d.dst), int64(d.src), int64(d.leaf), d.arc)
	}
	p.mins = len(p.words)
	for _, d := range plan.mins {
		p.words = append(p.words, int64(d.dst), int64(d.source), int64(d.first), int64(d.count))
	}
	p.seeds = len(p.words)
	for _, d := range plan.seeds {
		p.words = append(p.words, int64(d.dst), int64(d.source), int64(d.first), int64(d.count))
	}
	p.arcs = len(p.words)
	for _, a := range plan.minArcs {
		p.words = append(p.words, int64(a.row), a.arc)
	}
	return p
}

// packInt32s appends v to words two to a word, as a device array of int32
// reads them (the low half first); an odd last value takes a whole word.
func packInt32s(words []int64, v []int32) []int64 {
	for i := 0; i < len(v); i += 2 {
		w := int64(uint32(v[i]))
		if i+1 < len(v) {
			w |= int64(uint32(v[i+1])) << 32
		}
		words = append(words, w)
	}
	return words
}

// batchedOrder is how a block's sources are grouped before the kernel runs
// (rows are written back in the block's order): "cluster" gathers each
// group of BatchWidth sources from a breadth-first search around a seed,
// so that the group's sources are close in the graph, share most of their
// shortest-path trees, change in the same rounds and let a warp's walk of
// an arc serve more lanes; "bfs" sorts them by breadth-first rank from the
// vertex of highest degree; "" keeps the block's order.
var batchedOrder = "cluster"

// batchedLeaves lets the kernel leave out the leaves of undirected graphs
// (vertices with one neighbour p, itself of degree 2 or more): every path
// from a leaf l starts with its arc (l, p, w), so d(l, t) = w + d(p, t) for
// t ≠ l, and its row is derived from p's after the kernel
// (batched_derive_*). On R-MAT graphs a fifth of the vertices are leaves
// (H100, R-MAT 16, every source: 1,019 ms of kernels without, 847 with).
// Integer distances only: a float sum w + d(p, t) rounds differently from
// the path's own left-to-right sum, and results must equal the oracles'.
var batchedLeaves = true

// batchedMins lets the kernel leave out integer-weighted sources s every
// one of whose arcs (s, p, w) reaches a source p of the same block that the
// kernel computes: with non-negative weights every path from s leaves
// through one of them, so d(s, t) = min over the arcs of w + d(p, t) for
// t ≠ s, and batched_mins_* fills s's row from its neighbours' rows after
// the kernel. The sources left out form an independent set (none reaches
// another), chosen greedily by rising out-degree, at most batchedMinsDegree
// arcs each: the minimum reads that many rows of n distances, which costs
// far less than a source of the kernel (H100, one block of every source:
// R-MAT 16 leaves 43 % of its non-leaf vertices out, the 256×256 grid
// half). A block only gains where it holds the neighbours too: the stats
// layout's block of every source, or large blocks.
var batchedMins = true

// batchedMinsDegree bounds the out-degree of a source left out by
// batchedMins.
const batchedMinsDegree = 64

// kernelSources is what the batched kernel runs for a block: sources[i] computed
// into block row rows[i] (nil rows: the block's own order and sources),
// then the derivations, the first passes[0] of them before the rest
// (derivations in place, of rows that lent their place to a parent, go
// last, after every leaf that reads that parent), and the minimum
// derivations of batchedMins (mins, reading minArcs), which only read rows
// the kernel computed.
type kernelSources struct {
	sources, rows []int32
	derive        []derivation
	passes        [2]int
	mins          []minDerivation
	minArcs       []minArc
	// cuts, when not empty, runs the kernel in phases: sources[:cuts[0]],
	// then sources[cuts[0]:cuts[1]] and so on to the end, each later
	// source started from the rows of the phases before its own
	// (batchedSeeds) through seeds[i], the arcs of sources[cuts[0]+i] in
	// minArcs.
	cuts  []int
	seeds []minDerivation
}

// minDerivation makes block row dst the row of source from the rows of its
// arcs' heads: minArcs[first : first+count].
type minDerivation struct {
	dst, source int32
	first       int32
	count       int32
}

// minArc is an arc of a source left out by batchedMins: the block row of
// its head and the index of its weight.
type minArc struct {
	row int32
	arc int64
}

// derivation makes block row dst the row of leaf from the row src of its
// parent, through the leaf's arc.
type derivation struct {
	dst, src, leaf int32
	arc            int64
}

// batchedPlanFor plans the block src (the block's sources in row order).
func batchedPlanFor(r *Runner, src []int32) kernelSources {
	plan, finish := batchedPlanStart(r, src)
	if finish != nil {
		finish()
	}
	return *plan
}

// batchedPlanStart plans the block src as far as its first phase needs:
// with several phases, the sources of the later ones are not yet ordered
// and have no seeds, and finish completes the plan. finish touches only
// the later phases' part of the plan's sources and rows (in place), its
// seeds and the arcs after the minimums', so that the first phase may run
// (and its part be read) meanwhile; the host's plan then overlaps the
// first phase's kernels. finish is nil when the plan is complete.
func batchedPlanStart(r *Runner, src []int32) (*kernelSources, func()) {
	k := len(src)
	g := r.g
	plan := kernelSources{sources: src}
	var later []derivation
	if batchedLeaves && g.Undirected && !g.Type.IsFloat() && k > 1 {
		row := make([]int32, g.NumVertices) // 1 + the block row of a source vertex
		for i, s := range src {
			row[s] = int32(i) + 1
		}
		host := make([]int32, g.NumVertices) // 1 + the row computing a parent outside the block
		kernel := make([]int32, 0, k)
		kernelRows := make([]int32, 0, k)
		for i, s := range src {
			p, arc, ok := leafParent(g, s)
			if !ok {
				kernel = append(kernel, s)
				kernelRows = append(kernelRows, int32(i))
				continue
			}
			if pr := row[p]; pr != 0 {
				plan.derive = append(plan.derive, derivation{int32(i), pr - 1, s, arc})
			} else if hr := host[p]; hr != 0 {
				plan.derive = append(plan.derive, derivation{int32(i), hr - 1, s, arc})
			} else {
				host[p] = int32(i) + 1
				kernel = append(kernel, p)
				kernelRows = append(kernelRows, int32(i))
				later = append(later, derivation{int32(i), int32(i), s, arc})
			}
		}
		if len(plan.derive)+len(later) > 0 {
			plan.sources, plan.rows = kernel, kernelRows
			plan.passes = [2]int{len(plan.derive), len(later)}
			plan.derive = append(plan.derive, later...)
		}
	}
	if batchedMins && !g.Type.IsFloat() && k > 1 {
		planMins(g, src, &plan)
	}
	if plan.rows == nil && (batchedOrder == "" || len(plan.sources) <= BatchWidth) {
		return &plan, nil
	}
	shape, rank := r.batchedGraph()
	var cuts []int
	if batchedSeeds > 0 && !g.Type.IsFloat() && (!shape.meshLike || batchedSeedsMeshes) && len(plan.sources) >= batchedSeedsMin &&
		2*k >= g.NumVertices {
		cuts = splitSeeded(g, &plan)
	}
	rows := plan.rows
	if rows == nil {
		rows = make([]int32, len(plan.sources))
		for i := range rows {
			rows[i] = int32(i)
		}
	}
	// Ordered in place below: never in the caller's src.
	plan.sources, plan.rows = slices.Clone(plan.sources), slices.Clone(rows)
	plan.cuts = cuts
	// Each phase is ordered on its own, in place: the first now, the
	// others (on cores of their own) by finish.
	bounds := append(append([]int{0}, cuts...), len(plan.sources))
	order := func(i int) {
		lo, hi := bounds[i], bounds[i+1]
		s, r := orderSources(g, rank, plan.sources[lo:hi], plan.rows[lo:hi], !shape.meshLike)
		copy(plan.sources[lo:hi], s)
		copy(plan.rows[lo:hi], r)
	}
	order(0)
	if len(cuts) == 0 {
		return &plan, nil
	}
	return &plan, func() {
		var wg sync.WaitGroup
		for i := 1; i+1 < len(bounds); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order(i)
			}()
		}
		wg.Wait()
		planSeeds(g, &plan)
	}
}

// byRank returns the positions of ks in increasing rank of their vertex
// (rank is a permutation of the vertices), equal vertices in their order
// in ks: a counting sort, linear where a comparison sort of R-MAT 16's
// sources took a sixth of the host's plan.
func byRank(rank, ks []int32) []int32 {
	start := make([]int32, len(rank)+1) // first output position of each rank
	for _, v := range ks {
		start[rank[v]+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	idx := make([]int32, len(ks))
	for i, v := range ks {
		r := rank[v]
		idx[start[r]] = int32(i)
		start[r]++
	}
	return idx
}

// byDegree returns the positions of the vertices vs by out-degree,
// decreasing when desc, equal degrees in their order in vs: a counting
// sort, linear where comparison sorts took a fifth of the host's plan.
func byDegree(g *graph.CSR, vs []int32, desc bool) []int32 {
	key := func(v int32) int64 { return g.Offsets[v+1] - g.Offsets[v] }
	top := int64(0)
	for _, v := range vs {
		top = max(top, key(v))
	}
	if desc {
		key = func(v int32) int64 { return top - (g.Offsets[v+1] - g.Offsets[v]) }
	}
	start := make([]int32, top+2)
	for _, v := range vs {
		start[key(v)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	idx := make([]int32, len(vs))
	for i, v := range vs {
		k := key(v)
		idx[start[k]] = int32(i)
		start[k]++
	}
	return idx
}

// orderSources puts the kernel sources ks (computed into rows) in
// batchedOrder: sorted by breadth-first rank, then clustered, in chunks on
// every core when parallel.
func orderSources(g *graph.CSR, rank, ks, rows []int32, parallel bool) ([]int32, []int32) {
	if batchedOrder == "" || len(ks) <= BatchWidth {
		return slices.Clone(ks), slices.Clone(rows)
	}
	idx := byRank(rank, ks)
	if batchedOrder == "cluster" {
		idx = clusterSources(g, ks, idx, parallel)
	}
	sources, out := make([]int32, len(ks)), make([]int32, len(ks))
	for i, j := range idx {
		sources[i], out[i] = ks[j], rows[j]
	}
	return sources, out
}

// batchedSeeds is the share of a block's kernel sources, those of highest
// out-degree, that a first phase computes alone; each later phase
// (batchedPhases) starts every source s of its own from min over its arcs
// (s, p, w) into earlier phases of w + d(p, t) (batched_seedfill_*, whose
// comment speaks of the second phase), real path lengths, and expands only
// where a shorter path exists. On graphs with hubs most of a vertex's
// shortest paths leave through a hub (R-MAT 16, the top 5 % of vertices by
// degree computed: 8 % of the targets of a vertex next to one need
// correcting, the median none). Integer weights only, like batchedMins;
// not on graphs that look like meshes (no hubs), nor in blocks holding
// fewer than half the vertices, whose few hubs reach few of the other
// sources (R-MAT 20 in blocks of about 7,000 sources ran 13 % slower
// split); 0 turns it off.
var batchedSeeds = 0.15

// batchedPhases are the cumulative shares of the kernel sources that end
// the phases after the first on graphs of unit weights (the last phase
// takes the rest); empty runs two phases. batchedPhasesWeighted is the
// same for weighted graphs, whose hub rows seed the rest more loosely, so
// that a middle phase of the next-highest degrees tightens the last
// phase's seeds. H100, kernel ms of one block of every source, by phase
// ends (shares of the kernel sources):
//
//	                 0.15    0.4     0.15/0.4  0.2/0.5  0.1/0.3/0.6
//	R-MAT 16         316     299     278       279      282
//	email-Enron      46      50      50                 55
//	cond-mat-2005    76      71      65                 73
//	pgp-strong-2009  95      96      104                112
var (
	batchedPhases         []float64
	batchedPhasesWeighted = []float64{0.4}
)

// phaseShares are the cumulative shares of g's kernel sources that end
// every phase but the last.
func phaseShares(g *graph.CSR) []float64 {
	later := batchedPhases
	if g.Weighted {
		later = batchedPhasesWeighted
	}
	return append([]float64{batchedSeeds}, later...)
}

// batchedSeedsMeshes lets graphs that look like meshes run two phases too
// (tests and benchmarks).
var batchedSeedsMeshes = false

// batchedSeedsMin is the fewest kernel sources a block splits into two
// phases.
const batchedSeedsMin = 4 * BatchWidth

// splitSeeded reorders plan's kernel sources (and rows) by falling
// out-degree and returns the ends of every phase but the last
// (phaseShares).
func splitSeeded(g *graph.CSR, plan *kernelSources) []int {
	ks := plan.sources
	if plan.rows == nil {
		plan.rows = make([]int32, len(ks))
		for i := range plan.rows {
			plan.rows[i] = int32(i)
		}
	}
	idx := byDegree(g, ks, true)
	var cuts []int
	for _, share := range phaseShares(g) {
		c := min(len(ks), max(BatchWidth, int(share*float64(len(ks)))))
		if c >= len(ks) || (len(cuts) > 0 && c <= cuts[len(cuts)-1]) {
			break
		}
		cuts = append(cuts, c)
	}
	sources, rows := make([]int32, len(ks)), make([]int32, len(ks))
	for i, j := range idx {
		sources[i], rows[i] = ks[j], plan.rows[j]
	}
	plan.sources, plan.rows = sources, rows
	return cuts
}

// planSeeds lists, for every source after the first phase
// (plan.sources[plan.cuts[0]:]), its arcs into sources that earlier phases
// compute in their own row, as plan.seeds over plan.minArcs. Each phase's
// sources are cut into chunks listed on every core, then joined in order.
func planSeeds(g *graph.CSR, plan *kernelSources) {
	bounds := append(slices.Clone(plan.cuts), len(plan.sources))
	rowOf := make([]int32, g.NumVertices) // 1 + the row of a source of an earlier phase
	for i, s := range plan.sources[:bounds[0]] {
		rowOf[s] = plan.rows[i] + 1
	}
	type part struct {
		arcs  []minArc
		seeds []minDerivation // first counts from the part's own arcs
	}
	workers := runtime.GOMAXPROCS(0)
	for p := 1; p < len(bounds); p++ {
		lo, hi := bounds[p-1], bounds[p]
		per := max(256, (hi-lo+workers-1)/workers)
		parts := make([]part, (hi-lo+per-1)/per)
		var wg sync.WaitGroup
		for c := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pt := &parts[c]
				from := lo + c*per
				for i, s := range plan.sources[from:min(from+per, hi)] {
					first := int32(len(pt.arcs))
					for e := g.Offsets[s]; e < g.Offsets[s+1]; e++ {
						if row := rowOf[g.Targets[e]]; row != 0 {
							pt.arcs = append(pt.arcs, minArc{row - 1, int64(e)})
						}
					}
					pt.seeds = append(pt.seeds, minDerivation{plan.rows[from+i], s, first, int32(len(pt.arcs)) - first})
				}
			}()
		}
		wg.Wait()
		for _, pt := range parts {
			at := int32(len(plan.minArcs))
			plan.minArcs = append(plan.minArcs, pt.arcs...)
			for _, d := range pt.seeds {
				d.first += at
				plan.seeds = append(plan.seeds, d)
			}
		}
		for i, s := range plan.sources[lo:hi] {
			rowOf[s] = plan.rows[lo+i] + 1
		}
	}
}

// planMins moves the sources of plan that batchedMins can derive out of
// the kernel's list into plan.mins. src is the block in row order. Only
// sources the kernel computes in their own row can serve as heads: leaves
// and the parents computed in a leaf's row (outside the block) cannot, and
// the parents leaves read must stay in the kernel.
func planMins(g *graph.CSR, src []int32, plan *kernelSources) {
	const (
		free = iota
		kept // a derived source or a leaf reads its row
		left // derived by a minimum
	)
	n := g.NumVertices
	rowOf := make([]int32, n) // 1 + the row of a vertex the kernel computes in its own row
	dup := map[int32]bool{}
	kernelRows := plan.rows
	for i, s := range plan.sources {
		row := int32(i)
		if kernelRows != nil {
			row = kernelRows[i]
		}
		if src[row] == s {
			if rowOf[s] != 0 {
				dup[s] = true // a source twice in the block: its rows stay in the kernel
			}
			rowOf[s] = row + 1
		}
	}
	state := make([]uint8, n)
	for s := range dup {
		state[s] = kept
	}
	for _, d := range plan.derive {
		if d.dst != d.src {
			state[src[d.src]] = kept
		}
	}
	order := make([]int32, 0, len(plan.sources))
	for _, s := range plan.sources {
		if d := g.OutDegree(graph.VertexID(s)); d > 0 && d <= batchedMinsDegree && rowOf[s] != 0 {
			order = append(order, s)
		}
	}
	pos := byDegree(g, order, false)
	sorted := make([]int32, len(order))
	for i, j := range pos {
		sorted[i] = order[j]
	}
	order = sorted
	for _, s := range order {
		if state[s] != free {
			continue
		}
		lo, hi := g.Offsets[s], g.Offsets[s+1]
		ok := true
		for _, p := range g.Targets[lo:hi] {
			if rowOf[p] == 0 || state[p] == left {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		state[s] = left
		first := int32(len(plan.minArcs))
		for e := lo; e < hi; e++ {
			p := g.Targets[e]
			state[p] = kept
			plan.minArcs = append(plan.minArcs, minArc{rowOf[p] - 1, int64(e)})
		}
		plan.mins = append(plan.mins, minDerivation{rowOf[s] - 1, s, first, int32(hi - lo)})
	}
	if len(plan.mins) == 0 {
		return
	}
	var sources, rows []int32
	for i, s := range plan.sources {
		if state[s] == left && rowOf[s] != 0 {
			continue
		}
		sources = append(sources, s)
		if kernelRows != nil {
			rows = append(rows, kernelRows[i])
		} else {
			rows = append(rows, int32(i))
		}
	}
	plan.sources, plan.rows = sources, rows
}

// leafParent returns the one neighbour of s and the index of its arc when s
// is a leaf whose neighbour has other neighbours too.
func leafParent(g *graph.CSR, s int32) (int32, int64, bool) {
	lo, hi := g.Offsets[s], g.Offsets[s+1]
	if hi-lo != 1 {
		return 0, 0, false
	}
	p := g.Targets[lo]
	if p == s || g.Offsets[p+1]-g.Offsets[p] < 2 {
		return 0, 0, false
	}
	return p, int64(lo), true
}

// clusterMaxVisit bounds the vertices one cluster's search queues, and
// clusterMaxArcs the arcs it reads: late clusters, whose neighbourhoods are
// mostly taken, fall back to rank order instead of searching far.
const (
	clusterMaxVisit = 4096
	clusterMaxArcs  = 16384
)

// clusterChunk is the fewest rows clusterSources gives one core: the rows,
// in rank order, are cut into contiguous chunks of whole runs, clustered
// apart (R-MAT 16's 13,600 second-phase sources took 38 ms on one core of
// the development machine, most of the host's plan). Not on meshes, whose
// clusters suffer at the chunks' edges (H100, 256×256 grid: kernels 1,384
// ms clustered on one core, 1,472 ms in chunks; R-MAT 16 320 and 317 ms).
var clusterChunk = 32 * BatchWidth

// clusterSources groups the block rows idx (sources src[idx[i]], in
// breadth-first rank order) into runs of BatchWidth: each run starts at the
// first row not yet taken and continues with the untaken sources a
// breadth-first search from it meets first (within clusterMaxVisit
// vertices and clusterMaxArcs arcs), then with the next untaken rows in
// rank order. With parallel, each core clusters a contiguous chunk of idx
// on its own.
func clusterSources(g *graph.CSR, src, idx []int32, parallel bool) []int32 {
	chunks := min(runtime.GOMAXPROCS(0), len(idx)/clusterChunk)
	if chunks <= 1 || !parallel {
		return clusterRun(g, src, idx)
	}
	per := (len(idx)/chunks + BatchWidth - 1) / BatchWidth * BatchWidth
	parts := make([][]int32, 0, chunks)
	for lo := 0; lo < len(idx); lo += per {
		parts = append(parts, idx[lo:min(lo+per, len(idx))])
	}
	outs := make([][]int32, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = clusterRun(g, src, part)
		}()
	}
	wg.Wait()
	return slices.Concat(outs...)
}

// clusterRun is clusterSources over the rows idx on one core.
func clusterRun(g *graph.CSR, src, idx []int32) []int32 {
	n := g.NumVertices
	row := make([]int32, n) // 1 + the block row of each source vertex, 0 for others
	for _, i := range idx {
		row[src[i]] = i + 1
	}
	taken := make([]bool, len(src))
	seen := make([]int32, n) // the cluster number that last visited a vertex
	out := make([]int32, 0, len(idx))
	queue := make([]int32, 0, clusterMaxVisit)
	next := 0 // first position of idx that may be untaken
	for cluster := int32(1); len(out) < len(idx); cluster++ {
		for taken[idx[next]] {
			next++
		}
		start := len(out)
		queue = append(queue[:0], src[idx[next]])
		seen[src[idx[next]]] = cluster
		arcs := 0
		for h := 0; h < len(queue) && len(out)-start < BatchWidth; h++ {
			u := queue[h]
			if i := row[u] - 1; i >= 0 && !taken[i] {
				taken[i] = true
				out = append(out, i)
			}
			adj := g.Targets[g.Offsets[u]:g.Offsets[u+1]]
			if arcs += len(adj); arcs > clusterMaxArcs {
				continue // take what the queue holds, search no further
			}
			for _, v := range adj {
				if seen[v] != cluster && len(queue) < clusterMaxVisit {
					seen[v] = cluster
					queue = append(queue, int32(v))
				}
			}
		}
		for p := next; len(out)-start < BatchWidth && p < len(idx); p++ {
			if !taken[idx[p]] {
				taken[idx[p]] = true
				out = append(out, idx[p])
			}
		}
	}
	return out
}

// bfsRank numbers the vertices of g in breadth-first order over the out-arcs,
// from the vertex of highest out-degree first, then from the lowest
// unnumbered vertex until every vertex has a number.
func bfsRank(g *graph.CSR) []int32 {
	n := g.NumVertices
	rank := make([]int32, n)
	for i := range rank {
		rank[i] = -1
	}
	queue := make([]int32, 0, n)
	next := int32(0)
	visit := func(s int) {
		if rank[s] >= 0 {
			return
		}
		rank[s] = next
		next++
		queue = append(queue[:0], int32(s))
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			for _, v := range g.Targets[g.Offsets[u]:g.Offsets[u+1]] {
				if rank[v] < 0 {
					rank[v] = next
					next++
					queue = append(queue, int32(v))
				}
			}
		}
	}
	hub, best := 0, -1
	for u := range n {
		if d := g.OutDegree(graph.VertexID(u)); d > best {
			hub, best = u, d
		}
	}
	if n > 0 {
		visit(hub)
	}
	for u := range n {
		visit(u)
	}
	return rank
}

// batchedTrace, when set (benchmarks), runs the counting variant of the
// round kernel, synchronising after every round, and receives per round:
// arcs walked by a warp, lane relaxations that reached the atomic, lane
// improvements, vertex expansions by a warp, lane expansions, busy chunks,
// and the round's wall time.
var batchedTrace func(round int, counts [6]uint64, elapsed time.Duration)

// derivations is where the device copy of a plan's derivations lies:
// the leaves' (4 words each, passes[0] then passes[1] of them) and the
// minimums' (4 words each, reading the arcs of batchedRun).
type derivations struct {
	leaves   uint64
	passes   [2]int
	mins     uint64
	minCount int
}

func runBatched(dv *device, r *Runner, run *batchedRun) error {
	n := r.n
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	suffix := typeSuffix(r.distType)
	name := "batched_round_" + suffix
	if batchedTrace != nil {
		name = "batched_count_" + suffix
	}
	off := 0
	for i, k := range run.phases {
		if i == 1 && run.later != nil {
			if err := run.later(); err != nil {
				return err
			}
		}
		seeds := uint64(0)
		if i > 0 {
			seeds = run.seeds + uint64(8*4*(off-run.phases[0]))
		}
		if err := runPhase(dv, r, name, k, run.frontiers[i], run.sources[i], run.rows[i], seeds, run.arcs); err != nil {
			return err
		}
		off += k
	}
	after := run.after
	if after.minCount > 0 {
		total := int64(after.minCount) * int64(n)
		if err := dv.launchAsync("batched_mins_"+suffix, batchedGrid(total), r.dist.ptr, int32(n), after.mins, int64(after.minCount),
			run.arcs, r.weights.ptr); err != nil {
			return err
		}
	}
	for pass, count := range after.passes {
		if count == 0 {
			continue
		}
		items := after.leaves
		if pass == 1 {
			items += uint64(8 * 4 * after.passes[0])
		}
		total := int64(count) * int64(n)
		if err := dv.launchAsync("batched_derive_"+suffix, batchedGrid(total), r.dist.ptr, int32(n), items, int64(count),
			r.weights.ptr); err != nil {
			return err
		}
	}
	return dv.finishTimed(name)
}

// batchedGrid is the thread blocks of a kernel striding over count elements.
func batchedGrid(count int64) int {
	return int(min((count+threadsPerBlock-1)/threadsPerBlock, batchedTransposeGrid))
}

// runPhase runs the round kernel name for k sources (device int32 arrays
// sources and rows, rows 0 for the identity) and transposes their
// distances into their rows of r.dist: clear the frontier, start the
// working distances in r.aux at infinity (or, with seeds, from the first
// phase's rows through batched_seedfill), put the sources at 0, and launch
// rounds back to back until one changes nothing.
func runPhase(dv *device, r *Runner, name string, k int, frontier, sources, rows, seeds, arcs uint64) error {
	n := r.n
	groups := int64((k + BatchWidth - 1) / BatchWidth)
	maskWords := groups * int64(n)
	sumWords := groups * batchedSummaryWords(n)
	lastChange := frontier
	cur := frontier + batchedHeader
	next := cur + uint64(4*maskWords)
	curSum, nextSum := next+uint64(4*maskWords), next+uint64(4*maskWords+4*sumWords)
	words := 2*maskWords + 2*sumWords
	cells := int64(k) * int64(n)
	bits := "b32"
	if r.distType.Size() == 8 {
		bits = "b64"
	}
	shape, _ := r.batchedGraph()
	step := batchedStep(shape, r.req.Delta)
	tiles := int64((n+31)/32) * groups
	if err := dv.launchAsync("batched_fill_b32", batchedGrid(words+batchedHeader/4), frontier, words+batchedHeader/4, uint64(0)); err != nil {
		return err
	}
	if seeds != 0 {
		if err := dv.launchAsync("batched_seedfill_"+typeSuffix(r.distType), int(min(tiles, batchedTransposeGrid)), r.dist.ptr, int32(n), int32(k),
			seeds, arcs, r.weights.ptr, r.aux.ptr); err != nil {
			return err
		}
	} else if err := dv.launchAsync("batched_fill_"+bits, batchedGrid(cells), r.aux.ptr, cells, infinityBits(r.distType)); err != nil {
		return err
	}
	if err := dv.launchAsync("batched_seed_"+bits, (k+threadsPerBlock-1)/threadsPerBlock, sources, int32(k), int32(n),
		r.aux.ptr, cur, curSum); err != nil {
		return err
	}
	// counters: per round, 8 words of work the counting variant counts.
	var counters devBuf
	if batchedTrace != nil {
		var err error
		if counters, err = dv.alloc(8 * 8 * batchedTraceRounds); err != nil {
			return err
		}
		defer dv.free(&counters)
		if err := dv.launchAsync("batched_fill_b64", batchedGrid(8*batchedTraceRounds), counters.ptr, int64(8*batchedTraceRounds), uint64(0)); err != nil {
			return err
		}
	}
	grid := batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)
	last := make([]int32, 1)
	batch := batchedFirstRounds
	for round := int32(1); ; {
		for range batch {
			began := time.Now()
			if err := dv.launchAsync(name, grid, r.offsets.ptr, r.targets.ptr, r.weights.ptr, int32(n), int32(k),
				r.aux.ptr, cur, next, curSum, nextSum, lastChange, round, batchedThreshold(step, round), int32(batchedSparse), counters.ptr); err != nil {
				return err
			}
			if batchedTrace != nil && round < batchedTraceRounds {
				var c [8]uint64
				if err := dv.d.cuMemcpyDtoH_v2(unsafe.Pointer(&c[0]), counters.ptr+uint64(64*round), 64).Err("cuMemcpyDtoH_v2"); err != nil {
					return err
				}
				batchedTrace(int(round), [6]uint64(c[:6]), time.Since(began))
			}
			cur, next = next, cur
			curSum, nextSum = nextSum, curSum
			round++
		}
		if err := dv.d.cuMemcpyDtoH_v2(unsafe.Pointer(&last[0]), lastChange, 4).Err("cuMemcpyDtoH_v2"); err != nil {
			return err
		}
		if last[0] < round-1 {
			break
		}
		if round > math.MaxInt32/2 {
			return errors.New("gpu: batched kernel did not converge")
		}
		batch = min(2*batch, batchedMaxRounds)
	}
	return dv.launchAsync("batched_transpose_"+bits, int(min(tiles, batchedTransposeGrid)), r.aux.ptr, int32(n), int32(k),
		rows, r.dist.ptr)
}

// batchedSparse is the most sources of a group that an expansion may carry
// and still go through the round kernel's sparse relaxation (relaxSparse in
// batched.cu: lanes spread over sources × arcs) rather than one lane per
// source on every arc; 0 turns it off.
var batchedSparse = 16

// batchedTraceRounds bounds the rounds batchedTrace reports.
const batchedTraceRounds = 1 << 16

// batchedDeltaScale times the mean weight is the step by which the round
// threshold of the batched kernel rises per round on graphs that look like
// meshes (sparse, even degrees, so likely a high diameter). Measured on an
// H200 (kernel time, one block of 8192 consecutive sources; BenchmarkBatchedStep):
// 256×256 grid, weights 1..10: no threshold 570 ms, 0.25× 515, 0.5× 331,
// 1×, 2×, 4× 567..570 (a step past the frontier's pace never holds a vertex
// back); R-MAT scale 16: no threshold 891 ms, 0.25× 1574, 0.5× 1097, 1× and
// up 892..895. So R-MAT-like graphs run without a threshold.
var batchedDeltaScale = 0.5

// batchedMeshOnly limits the threshold to graphs that look like meshes
// (BenchmarkBatchedStep clears it to time other graphs with one).
var batchedMeshOnly = true

// batchedOrderedRounds is the rounds after which the threshold is dropped
// (plain label correcting), which bounds the rounds spent waiting on a step
// too small for the distances.
const batchedOrderedRounds = 1 << 14

// batchedStep is the threshold's step per round: asked when positive, else
// batchedDeltaScale times the mean weight where g is sparse with even
// degrees (mean out-degree below 6, maximum below 4 times the mean, the
// test the seed kernels' auto used for high-diameter graphs), else 0 (no
// threshold).
func batchedStep(shape graphShape, asked float64) float64 {
	if asked > 0 {
		return asked
	}
	if !shape.arcs || batchedDeltaScale <= 0 || (batchedMeshOnly && !shape.meshLike) {
		return 0
	}
	return batchedDeltaScale * shape.meanWeight
}

// graphShape is what the batched kernel's choices read of a graph: whether
// it has arcs, looks like a mesh, and its mean weight.
type graphShape struct {
	arcs, meshLike bool
	meanWeight     float64
}

// shapeOf measures g for graphShape (a pass over every vertex and arc).
func shapeOf(g *graph.CSR) graphShape {
	n, m := g.NumVertices, g.NumEdges()
	if m == 0 {
		return graphShape{}
	}
	mean := float64(m) / float64(n)
	maxDeg := 0
	for u := range n {
		maxDeg = max(maxDeg, g.OutDegree(graph.VertexID(u)))
	}
	var sum float64
	for k := int64(0); k < m; k++ {
		sum += g.WeightAt(k)
	}
	return graphShape{arcs: true, meshLike: mean < 6 && float64(maxDeg) < 4*mean, meanWeight: sum / float64(m)}
}

// batchedGraph returns the runner's graph shape and breadth-first rank,
// measured on its first batched block.
func (r *Runner) batchedGraph() (graphShape, []int32) {
	if r.rank == nil {
		done := make(chan struct{})
		go func() { // the two walk the graph apart
			defer close(done)
			r.shape = shapeOf(r.g)
		}()
		r.rank = bfsRank(r.g)
		<-done
	}
	return r.shape, r.rank
}

// batchedThreshold is the distance up to which round expands vertices:
// step·round, or +Inf without a step or past batchedOrderedRounds.
func batchedThreshold(step float64, round int32) float64 {
	if step <= 0 || math.IsNaN(step) || round > batchedOrderedRounds {
		return math.Inf(1)
	}
	return step * float64(round)
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
