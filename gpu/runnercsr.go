package gpu

// A runner's graph on the device (runnerCSR): the CSR uploaded from the
// host, adopted from the copy BuildCSRResident left, or borrowed from a
// kept copy (kept.go); the arcs' sources for the edge kernel; and, for the
// batched kernel under a cutoff, the arcs in rising weight its cutoff
// rounds read.

import (
	"errors"
	"sync"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// runnerCSR is the graph a runner's kernels read on the device.
type runnerCSR struct {
	offsets, targets, weights, arcSources devBuf
	// adopt is the device copy of the graph that BuildCSRResident left,
	// taken by upload instead of uploading, or nil.
	adopt *deviceCSR
	// lent is the kept copy of the graph (kept.go) the runner borrows
	// instead of uploading it, or nil; release gives it back.
	lent *keptCSR
	// byWeight are the arcs the batched kernel's cutoff rounds walk
	// (batchedcut.go).
	byWeight arcsByWeight
}

// arcsByWeight is the device copy of the arcs of the graph the batched
// kernel walks (plan.Graph.ArcsByWeight of the runner's plan graph: every
// vertex's arcs in rising weight), which the cutoff rounds read instead of
// the CSR's targets and weights; from is the plan graph it was made from.
// The offsets are the CSR's. The other kernels (derivations, predecessors)
// index arcs in the CSR's own order and read the CSR's weights.
type arcsByWeight struct {
	targets, weights devBuf
	from             *plan.Graph
}

// upload puts g on dv for the kernels of alg (on the device goroutine):
// the kept copy lent, else the one adopted, else copied from the host;
// the weights unless alg counts hops, and the arcs' sources for the edge
// kernel.
func (c *runnerCSR) upload(dv *device, g *graph.CSR, alg graph.Algorithm) error {
	var err error
	if k := c.lent; k != nil {
		c.lend(k, alg)
	} else if dc := c.adopt; dc != nil {
		c.adopt = nil
		c.offsets, c.targets, c.weights = dc.offsets, dc.targets, dc.weights
		if alg.CountsHops() {
			if err := dv.free(&c.weights); err != nil {
				return err
			}
		}
	} else {
		if c.offsets, err = dv.upload(asBytes(g.Offsets)); err != nil {
			return err
		}
		if c.targets, err = dv.upload(asBytes(g.Targets)); err != nil {
			return err
		}
	}
	if !alg.CountsHops() && c.weights.ptr == 0 {
		w, err := sliceBytes(g.Weights)
		if err != nil {
			return err
		}
		if c.weights, err = dv.upload(w); err != nil {
			return err
		}
	}
	if alg == graph.Edge {
		src := make([]int32, g.NumEdges())
		for u := 0; u < g.NumVertices; u++ {
			for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
				src[k] = int32(u)
			}
		}
		if c.arcSources, err = dv.upload(asBytes(src)); err != nil {
			return err
		}
	}
	return nil
}

// lend points the graph buffers at k's (on the device goroutine). A
// runner that counts hops reads no weights.
func (c *runnerCSR) lend(k *keptCSR, alg graph.Algorithm) {
	c.offsets, c.targets = k.dc.offsets, k.dc.targets
	if !alg.CountsHops() {
		c.weights = k.dc.weights
	}
}

// giveBack clears the views of the borrowed copy, so that release frees
// only what the runner owns, and frees the copy on dv when it was dropped
// and this runner was its last user, its count guarded by mu (its
// engine's graphCopies'; on the device goroutine).
func (c *runnerCSR) giveBack(dv *device, mu *sync.Mutex) error {
	k := c.lent
	if k == nil {
		return nil
	}
	c.lent = nil
	c.offsets, c.targets = devBuf{}, devBuf{}
	if c.weights.ptr == k.dc.weights.ptr {
		c.weights = devBuf{}
	}
	mu.Lock()
	k.users--
	free := k.dropped && k.users == 0
	mu.Unlock()
	if !free {
		return nil
	}
	return k.dc.free(dv)
}

// release gives the borrowed copy back and frees the rest (on the device
// goroutine).
func (c *runnerCSR) release(dv *device, mu *sync.Mutex) error {
	errs := []error{c.giveBack(dv, mu)}
	for _, b := range []*devBuf{&c.offsets, &c.targets, &c.weights, &c.arcSources} {
		errs = append(errs, dv.free(b))
	}
	errs = append(errs, c.releaseArcsByWeight(dv))
	return errors.Join(errs...)
}

// uploadArcsByWeight sorts the arcs of pg and uploads them as c.byWeight
// where the batched kernels stop at a cutoff (cuts, batchedKernel.cuts)
// and they are not there yet, or again where pg changed since (on the
// device goroutine); else it does nothing. The copy costs
// m · (4 + the distance's size) bytes of device memory.
func (c *runnerCSR) uploadArcsByWeight(dv *device, cuts bool, pg *plan.Graph) error {
	if !cuts || c.byWeight.from == pg {
		return nil
	}
	if err := c.releaseArcsByWeight(dv); err != nil {
		return err
	}
	targets, weights := pg.ArcsByWeight()
	w, err := sliceBytes(weights)
	if err != nil {
		return err
	}
	if c.byWeight.targets, err = dv.upload(asBytes(targets)); err != nil {
		return err
	}
	if c.byWeight.weights, err = dv.upload(w); err != nil {
		return err
	}
	c.byWeight.from = pg
	return nil
}

// releaseArcsByWeight frees c.byWeight (on the device goroutine).
func (c *runnerCSR) releaseArcsByWeight(dv *device) error {
	c.byWeight.from = nil
	return errors.Join(dv.free(&c.byWeight.targets), dv.free(&c.byWeight.weights))
}

// roundArcs are the device arrays of arc targets and weights the round
// kernels read: c.byWeight's under a cutoff in the kernel (cuts), else the
// CSR's.
func (c *runnerCSR) roundArcs(cuts bool) (targets, weights uint64) {
	if cuts {
		return c.byWeight.targets.ptr, c.byWeight.weights.ptr
	}
	return c.targets.ptr, c.weights.ptr
}
