package gpu

// Narrowed queries on the device (design.md, "Queries narrower than all
// pairs"): a runner prepared with Request.Targets or Request.Cutoff, and
// without predecessors, fills blocks of the targets' columns only
// (graph.NewTargetBlock), clipped at the cutoff. The block's rows are
// computed as for a full block, then kernels/gather.cu writes the
// [sources × targets] cells into a device buffer of their own, and only
// that buffer is copied to the host: sources × targets × the distance's
// size, never sources × n. With a cutoff and no targets the rows are
// clipped in place and copied whole; where the batched kernels stopped at
// the cutoff they are clipped already and copied as they are. A runner
// told to select the k nearest (SelectNearest) runs kernels/select.cu
// instead of the gather, and only the k (vertex, distance) cells per
// source travel; for a float32 result of float64 rows
// (Request.RoundFloat32) kernels/convert.cu's round_f64_f32 first clips
// the rows at the cutoff and rounds them to float32 in place. RunStats of a
// narrowed runner reduces over the targets within the cutoff on the
// device (kernels/stats.cu), and only its four words per source travel.
//
// Choices: a narrowed block runs through Start like a full one: its
// kernels, then the gather (or selection), fill the gathered (and
// selected) buffers of one of the two result slots, whose copy travels on
// the copy stream while the next block computes (overlap.go); the
// runner's BytesPerSource counts both slots' buffers (one slot's, with
// the hub rows beside it, for the k nearest: selectsInOneSlot).
// ComputeResident refuses a narrowed runner rather than keep unnarrowed rows. Predecessors
// are not gathered here: a runner asked for them is not narrowed
// (Narrowed is false), selects nothing, and the pipeline narrows its full
// rows on the host. The selection keeps ties in vertex order by reading
// the targets in vertex order: the targets are uploaded sorted for it.
//
// A runner's narrowing is its own type, narrowing: the request's targets
// and cutoff, the targets' device copy and the k of the k nearest; the
// runner computes the rows and hands them to it (Runner.startNarrowed,
// overlap.go).

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// narrowing is how a runner narrows its rows on the device: the request
// (its targets, cutoff and predecessors), the graph's size and the
// distance type, the targets on the device, uploaded by the first
// narrowed block (sorted when nearestK is set), and the k of the k nearest
// (SelectNearest), 0 for none.
type narrowing struct {
	req       graph.Request
	n         int
	distType  graph.DistType
	targetIDs devBuf
	nearestK  int
}

// on reports whether the runner honours the request's targets and cutoff
// itself (Runner.Narrowed): a request with targets or a cutoff and
// without predecessors.
func (q *narrowing) on() bool {
	return q.req.Narrowed() && !q.req.WithPredecessors
}

// width is the number of columns of a narrowed block: the targets, or
// every vertex for a cutoff alone.
func (q *narrowing) width() int {
	if q.req.Targets != nil {
		return len(q.req.Targets)
	}
	return q.n
}

// blocks reports whether the runner's blocks are narrowed (its targets'
// columns, or its k nearest): they run through startNarrowed.
func (q *narrowing) blocks() bool { return q.on() || q.nearestK > 0 }

// outWidth is the number of cells of a row of the runner's narrowed
// blocks: k with SelectNearest, else width.
func (q *narrowing) outWidth() int {
	if q.nearestK > 0 {
		return q.nearestK
	}
	return q.width()
}

// bytesPerSource is the device memory of one source's narrowed cells in
// one result slot: the gathered (or selected) distances, nothing for a
// cutoff alone (clipped in place), and the selected vertices.
func (q *narrowing) bytesPerSource() (gathered, selected int64) {
	switch {
	case q.nearestK > 0:
		return int64(q.nearestK) * int64(q.distType.Size()), 4 * int64(q.nearestK)
	case q.on() && q.req.Targets != nil:
		return int64(len(q.req.Targets)) * int64(q.distType.Size()), 0
	}
	return 0, 0
}

// selectsInOneSlot reports whether the runner's blocks of the k nearest
// (SelectNearest) compute into the first result slot alone, as a stats
// block does under plan.Config.OneSlotStats (oneSlotStats), with the hub
// rows beside them (hubs.go): only their k cells per source leave the
// device, so nothing copies rows out while the next block computes, and
// the second slot's rows would only make the blocks smaller.
func (q *narrowing) selectsInOneSlot(oneSlotStats bool) bool {
	return q.nearestK > 0 && oneSlotStats
}

