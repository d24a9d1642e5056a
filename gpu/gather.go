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
// source travel. RunStats of a
// narrowed runner reduces over the targets within the cutoff on the
// device (kernels/stats.cu), and only its four words per source travel.
//
// Choices: a narrowed block runs through Start like a full one: its
// kernels, then the gather (or selection), fill the gathered (and
// selected) buffers of one of the two result slots, whose copy travels on
// the copy stream while the next block computes (overlap.go); the
// runner's BytesPerSource counts both slots' buffers. ComputeResident
// refuses a narrowed runner rather than keep unnarrowed rows. Predecessors
// are not gathered here: a runner asked for them is not narrowed
// (Narrowed is false), selects nothing, and the pipeline narrows its full
// rows on the host. The selection keeps ties in vertex order by reading
// the targets in vertex order: the targets are uploaded sorted for it.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pathctl/pathctl/graph"
)

// Narrowed reports whether Run honours the request's targets and cutoff
// itself (graph.NarrowRunner): true for a request with targets or a cutoff
// and without predecessors. Such a runner's blocks hold only the targets'
// columns (every vertex's without targets), with every distance above the
// cutoff made unreachable.
func (r *Runner) Narrowed() bool {
	return r.req.Narrowed() && !r.req.WithPredecessors
}

// narrowWidth is the number of columns of a narrowed block: the targets,
// or every vertex for a cutoff alone.
func (r *Runner) narrowWidth() int {
	if r.req.Targets != nil {
		return len(r.req.Targets)
	}
	return r.n
}

// narrowsBlocks reports whether the runner's blocks are narrowed (its
// targets' columns, or its k nearest): they run through startNarrowed.
func (r *Runner) narrowsBlocks() bool { return r.Narrowed() || r.nearestK > 0 }

// outWidth is the number of cells of a row of the runner's narrowed
// blocks: k with SelectNearest, else narrowWidth.
func (r *Runner) outWidth() int {
	if r.nearestK > 0 {
		return r.nearestK
	}
	return r.narrowWidth()
}

// narrowBytesPerSource is the device memory of one source's narrowed cells
// in one result slot: the gathered (or selected) distances, nothing for a
// cutoff alone (clipped in place), and the selected vertices.
func (r *Runner) narrowBytesPerSource() (gathered, selected int64) {
	switch {
	case r.nearestK > 0:
		return int64(r.nearestK) * int64(r.distType.Size()), 4 * int64(r.nearestK)
	case r.Narrowed() && r.req.Targets != nil:
		return int64(len(r.req.Targets)) * int64(r.distType.Size()), 0
	}
	return 0, 0
}

// NarrowsAhead reports that Start and RunStats honour the request's
// targets and cutoff as Run does (package pipeline then starts narrowed
// blocks ahead and reduces their stats on the device); ComputeResident
// refuses a narrowed runner.
func (r *Runner) NarrowsAhead() bool { return true }

// MaxDeviceNearest is the largest k SelectNearest selects on the device
// (kernels/select.cu's maxK); above it the host selects from full rows.
const MaxDeviceNearest = 64

// SelectNearest makes the runner's blocks the k nearest of every source
// (design.md, "Queries narrower than all pairs"), selected on the device:
// per source, the k nearest other vertices among the request's targets
// (every vertex without), within its cutoff, by distance and then vertex,
// nearest first. Run and Start then fill blocks of k columns whose
// CellTargets name the vertices (graph.NewBlock of k columns, NumVertices
// the graph's, CellTargets of len(Sources)·k), -1 and Infinity where a
// source reaches fewer: the blocks package pipeline's host selection
// makes. It reports false, and changes nothing, for k outside
// [1, MaxDeviceNearest], for a runner with predecessors, and once a block
// has run.
func (r *Runner) SelectNearest(k int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k < 1 || k > MaxDeviceNearest || r.req.WithPredecessors || r.capacity > 0 || r.targetIDs.ptr != 0 || r.closed {
		return false
	}
	r.nearestK = k
	return true
}

