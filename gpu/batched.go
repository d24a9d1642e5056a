package gpu

import (
	"errors"
	"math"
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
	err := runBatched(dv, r, k, frontier.ptr)
	if temp.ptr != 0 {
		err = errors.Join(err, dv.free(&temp))
	}
	return err
}

func runBatched(dv *device, r *Runner, k int, frontier uint64) error {
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
	if err := dv.launchAsync("batched_seed_"+bits, (k+threadsPerBlock-1)/threadsPerBlock, r.sources.ptr, int32(k), int32(n),
		r.aux.ptr, cur, curSum); err != nil {
		return err
	}
	name := "batched_round_" + typeSuffix(r.distType)
	grid := batchedBlocksPerSM * max(r.e.info.Multiprocessors, 1)
	last := make([]int32, 1)
	batch := batchedFirstRounds
	for round := int32(1); ; {
		for range batch {
			if err := dv.launchAsync(name, grid, r.offsets.ptr, r.targets.ptr, r.weights.ptr, int32(n), int32(k),
				r.aux.ptr, cur, next, curSum, nextSum, lastChange, round, batchedThreshold(step, round)); err != nil {
				return err
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
		r.dist.ptr); err != nil {
		return err
	}
	if err := dv.d.cuEventRecord(dv.stop, 0).Err("cuEventRecord"); err != nil {
		return err
	}
	if err := dv.d.cuCtxSynchronize().Err("cuCtxSynchronize after " + name); err != nil {
		return err
	}
	var ms float32
	if err := dv.d.cuEventElapsedTime(&ms, dv.start, dv.stop).Err("cuEventElapsedTime"); err != nil {
		return err
	}
	dv.lastKernel = time.Duration(float64(ms) * float64(time.Millisecond))
	return nil
}

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
