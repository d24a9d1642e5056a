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

import (
	"context"
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// keptCSR is a CSR kept on the device, lent to the runners of its graph.
// users and dropped are guarded by the engine's mutex.
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
	if b, ok, err := e.keptBytes(g); ok || err != nil {
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
	return e.addKept(g, k)
}

// BuildKeptCSR builds the CSR of edges on the device as BuildCSR does and
// keeps the device copy as KeepCSR would (nothing is uploaded from the
// host CSR it returns). It returns the CSR and the device bytes kept.
func (e *Engine) BuildKeptCSR(ctx context.Context, edges *graph.Edges, opt graph.BuildOptions) (*graph.CSR, int64, error) {
	g, dc, err := e.buildCSR(ctx, edges, opt)
	if err != nil {
		return nil, 0, err
	}
	b, err := e.addKept(g, &keptCSR{dc: *dc})
	if err != nil {
		return nil, 0, err
	}
	return g, b, nil
}

// keptBytes returns the bytes of g's kept copy and whether there is one.
func (e *Engine) keptBytes(g *graph.CSR) (int64, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return 0, false, errClosed
	}
	if k, ok := e.kept[g]; ok {
		return k.bytes, true, nil
	}
	return 0, false, nil
}

// addKept records k as the kept copy of g, unless the engine closed or
// another call kept g meanwhile: then k is freed and the other copy's
// bytes are returned.
func (e *Engine) addKept(g *graph.CSR, k *keptCSR) (int64, error) {
	k.bytes = k.dc.offsets.size + k.dc.targets.size + k.dc.weights.size
	k.plan = plan.NewGraph(g)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return 0, errors.Join(errClosed, e.dev.do(func() error { return k.dc.free(e.dev) }))
	}
	if other, ok := e.kept[g]; ok {
		e.mu.Unlock()
		return other.bytes, e.dev.do(func() error { return k.dc.free(e.dev) })
	}
	if e.kept == nil {
		e.kept = map[*graph.CSR]*keptCSR{}
	}
	e.kept[g] = k
	e.mu.Unlock()
	return k.bytes, nil
}

// DropCSR lets go of g's kept copy: it is freed now, or by the last runner
// borrowing it when that runner closes. Later Prepares of g upload it. A
// CSR not kept is no error.
func (e *Engine) DropCSR(g *graph.CSR) error {
	e.mu.Lock()
	k, ok := e.kept[g]
	if !ok {
		e.mu.Unlock()
		return nil
	}
	delete(e.kept, g)
	k.dropped = true
	free := k.users == 0
	e.mu.Unlock()
	if !free {
		return nil
	}
	return e.dev.do(func() error { return k.dc.free(e.dev) })
}

// KeptBytes is the device memory of the kept CSRs not yet dropped.
func (e *Engine) KeptBytes() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b int64
	for _, k := range e.kept {
		b += k.bytes
	}
	return b
}

// borrowKept lends g's kept copy to a runner being prepared, or returns
// nil when g is not kept.
func (e *Engine) borrowKept(g *graph.CSR) *keptCSR {
	e.mu.Lock()
	defer e.mu.Unlock()
	k, ok := e.kept[g]
	if !ok {
		return nil
	}
	k.users++
	return k
}

// freeKept frees every kept copy at Close, after the runners closed (on
// the caller's goroutine).
func (e *Engine) freeKept(kept map[*graph.CSR]*keptCSR) error {
	var errs []error
	for _, k := range kept {
		errs = append(errs, e.dev.do(func() error { return k.dc.free(e.dev) }))
	}
	return errors.Join(errs...)
}

// IsKept reports whether g has a kept copy not yet dropped.
func (e *Engine) IsKept(g *graph.CSR) bool {
	_, ok, _ := e.keptBytes(g)
	return ok
}