// errNarrowed is what the paths of full rows answer on a narrowed runner.
func (r *Runner) errNarrowed(what string) error {
	if r.narrowsBlocks() {
		return fmt.Errorf("gpu: %s of a runner prepared for targets, a cutoff or the k nearest: its rows are narrowed on the device", what)
	}
	return nil
}

// cutBits is the cutoff as gather.cu reads it: the bits of
// graph.CutoffOf in the distance type (the type's infinity without a
// cutoff, which clips nothing).
func (r *Runner) cutBits() uint64 {
	c := math.Inf(1)
	if r.req.HasCutoff {
		c = r.req.Cutoff
	}
	switch r.distType {
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

// checkNarrowBlock checks a block for a narrowed run: the runner's
// targets as its columns (nil for a cutoff alone), or k columns named by
// CellTargets for the k nearest; no predecessors.
func (r *Runner) checkNarrowBlock(out *graph.Block) error {
	if out.NumVertices != r.n {
		return fmt.Errorf("gpu: block over %d vertices for a graph of %d", out.NumVertices, r.n)
	}
	if out.Type != r.distType {
		return fmt.Errorf("gpu: block of %s distances, runner computes %s", out.Type, r.distType)
	}
	if out.Pred != nil {
		return errors.New("gpu: a narrowed block holds no predecessors")
	}
	if r.nearestK > 0 {
		if out.Targets != nil || len(out.CellTargets) != len(out.Sources)*r.nearestK {
			return fmt.Errorf("gpu: a block of the %d nearest has no Targets and %d CellTargets, not %d Targets and %d CellTargets",
				r.nearestK, len(out.Sources)*r.nearestK, len(out.Targets), len(out.CellTargets))
		}
	} else {
		if out.CellTargets != nil {
			return errors.New("gpu: a narrowed block holds distances of fixed columns only")
		}
		if (out.Targets == nil) != (r.req.Targets == nil) || len(out.Targets) != len(r.req.Targets) {
			return fmt.Errorf("gpu: block of %d target columns for a runner prepared with %d targets", len(out.Targets), len(r.req.Targets))
		}
		for j, v := range out.Targets {
			if v != r.req.Targets[j] {
				return fmt.Errorf("gpu: block column %d is vertex %d, the runner's target %d", j, v, r.req.Targets[j])
			}
		}
	}
	b, err := sliceBytes(out.Dist)
	if err != nil {
		return err
	}
	if want := len(out.Sources) * r.outWidth() * r.distType.Size(); len(b) != want {
		return fmt.Errorf("gpu: block distance slice of %d bytes, want %d", len(b), want)
	}
	for _, s := range out.Sources {
		if s < 0 || int(s) >= r.n {
			return fmt.Errorf("gpu: source %d outside [0, %d)", s, r.n)
		}
	}
	return nil
}

// uploadTargets copies the request's targets to the device once (on the
// device goroutine), after checking them; sorted for the k nearest.
func (r *Runner) uploadTargets() error {
	if r.req.Targets == nil || r.targetIDs.ptr != 0 {
		return nil
	}
	for _, v := range r.req.Targets {
		if v < 0 || int(v) >= r.n {
			return fmt.Errorf("gpu: target %d outside [0, %d)", v, r.n)
		}
	}
	ids := r.req.Targets
	if r.nearestK > 0 {
		// The selection's ties go by vertex: it reads the columns in
		// vertex order. The set of targets is all it depends on.
		ids = slices.Clone(ids)
		slices.Sort(ids)
	}
	var err error
	r.targetIDs, err = r.e.dev.upload(asBytes(ids))
	return err
}

// startNarrowed is Start for a runner whose blocks are narrowed
// (narrowsBlocks): per chunk of sources, the rows are computed into an
// idle result slot, gathered and clipped (or the k nearest selected) into
// that slot's own buffers, and the copy of those cells to out is queued on
// the copy stream. Errors are Start's.
func (r *Runner) startNarrowed(ctx context.Context, out *graph.Block) (*Pending, error) {
	if err := r.checkNarrowBlock(out); err != nil {
		return nil, err
	}
	out.ValidSet, out.Nulls = false, 0
	p := &Pending{}
	k := len(out.Sources)
	if k == 0 {
		return p, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("gpu: run on a closed runner")
	}
	dist, _ := sliceBytes(out.Dist)
	w := r.outWidth()
	rowBytes := w * r.distType.Size()
	cycleSource := graph.VertexID(-1)
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		if err := r.uploadTargets(); err != nil {
			return err
		}
		return r.runChunks(k, func(lo, hi int) error {
			s := r.takeSlot()
			c, err := r.compute(out.Sources[lo:hi], s, false)
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			from, err := r.narrowRows(s, hi-lo)
			if err != nil {
				return err
			}
			cp := copyOut{dist: dist[lo*rowBytes : hi*rowBytes]}
			if r.nearestK > 0 {
				cp.pred = asBytes(out.CellTargets[lo*w : hi*w])
			} else if r.req.Targets == nil && lo == 0 && hi == k {
				cp.valid, cp.block = r.validOut(out), out // full rows, clipped
			}
			j, err := r.queueCopyFrom(s, from, s.selected.ptr, cp)
			if err != nil {
				return err
			}
			p.jobs = append(p.jobs, j)
			return nil
		})
	})
	return r.started(p, err, cycleSource)
}

