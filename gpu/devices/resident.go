package devices

// Device blocks over several devices (graph.ResidentRunner): the pairs and
// matrix layouts of a GPU run compute their rows in device blocks far
// larger than the host blocks, and send them to the host block by block
// (the pipeline's producer). Over several devices a device block is cut
// into one part per device, each as large as one device alone would
// compute (the planner's device block is the devices' sum), computed at
// once; the host blocks then take their rows from the part, or the two
// parts, that hold them, in order, so that the output is one device's.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pathctl/pathctl/graph"
)

var _ graph.ResidentRunner = (*devicesRunner)(nil)

// residentWorkers is the devices that compute device blocks: every device
// not failed, where each one's runner is a ResidentRunner; nil otherwise.
func (r *devicesRunner) residentWorkers() []*deviceWorker {
	var out []*deviceWorker
	for _, w := range r.workers {
		if r.queue.retiredOrFailed(w.index) {
			continue
		}
		if _, ok := w.runner.(graph.ResidentRunner); !ok {
			return nil
		}
		out = append(out, w)
	}
	return out
}

// ResidentSources is the most sources of a device block over every device
// that computes device blocks, each holding per of them (rounded down to a
// multiple of 8, as ComputeResident cuts its parts); 0 where the devices
// do not.
func (r *devicesRunner) ResidentSources(per int) int {
	if per > 8 {
		per -= per % 8
	}
	return per * len(r.residentWorkers())
}

// ComputeResident computes sources on every device at once, each device a
// part of consecutive sources (a multiple of 8, so that the host blocks'
// validity bitmaps start on a byte in each). A device that fails with an
// error of its own is left out of the rest of the run, named on the
// notice writer, and the block fails with graph.ErrResidentTooLarge: the
// producer then runs the rest of the sources through the queue of blocks
// (startAhead), where the other devices take them.
func (r *devicesRunner) ComputeResident(ctx context.Context, sources []graph.VertexID) (graph.ResidentBlock, error) {
	workers := r.residentWorkers()
	if len(workers) == 0 {
		return nil, fmt.Errorf("%w: the devices keep no device blocks", graph.ErrResidentTooLarge)
	}
	share := roundUp8((len(sources) + len(workers) - 1) / len(workers))
	var parts []residentPart
	for i, lo := 0, 0; lo < len(sources); i, lo = i+1, lo+share {
		parts = append(parts, residentPart{w: workers[i], lo: lo, hi: min(lo+share, len(sources))})
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[i]
			p.res, errs[i] = p.w.runner.(graph.ResidentRunner).ComputeResident(ctx, sources[p.lo:p.hi])
		}()
	}
	wg.Wait()
	var tooLarge, request error
	for i, err := range errs {
		switch {
		case err == nil:
			parts[i].w.computed(parts[i].hi - parts[i].lo)
		case errors.Is(err, graph.ErrResidentTooLarge):
			tooLarge = err
		case r.isRequestError(err):
			request = err
		default:
			err = fmt.Errorf("devices: device %s: %w", parts[i].w.label, err)
			if !r.queue.retire(parts[i].w.index, err) {
				return nil, err // the last device
			}
			tooLarge = fmt.Errorf("%w: %w", graph.ErrResidentTooLarge, err)
		}
	}
	if request != nil {
		return nil, request
	}
	if tooLarge != nil {
		return nil, tooLarge
	}
	return &devicesResident{parts: parts}, nil
}

// residentPart is the sources [lo, hi) of a device block, held by w.
type residentPart struct {
	w      *deviceWorker
	lo, hi int
	res    graph.ResidentBlock
}

// devicesResident is a device block held by several devices.
type devicesResident struct{ parts []residentPart }

// Start sends rows [lo, hi) of the block to out from the parts that hold
// them.
func (d *devicesResident) Start(ctx context.Context, lo, hi int, out *graph.Block) (graph.Waiter, error) {
	mw := &partsWaiter{out: out}
	for _, p := range d.parts {
		a, b := max(lo, p.lo), min(hi, p.hi)
		if a >= b {
			continue
		}
		sub := out
		if a != lo || b != hi {
			sub = subBlock(out, a-lo, b-lo)
		}
		w, err := p.res.Start(ctx, a-p.lo, b-p.lo, sub)
		if err != nil {
			_ = mw.Wait() // nothing may write to out once Start has failed
			return nil, fmt.Errorf("devices: device %s: %w", p.w.label, err)
		}
		mw.subs = append(mw.subs, sub)
		mw.waits = append(mw.waits, w)
	}
	return mw, nil
}

// partsWaiter waits for the rows of a host block sent from several parts.
type partsWaiter struct {
	out   *graph.Block
	subs  []*graph.Block
	waits []graph.Waiter
}

// Wait waits for every part's rows; the host block's validity is set
// where every part set its own.
func (m *partsWaiter) Wait() error {
	var errs []error
	for _, w := range m.waits {
		errs = append(errs, w.Wait())
	}
	if len(m.subs) > 1 {
		valid, nulls := true, 0
		for _, s := range m.subs {
			valid = valid && s.ValidSet
			nulls += s.Nulls
		}
		m.out.ValidSet, m.out.Nulls = valid && m.out.Valid != nil, nulls
	}
	return errors.Join(errs...)
}
