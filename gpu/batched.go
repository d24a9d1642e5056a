package gpu

import (
	"cmp"
	"errors"
	"math"
	"slices"
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
// fill the working distances with infinity and clear the masks, seed the
// sources, launch rounds back to back until one changes nothing, transpose
// into r.dist. Launches are asynchronous; the device time of the whole
// sequence is left in dv.lastKernel for Runner.launch.
func launchBatched(r *Runner, k int) error {
	dv := r.e.dev
	n := r.n
	need := batchedFrontierBytes(n, k)
	frontier := r.dist
	var temp devBuf
	if frontier.size < need {
		var err error
		if temp, err = dv.alloc(need); err != nil {
			return err
		}
		frontier = temp
	}
	// The block's sources in the kernel's order, and the row of each.
	var order devBuf
	sources, rows := r.sources.ptr, uint64(0)
	perm, err := batchedPermutation(r, k)
	if err == nil && perm != nil {
		if order, err = dv.upload(asBytes(perm)); err == nil {
			sources, rows = order.ptr, order.ptr+uint64(4*k)
		}
	}
	if err == nil {
		err = runBatched(dv, r, k, frontier.ptr, sources, rows)
	}
	if temp.ptr != 0 {
		err = errors.Join(err, dv.free(&temp))
	}
	if order.ptr != 0 {
		err = errors.Join(err, dv.free(&order))
	}
	return err
}

// batchedOrder is how a block's sources are grouped before the kernel runs
// (rows are written back in the block's order): "cluster" gathers each
// group of BatchWidth sources from a breadth-first search around a seed,
// so that the group's sources are close in the graph, share most of their
// shortest-path trees, change in the same rounds and let a warp's walk of
// an arc serve more lanes; "bfs" sorts them by breadth-first rank from the
// vertex of highest degree; "" keeps the block's order.
var batchedOrder = "cluster"

// batchedPermutation returns the k sources of r.sources in batchedOrder,
// followed by the block row of each, or nil to keep the block's order.
func batchedPermutation(r *Runner, k int) ([]int32, error) {
	if batchedOrder == "" || k <= BatchWidth {
		return nil, nil
	}
	src := make([]int32, k)
	if err := r.e.dev.d.cuMemcpyDtoH_v2(ptrOf(src), r.sources.ptr, uint64(4*k)).Err("cuMemcpyDtoH_v2"); err != nil {
		return nil, err
	}
	if r.rank == nil {
		r.rank = bfsRank(r.g)
	}
	rank := r.rank
	idx := make([]int32, k)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(rank[src[a]], rank[src[b]]) })
	if batchedOrder == "cluster" {
		idx = clusterSources(r.g, src, idx)
	}
	out := make([]int32, 2*k)
	for i, j := range idx {
		out[i] = src[j]
		out[k+i] = j
	}
	return out, nil
}

// clusterMaxVisit bounds the vertices one cluster's search queues, and
// clusterMaxArcs the arcs it reads: late clusters, whose neighbourhoods are
// mostly taken, fall back to rank order instead of searching far.
const (
	clusterMaxVisit = 4096
	clusterMaxArcs  = 16384
)

// clusterSources groups the block rows idx (sources src[idx[i]], in
// breadth-first rank order) into runs of BatchWidth: each run starts at the
// first row not yet taken and continues with the untaken sources a
// breadth-first search from it meets first (within clusterMaxVisit
// vertices and clusterMaxArcs arcs), then with the next untaken rows in
// rank order.
func clusterSources(g *graph.CSR, src, idx []int32) []int32 {
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

func runBatched(dv *device, r *Runner, k int, frontier, sources, rows uint64) error {
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
	step := batchedStep(r.g, r.req.Delta)
	if err := dv.d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	fillGrid := func(count int64) int {
		return int(min((count+threadsPerBlock-1)/threadsPerBlock, batchedTransposeGrid))
	}
	if err := dv.launchAsync("batched_fill_b32", fillGrid(words+batchedHeader/4), frontier, words+batchedHeader/4, uint64(0)); err != nil {
		return err
	}
	if err := dv.launchAsync("batched_fill_"+bits, fillGrid(cells), r.aux.ptr, cells, infinityBits(r.distType)); err != nil {
		return err
	}
	if err := dv.launchAsync("batched_seed_"+bits, (k+threadsPerBlock-1)/threadsPerBlock, sources, int32(k), int32(n),
		r.aux.ptr, cur, curSum); err != nil {
		return err
	}
	suffix := typeSuffix(r.distType)
	name := "batched_round_" + suffix
	if batchedTrace != nil {
		name = "batched_count_" + suffix
	}
	// counters: per round, 8 words of work the counting variant counts.
	var counters devBuf
	if batchedTrace != nil {
		var err error
		if counters, err = dv.alloc(8 * 8 * batchedTraceRounds); err != nil {
			return err
		}
		defer dv.free(&counters)
		if err := dv.launchAsync("batched_fill_b64", fillGrid(8*batchedTraceRounds), counters.ptr, int64(8*batchedTraceRounds), uint64(0)); err != nil {
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
				r.aux.ptr, cur, next, curSum, nextSum, lastChange, round, batchedThreshold(step, round), counters.ptr); err != nil {
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
	tiles := int64((n+31)/32) * groups
	if err := dv.launchAsync("batched_transpose_"+bits, int(min(tiles, batchedTransposeGrid)), r.aux.ptr, int32(n), int32(k),
		rows, r.dist.ptr); err != nil {
		return err
	}
	if err := dv.d.cuEventRecord(dv.stop, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	if err := dv.syncCompute(name); err != nil {
		return err
	}
	var ms float32
	if err := dv.d.cuEventElapsedTime(&ms, dv.start, dv.stop).Err("cuEventElapsedTime"); err != nil {
		return err
	}
	dv.lastKernel = time.Duration(float64(ms) * float64(time.Millisecond))
	return nil
}

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
func batchedStep(g *graph.CSR, asked float64) float64 {
	if asked > 0 {
		return asked
	}
	n, m := g.NumVertices, g.NumEdges()
	if m == 0 || batchedDeltaScale <= 0 {
		return 0
	}
	mean := float64(m) / float64(n)
	maxDeg := 0
	for u := range n {
		maxDeg = max(maxDeg, g.OutDegree(graph.VertexID(u)))
	}
	if batchedMeshOnly && (mean >= 6 || float64(maxDeg) >= 4*mean) {
		return 0
	}
	var sum float64
	for k := int64(0); k < m; k++ {
		sum += g.WeightAt(k)
	}
	return batchedDeltaScale * sum / float64(m)
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
