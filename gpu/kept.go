package gpu

// Kept CSRs: a graph's device copy that outlives its runners, for a server
// that answers many queries on one graph (the Flight service). KeepCSR
// uploads a CSR once, or BuildKeptCSR builds it on the device (csr.go),
// and every later Prepare of that *graph.CSR borrows the copy instead of
// uploading the graph again; DropCSR frees it once the runners borrowing
// it have closed, and Close frees what is left. The copy a kept CSR holds
// is laid out as a runner's own (deviceCSR), so a runner reads it through
// the same buffers, and only its release differs: a borrowed buffer is
// given back, not freed.
//
// BuildCSRResident (csr.go) is the one-shot form for `pathctl run`: its
// copy goes to the first Prepare, which owns and frees it.
//
// An engine holds the copies of both kinds, with the plans made ahead for
// its next Prepares (ahead.go), in a graphCopies of its own: the maps,
// their lock, and closing them with the engine.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// keptCSR is a CSR kept on the device, lent to the runners of its graph.
// users and dropped are guarded by the mutex of the engine's graphCopies.
type keptCSR struct {
	dc    deviceCSR
	bytes int64
	// plan is what the batched kernel's plans read of the graph (its
	// shape and breadth-first rank), measured once for every runner
	// borrowing the copy instead of once per runner.
	plan *plan.Graph
	// users counts the runners borrowing dc now.
	users int
	// dropped says that DropCSR let go of it: the last runner to give it
	// back frees it.
	dropped bool
}

// KeepCSR copies g to the device and keeps it there: every later Prepare
// of g borrows the copy instead of uploading the graph (GraphUploads counts
// this copy, once). It returns the device bytes the copy holds. Keeping a
// CSR kept already copies nothing and returns its bytes. The copy stays
// until DropCSR or Close; g must not change meanwhile.
func (e *Engine) KeepCSR(ctx context.Context, g *graph.CSR) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if b, ok, err := e.graphs.keptBytes(g); ok || err != nil {
		return b, err
	}
	if g.NumVertices < 0 || len(g.Offsets) != g.NumVertices+1 {
		return 0, fmt.Errorf("gpu: CSR has %d offsets for %d vertices", len(g.Offsets), g.NumVertices)
	}
	w, err := sliceBytes(g.Weights)
	if err != nil && len(g.Targets) > 0 {
		return 0, err
	}
	k := &keptCSR{}
	err = e.dev.do(func() error {
		var err error
		if k.dc.offsets, err = e.dev.upload(asBytes(g.Offsets)); err != nil {
			return errors.Join(err, k.dc.free(e.dev))
		}
		if k.dc.targets, err = e.dev.upload(asBytes(g.Targets)); err != nil {
			return errors.Join(err, k.dc.free(e.dev))
		}
		if k.dc.weights, err = e.dev.upload(w); err != nil {
			return errors.Join(err, k.dc.free(e.dev))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	e.graphUploads.Add(1)
	return e.graphs.addKept(e.dev, g, k)
}

// BuildKeptCSR builds the CSR of edges on the device as BuildCSR does and
// keeps the device copy as KeepCSR would (nothing is uploaded from the
// host CSR it returns). It returns the CSR and the device bytes kept.
func (e *Engine) BuildKeptCSR(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, int64, error) {
	g, dc, err := e.buildCSR(ctx, edges, opt)
	if err != nil {
		return nil, 0, err
	}
	b, err := e.graphs.addKept(e.dev, g, &keptCSR{dc: *dc})
	if err != nil {
		return nil, 0, err
	}
	return g, b, nil
}

// DropCSR lets go of g's kept copy: it is freed now, or by the last runner
// borrowing it when that runner closes. Later Prepares of g upload it. A
// CSR not kept is no error.
func (e *Engine) DropCSR(g *graph.CSR) error {
	k, free := e.graphs.dropKept(g)
	if !free {
		return nil
	}
	return e.dev.do(func() error { return k.dc.free(e.dev) })
}

// KeptBytes is the device memory of the kept CSRs not yet dropped.
func (e *Engine) KeptBytes() int64 { return e.graphs.keptTotal() }

// IsKept reports whether g has a kept copy not yet dropped.
func (e *Engine) IsKept(g *graph.CSR) bool {
	_, ok, _ := e.graphs.keptBytes(g)
	return ok
}

// graphCopies are the graphs an engine holds on its device beside its
// runners, and what it holds for their next Prepare: the copies
// BuildCSRResident and PrepareFrom left for the next Prepare of their CSR
// to adopt (resident), the kept copies lent to every Prepare of theirs
// (kept), and the batched kernel's plans made before the engine opened
// (ahead, AdoptPlan), until a Prepare of their CSR takes them. mu guards
// them, and the users and dropped of every kept copy; once closed (the
// engine's Close took them), nothing more is held.
type graphCopies struct {
	mu       sync.Mutex
	closed   bool
	resident map[*graph.CSR]*deviceCSR
	kept     map[*graph.CSR]*keptCSR
	ahead    map[*graph.CSR]*HostPlan
}

// putResident holds dc, g's copy on the device, for the next Prepare of g,
// and reports errClosed, holding nothing, once closed.
func (c *graphCopies) putResident(g *graph.CSR, dc *deviceCSR) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	if c.resident == nil {
		c.resident = map[*graph.CSR]*deviceCSR{}
	}
	c.resident[g] = dc
	return nil
}

// takeResident removes and returns the device copy held for g, or nil.
func (c *graphCopies) takeResident(g *graph.CSR) *deviceCSR {
	c.mu.Lock()
	defer c.mu.Unlock()
	dc := c.resident[g]
	delete(c.resident, g)
	return dc
}

// peekResident returns the device copy held for g, or nil, leaving it held.
func (c *graphCopies) peekResident(g *graph.CSR) *deviceCSR {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resident[g]
}

// keptBytes returns the bytes of g's kept copy and whether there is one;
// errClosed once closed.
func (c *graphCopies) keptBytes(g *graph.CSR) (int64, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, false, errClosed
	}
	if k, ok := c.kept[g]; ok {
		return k.bytes, true, nil
	}
	return 0, false, nil
}

