package pipeline

// A Graph keeps the contraction hierarchy of its CSR once a run of ch
// (asked for, or picked by auto) has built it, so that later runs on the
// same *Graph (a server's queries, a resident engine's runs) take it
// instead of building it again: one hierarchy serves both directions, a
// reverse run taking its Reverse (the hierarchy of the transposed graph,
// sharing the arrays). The first run that needs it builds it, under its
// own context; runs of ch that come meanwhile wait for that build, runs of
// auto do not wait but run the search kernels. A build that fails for the
// graph (too many shortcuts, inexact sums) is remembered, so that auto
// does not try it again on every run; one stopped by its context is not.
// The kept hierarchy costs about 4 times the CSR's bytes (int32 weights on
// road-like grids; hierarchy.Hierarchy.Bytes) for as long as the Graph
// lives. An explicit Options.Index wins over it and leaves it alone.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/hierarchy"
)

// keptHierarchy is a Graph's contraction hierarchy, built once.
type keptHierarchy struct {
	mu sync.Mutex
	h  *hierarchy.Hierarchy
	// err is why the build failed for the graph, remembered; nil while
	// none failed, and after a build stopped by its context.
	err error
	// building is closed when the build under way ends; nil when none is.
	building chan struct{}
	// builds counts the builds begun (tests).
	builds int
}

// hierarchyState is what autoCH knows of a graph's hierarchy.
type hierarchyState struct {
	ready, building bool
	failed          error
}

// errHierarchyBuilding is what a caller that does not wait hears while
// another builds the hierarchy.
var errHierarchyBuilding = errors.New("pipeline: the graph's contraction hierarchy is still being built")

func (k *keptHierarchy) state() hierarchyState {
	k.mu.Lock()
	defer k.mu.Unlock()
	return hierarchyState{ready: k.h != nil, building: k.building != nil, failed: k.err}
}

// get returns the kept hierarchy, or the remembered failure. Otherwise,
// where a build is under way, it waits for it (wait; ctx ends the wait,
// not the build) or returns errHierarchyBuilding; and where none is, it
// builds one with build under ctx, once for every caller.
func (k *keptHierarchy) get(ctx context.Context, wait bool, build func(context.Context) (*hierarchy.Hierarchy, error)) (*hierarchy.Hierarchy, error) {
	for {
		k.mu.Lock()
		if h, err := k.h, k.err; h != nil || err != nil {
			k.mu.Unlock()
			return h, err
		}
		done := k.building
		if done == nil {
			break // k.mu held: this caller builds
		}
		k.mu.Unlock()
		if !wait {
			return nil, errHierarchyBuilding
		}
		select {
		case <-done: // built, failed, or stopped by its builder's context: look again
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	done := make(chan struct{})
	k.building = done
	k.builds++
	k.mu.Unlock()
	var h *hierarchy.Hierarchy
	var err error
	defer func() {
		k.mu.Lock()
		k.building = nil
		switch {
		case k.h != nil: // kept meanwhile (keep): that one stays
		case err == nil && h != nil:
			k.h = h
		case err != nil && !IsInterrupted(err):
			k.err = err
		}
		k.mu.Unlock()
		close(done)
	}()
	h, err = build(ctx)
	return h, err
}

// keep adopts h unless a hierarchy is kept already, and forgets a
// remembered failure.
func (k *keptHierarchy) keep(h *hierarchy.Hierarchy) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.h == nil {
		k.h, k.err = h, nil
	}
}

// hierarchyFor returns the hierarchy of g's CSR for a run of opt: the one
// g keeps, or one built now (on opt.Threads) and kept. A run of auto does
// not wait for a build under way (errHierarchyBuilding).
func (g *Graph) hierarchyFor(ctx context.Context, opt Options) (*hierarchy.Hierarchy, error) {
	return g.ch.get(ctx, opt.Algorithm != Auto, func(ctx context.Context) (*hierarchy.Hierarchy, error) {
		return cpu.BuildHierarchy(ctx, g.CSR, opt.Threads)
	})
}

// BuildHierarchy returns the contraction hierarchy g keeps for its runs of
// ch, building it on threads goroutines (0: every core) under ctx where
// none is kept, or waiting for the build under way (ctx ends the wait,
// not that build). A build that fails for the graph fails again at once,
// with the same error (cpu.BuildHierarchy's); one that ctx stopped is
// tried again by the next call. The hierarchy costs about 4 times the
// CSR's bytes while g lives (hierarchy.Hierarchy.Bytes).
func (g *Graph) BuildHierarchy(ctx context.Context, threads int) (*hierarchy.Hierarchy, error) {
	return g.ch.get(ctx, true, func(ctx context.Context) (*hierarchy.Hierarchy, error) {
		return cpu.BuildHierarchy(ctx, g.CSR, threads)
	})
}

// KeepHierarchy makes h the hierarchy of g's runs of ch, unless g keeps
// one already: h must be the forward hierarchy of g's CSR, as
// hierarchy.Read returns it for g.CSR (which checks the graph's identity)
// or hierarchy.Build builds it. A hierarchy of another vertex count is an
// ErrInvalid.
func (g *Graph) KeepHierarchy(h *hierarchy.Hierarchy) error {
	if h == nil || h.NumVertices() != g.CSR.NumVertices {
		return fmt.Errorf("%w: a hierarchy for a graph of %d vertices", ErrInvalid, g.CSR.NumVertices)
	}
	g.ch.keep(h)
	return nil
}

// KeptHierarchy returns the hierarchy g keeps, nil where none is (not yet
// built, or still building), and the remembered failure of its build if
// it failed. It does not wait.
func (g *Graph) KeptHierarchy() (*hierarchy.Hierarchy, error) {
	g.ch.mu.Lock()
	defer g.ch.mu.Unlock()
	return g.ch.h, g.ch.err
}

// HierarchyPays reports whether a run of auto on the CPU engine from every
// vertex of g, without targets, would build a contraction hierarchy
// (autoCH's rule: non-negative weights whose sums the hierarchy holds
// exactly, a road-like graph, and vertices enough to repay the build),
// and says what it found.
func (g *Graph) HierarchyPays() (bool, string) {
	if g.CSR.HasNegative() {
		return false, "negative weights"
	}
	return chPays(g.CSR, 0, g.CSR.NumVertices)
}