// rowsClippedByKernel reports whether the rows of a narrowed block come
// from the kernels clipped already, so that no gather runs over them: a
// cutoff alone (no targets, no selection) at which the batched kernels
// stop, with every distance they write (the source's own 0 included) at
// most the cutoff or unreachable.
func (r *Runner) rowsClippedByKernel() bool {
	return r.Narrowed() && r.req.Targets == nil && r.nearestK == 0 && r.kernelCuts() && r.req.Cutoff >= 0
}

// narrowRows runs the gather (or the selection of the k nearest) over the
// k rows of slot s, just computed, and returns where the narrowed
// distances are: s.gathered, or s.dist itself for a cutoff alone, clipped
// in place, or left as the kernels clipped them (rowsClippedByKernel) (on
// the device goroutine).
func (r *Runner) narrowRows(s *resultSlot, k int) (uint64, error) {
	dv := r.e.dev
	suffix := typeSuffix(r.distType)
	var err error
	into := s.gathered.ptr
	switch {
	case r.nearestK > 0:
		err = dv.launch("select_nearest_"+suffix, k, r.selectArgs(s, k)...)
	case r.rowsClippedByKernel():
		return s.dist.ptr, nil
	default:
		if r.req.Targets == nil {
			into = s.dist.ptr
		}
		cells := int64(k) * int64(r.narrowWidth())
		grid := int(min((cells+threadsPerBlock-1)/threadsPerBlock, gatherGrid))
		err = dv.launch("gather_"+suffix, grid, r.gatherArgs(s, k, into)...)
	}
	r.kernelTime += dv.lastKernel
	return into, err
}

// gatherArgs are gather.cu's arguments for the k rows of slot s, gathered
// into into.
func (r *Runner) gatherArgs(s *resultSlot, k int, into uint64) []any {
	return []any{s.dist.ptr, int32(r.n), int32(k), r.targetIDs.ptr, int32(r.narrowWidth()), r.cutBits(), into}
}

// selectArgs are select.cu's arguments for the k rows of slot s.
func (r *Runner) selectArgs(s *resultSlot, k int) []any {
	return []any{s.dist.ptr, int32(r.n), r.sources.ptr, int32(k), r.targetIDs.ptr, int32(r.narrowWidth()), r.cutBits(),
		int32(r.nearestK), s.selected.ptr, s.gathered.ptr}
}

// statsNarrowArgs are stats_narrow_*'s arguments for the k rows at r.dist.
func (r *Runner) statsNarrowArgs(k int) []any {
	return []any{r.dist.ptr, int32(r.n), r.sources.ptr, int32(k), r.targetIDs.ptr, int32(r.narrowWidth()), r.cutBits(), r.stats.ptr}
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

// DownloadedBytes is the number of result bytes (distances, predecessors,
// validity bitmaps, stats words) the runner has copied from the device to
// the host since Prepare: for a narrowed runner, sources × targets × the
// distance's size per Run, and for one that selects the k nearest,
// sources × k × (the distance's size + 4).
func (r *Runner) DownloadedBytes() int64 { return r.downloaded.Load() }