// addKept records k, on dv, as the kept copy of g, unless closed or
// another call kept g meanwhile: then k is freed and the other copy's
// bytes are returned.
func (c *graphCopies) addKept(dv *device, g *graph.CSR, k *keptCSR) (int64, error) {
	k.bytes = k.dc.offsets.size + k.dc.targets.size + k.dc.weights.size
	k.plan = plan.NewGraph(g)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, errors.Join(errClosed, dv.do(func() error { return k.dc.free(dv) }))
	}
	if other, ok := c.kept[g]; ok {
		c.mu.Unlock()
		return other.bytes, dv.do(func() error { return k.dc.free(dv) })
	}
	if c.kept == nil {
		c.kept = map[*graph.CSR]*keptCSR{}
	}
	c.kept[g] = k
	c.mu.Unlock()
	return k.bytes, nil
}

// dropKept forgets g's kept copy, if any, and reports whether it is to be
// freed now: no runner borrows it (else the last one frees it,
// runnerCSR.giveBack).
func (c *graphCopies) dropKept(g *graph.CSR) (*keptCSR, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kept[g]
	if !ok {
		return nil, false
	}
	delete(c.kept, g)
	k.dropped = true
	return k, k.users == 0
}

// keptTotal is the device memory of the kept copies not yet dropped.
func (c *graphCopies) keptTotal() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b int64
	for _, k := range c.kept {
		b += k.bytes
	}
	return b
}

// borrowKept lends g's kept copy to a runner being prepared, or returns
// nil when g is not kept.
func (c *graphCopies) borrowKept(g *graph.CSR) *keptCSR {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kept[g]
	if !ok {
		return nil
	}
	k.users++
	return k
}

// putAhead holds p for the next Prepare of its CSR, in place of an
// earlier plan for it.
func (c *graphCopies) putAhead(p *HostPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ahead == nil {
		c.ahead = map[*graph.CSR]*HostPlan{}
	}
	c.ahead[p.csr] = p
}

// takeAhead hands over the plan made ahead for g, if any, and forgets it.
func (c *graphCopies) takeAhead(g *graph.CSR) *HostPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.ahead[g]
	delete(c.ahead, g)
	return p
}

// close ends the holding, at the engine's Close, and frees on dv every
// copy held, once the runners closed (on the caller's goroutine).
func (c *graphCopies) close(dv *device) error {
	c.mu.Lock()
	c.closed = true
	resident, kept := c.resident, c.kept
	c.resident, c.kept, c.ahead = nil, nil, nil
	c.mu.Unlock()
	var errs []error
	for _, dc := range resident {
		errs = append(errs, dv.do(func() error { return dc.free(dv) }))
	}
	for _, k := range kept {
		errs = append(errs, dv.do(func() error { return k.dc.free(dv) }))
	}
	return errors.Join(errs...)
}