// oneSlotCells is bytesPerSource's figure for a block computed into one
// result slot (narrowing.selectsInOneSlot): the k nearest's cells, none for
// any other narrowing, whose blocks (RunStats) are reduced in place.
func (q *narrowing) oneSlotCells() (gathered, selected int64) {
	if q.nearestK == 0 {
		return 0, 0
	}
	return q.bytesPerSource()
}

// MaxDeviceNearest is the largest k SelectNearest selects on the device
// (kernels/select.cu's maxK); above it the host selects from full rows.
const MaxDeviceNearest = 64

// selectNearest sets the k of the k nearest (Runner.SelectNearest) and
// reports true, or reports false and changes nothing for k outside
// [1, MaxDeviceNearest], with predecessors, or once the targets are
// uploaded.
func (q *narrowing) selectNearest(k int) bool {
	if k < 1 || k > MaxDeviceNearest || q.req.WithPredecessors || q.targetIDs.ptr != 0 {
		return false
	}
	q.nearestK = k
	return true
}

// errFullRows is what the paths of full rows answer on a narrowed runner.
func (q *narrowing) errFullRows(what string) error {
	if q.blocks() {
		return fmt.Errorf("gpu: %s of a runner prepared for targets, a cutoff or the k nearest: its rows are narrowed on the device", what)
	}
	return nil
}

// cutBits is the cutoff as gather.cu reads it: the bits of
// graph.CutoffOf in the distance type (the type's infinity without a
// cutoff, which clips nothing).
func (q *narrowing) cutBits() uint64 {
	c := math.Inf(1)
	if q.req.HasCutoff {
		c = q.req.Cutoff
	}
	switch q.distType {
	case graph.DistInt32:
		return uint64(uint32(graph.CutoffOf[int32](c)))
	case graph.DistInt64:
		return uint64(graph.CutoffOf[int64](c))
	case graph.DistFloat32:
		return uint64(math.Float32bits(graph.CutoffOf[float32](c)))
	}
	return math.Float64bits(graph.CutoffOf[float64](c))
}

// gatherGrid bounds the thread blocks of the gather kernel, which strides
// over the cells.
const gatherGrid = 4096

// checkBlock checks a block for a narrowed run: the runner's targets as
// its columns (nil for a cutoff alone), or k columns named by CellTargets
// for the k nearest; no predecessors.
func (q *narrowing) checkBlock(out *graph.Block) error {
	if out.NumVertices != q.n {
		return fmt.Errorf("gpu: block over %d vertices for a graph of %d", out.NumVertices, q.n)
	}
	if out.Type != q.distType {
		return fmt.Errorf("gpu: block of %s distances, runner computes %s", out.Type, q.distType)
	}
	if out.Pred != nil {
		return errors.New("gpu: a narrowed block holds no predecessors")
	}
	if q.nearestK > 0 {
		if out.Targets != nil || len(out.CellTargets) != len(out.Sources)*q.nearestK {
			return fmt.Errorf("gpu: a block of the %d nearest has no Targets and %d CellTargets, not %d Targets and %d CellTargets",
				q.nearestK, len(out.Sources)*q.nearestK, len(out.Targets), len(out.CellTargets))
		}
	} else {
		if out.CellTargets != nil {
			return errors.New("gpu: a narrowed block holds distances of fixed columns only")
		}
		if (out.Targets == nil) != (q.req.Targets == nil) || len(out.Targets) != len(q.req.Targets) {
			return fmt.Errorf("gpu: block of %d target columns for a runner prepared with %d targets", len(out.Targets), len(q.req.Targets))
		}
		for j, v := range out.Targets {
			if v != q.req.Targets[j] {
				return fmt.Errorf("gpu: block column %d is vertex %d, the runner's target %d", j, v, q.req.Targets[j])
			}
		}
	}
	b, err := sliceBytes(out.Dist)
	if err != nil {
		return err
	}
	if want := len(out.Sources) * q.outWidth() * q.distType.Size(); len(b) != want {
		return fmt.Errorf("gpu: block distance slice of %d bytes, want %d", len(b), want)
	}
	for _, s := range out.Sources {
		if s < 0 || int(s) >= q.n {
			return fmt.Errorf("gpu: source %d outside [0, %d)", s, q.n)
		}
	}
	return nil
}

// uploadTargets copies the request's targets to dv once (on the device
// goroutine), after checking them; sorted for the k nearest.
func (q *narrowing) uploadTargets(dv *device) error {
	if q.req.Targets == nil || q.targetIDs.ptr != 0 {
		return nil
	}
	for _, v := range q.req.Targets {
		if v < 0 || int(v) >= q.n {
			return fmt.Errorf("gpu: target %d outside [0, %d)", v, q.n)
		}
	}
	ids := q.req.Targets
	if q.nearestK > 0 {
		// The selection's ties go by vertex: it reads the columns in
		// vertex order. The set of targets is all it depends on.
		ids = slices.Clone(ids)
		slices.Sort(ids)
	}
	var err error
	q.targetIDs, err = dv.upload(asBytes(ids))
	return err
}

