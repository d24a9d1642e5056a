package gpu

// Narrowed queries on the device (design.md, "Queries narrower than all
// pairs"): a runner prepared with Request.Targets or Request.Cutoff, and
// without predecessors, fills blocks of the targets' columns only
// (graph.NewTargetBlock), clipped at the cutoff. The block's rows are
// computed as for a full block, then kernels/gather.cu writes the
// [sources × targets] cells into a device buffer of their own, and only
// that buffer is copied to the host: sources × targets × the distance's
// size, never sources × n. With a cutoff and no targets the rows are
// clipped in place and copied whole.
//
// Choices: the narrowed block runs synchronously (compute, gather, copy
// through the runner's pinned stage), like RunStats; Start, ComputeResident
// and RunStats refuse a narrowed runner rather than return unnarrowed rows,
// and package pipeline runs such a runner through Run only. Predecessors
// are not gathered here: a runner asked for them is not narrowed
// (Narrowed is false) and the pipeline narrows its full rows on the host.

import (
	"context"
	"errors"
	"fmt"
	"math"

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

// gatherBytesPerSource is the device memory of one source's gathered row:
// the targets' cells (nothing for a cutoff alone, clipped in place).
func (r *Runner) gatherBytesPerSource() int64 {
	if !r.Narrowed() || r.req.Targets == nil {
		return 0
	}
	return int64(len(r.req.Targets)) * int64(r.distType.Size())
}

// errNarrowed is what the paths of full rows answer on a narrowed runner.
func (r *Runner) errNarrowed(what string) error {
	if r.Narrowed() {
		return fmt.Errorf("gpu: %s of a runner prepared for targets or a cutoff: its blocks run through Run", what)
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

// checkNarrowBlock checks a block for a narrowed run: the runner's targets
// as its columns (nil for a cutoff alone), no predecessors.
func (r *Runner) checkNarrowBlock(out *graph.Block) error {
	if out.NumVertices != r.n {
		return fmt.Errorf("gpu: block over %d vertices for a graph of %d", out.NumVertices, r.n)
	}
	if out.Type != r.distType {
		return fmt.Errorf("gpu: block of %s distances, runner computes %s", out.Type, r.distType)
	}
	if out.Pred != nil || out.CellTargets != nil {
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
	b, err := sliceBytes(out.Dist)
	if err != nil {
		return err
	}
	if want := len(out.Sources) * r.narrowWidth() * r.distType.Size(); len(b) != want {
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
// device goroutine), after checking them.
func (r *Runner) uploadTargets() error {
	if r.req.Targets == nil || r.targetIDs.ptr != 0 {
		return nil
	}
	for _, v := range r.req.Targets {
		if v < 0 || int(v) >= r.n {
			return fmt.Errorf("gpu: target %d outside [0, %d)", v, r.n)
		}
	}
	var err error
	r.targetIDs, err = r.e.dev.upload(asBytes(r.req.Targets))
	return err
}

// runNarrowed fills out, a block of the targets' columns, for a narrowed
// runner: per chunk of sources, the rows are computed, gathered and
// clipped on the device, and the gathered cells copied to out. Errors are
// Run's.
func (r *Runner) runNarrowed(ctx context.Context, out *graph.Block) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.checkNarrowBlock(out); err != nil {
		return err
	}
	out.ValidSet, out.Nulls = false, 0
	k := len(out.Sources)
	if k == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("gpu: run on a closed runner")
	}
	dist, _ := sliceBytes(out.Dist)
	w := r.narrowWidth()
	rowBytes := w * r.distType.Size()
	name := "gather_" + typeSuffix(r.distType)
	cut := r.cutBits()
	cycleSource := graph.VertexID(-1)
	err := r.e.dev.do(func() error {
		r.kernelTime, r.host = 0, hostTimes{}
		if err := r.uploadTargets(); err != nil {
			return err
		}
		return r.runChunks(k, func(lo, hi int) error {
			c, err := r.compute(out.Sources[lo:hi], r.takeSlot())
			if err != nil {
				return err
			}
			if c >= 0 {
				cycleSource = c
				return errCycle
			}
			dv := r.e.dev
			into := r.gathered.ptr
			if r.req.Targets == nil {
				into = r.dist.ptr // a cutoff alone clips the rows in place
			}
			cells := int64(hi-lo) * int64(w)
			grid := int(min((cells+threadsPerBlock-1)/threadsPerBlock, gatherGrid))
			err = dv.launch(name, grid, r.dist.ptr, int32(r.n), int32(hi-lo), r.targetIDs.ptr, int32(w), cut, into)
			r.kernelTime += dv.lastKernel
			if err != nil {
				return err
			}
			part := dist[lo*rowBytes : hi*rowBytes]
			if err := dv.download(part, into, &r.stage); err != nil {
				return err
			}
			r.downloaded.Add(int64(len(part)))
			return nil
		})
	})
	if errors.Is(err, errCycle) {
		return negativeCycle(r.g, cycleSource)
	}
	return err
}

// DownloadedBytes is the number of result bytes (distances, predecessors,
// validity bitmaps, stats words) the runner has copied from the device to
// the host since Prepare: for a narrowed runner, sources × targets × the
// distance's size per Run.
func (r *Runner) DownloadedBytes() int64 { return r.downloaded.Load() }