// release frees the targets' device copy (on the device goroutine).
func (q *narrowing) release(dv *device) error { return dv.free(&q.targetIDs) }

// rowsClippedByKernel reports whether the rows of a narrowed block come
// from the kernels clipped already, so that no gather runs over them: a
// cutoff alone (no targets, no selection) at which the batched kernels
// stop (kernelCuts, batchedKernel.cuts), with every distance they write
// (the source's own 0 included) at most the cutoff or unreachable.
func (q *narrowing) rowsClippedByKernel(kernelCuts bool) bool {
	return q.on() && q.req.Targets == nil && q.nearestK == 0 && kernelCuts && q.req.Cutoff >= 0
}

// narrowRows runs the gather (or the selection of the k nearest) over the
// k rows of slot s, just computed for the sources at the device address
// sources, and returns where the narrowed distances are: s.gathered, or
// s.dist itself for a cutoff alone, clipped in place, or left as the
// kernels clipped them (rowsClippedByKernel), with the device time of its
// kernel (on the device goroutine).
func (q *narrowing) narrowRows(dv *device, s *resultSlot, k int, sources uint64, kernelCuts bool) (uint64, time.Duration, error) {
	suffix := typeSuffix(q.distType)
	var err error
	into := s.gathered.ptr
	switch {
	case q.nearestK > 0:
		if q.req.RoundFloat32 && q.distType == graph.DistFloat64 {
			// The k nearest of a float32 result are those of the rounded
			// cells, clipped first on the float64 distance.
			cells := int64(k) * int64(q.n)
			grid := int(min((cells+threadsPerBlock-1)/threadsPerBlock, gatherGrid))
			if err = dv.launch("round_f64_f32", grid, s.dist.ptr, uint64(cells), q.cutBits()); err != nil {
				return into, dv.lastKernel, err
			}
		}
		err = dv.launch("select_nearest_"+suffix, k, q.selectArgs(s, k, sources)...)
	case q.rowsClippedByKernel(kernelCuts):
		return s.dist.ptr, 0, nil
	default:
		if q.req.Targets == nil {
			into = s.dist.ptr
		}
		cells := int64(k) * int64(q.width())
		grid := int(min((cells+threadsPerBlock-1)/threadsPerBlock, gatherGrid))
		err = dv.launch("gather_"+suffix, grid, q.gatherArgs(s, k, into)...)
	}
	return into, dv.lastKernel, err
}

// gatherArgs are gather.cu's arguments for the k rows of slot s, gathered
// into into.
func (q *narrowing) gatherArgs(s *resultSlot, k int, into uint64) []any {
	return []any{s.dist.ptr, int32(q.n), int32(k), q.targetIDs.ptr, int32(q.width()), q.cutBits(), into}
}

// selectArgs are select.cu's arguments for the k rows of slot s, whose
// sources are at the device address sources.
func (q *narrowing) selectArgs(s *resultSlot, k int, sources uint64) []any {
	return []any{s.dist.ptr, int32(q.n), sources, int32(k), q.targetIDs.ptr, int32(q.width()), q.cutBits(),
		int32(q.nearestK), s.selected.ptr, s.gathered.ptr}
}

// statsArgs are stats_narrow_*'s arguments for the k rows at dist, of the
// sources at sources, reduced into the stats words at stats.
func (q *narrowing) statsArgs(k int, dist, sources, stats uint64) []any {
	return []any{dist, int32(q.n), sources, int32(k), q.targetIDs.ptr, int32(q.width()), q.cutBits(), stats}
}

// narrowCloseness sets the closeness of st, whose other fields are those
// of rows narrowed to targets, with graph.ComputeStats' denominator for
// such rows: the targets other than the source (a target that repeats
// counting each time), instead of n − 1.
func narrowCloseness(st *graph.Stats, targets []graph.VertexID) {
	times := make(map[graph.VertexID]int, len(targets))
	for _, t := range targets {
		times[t]++
	}
	for i, s := range st.Sources {
		st.Closeness[i] = 0
		var total float64
		if st.Type.IsFloat() {
			total = st.SumFloat[i]
		} else {
			total = float64(st.SumInt[i])
		}
		reach := st.Reachable[i]
		if others := len(targets) - times[s]; reach > 0 && total > 0 && others > 0 {
			st.Closeness[i] = (float64(reach) / total) * (float64(reach) / float64(others))
		}
	}
}
