package pipeline

// The ch algorithm (a contraction hierarchy, package hierarchy) runs on
// the CPU engine only so far: normalize routes it there, refuses what it
// cannot answer with one line each, and prepare hands the engine the
// hierarchy of an index file (Resources.Index), or the one the graph keeps
// (built by the first run that needs it: chkept.go), instead of letting
// the engine build one. autoCH makes auto run ch on the CPU engine where
// it pays.

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// routeCH checks a request on g of --algo ch (or of auto with an index,
// which becomes ch) and puts it on the CPU engine; it leaves other
// requests as they are.
func routeCH(g *Graph, opt Options) (Options, error) {
	if opt.Index != nil && opt.Algorithm == graph.Auto {
		opt.Algorithm = graph.CH
	}
	if opt.Algorithm != graph.CH {
		if opt.Index != nil {
			return opt, fmt.Errorf("%w: an index serves the algorithm ch only, not %s", ErrInvalid, opt.Algorithm)
		}
		return opt, nil
	}
	if err := RouteCH(&opt); err != nil {
		return opt, err
	}
	if err := checkCHOnGPU(g, opt); err != nil { // chgpu.go
		return opt, err
	}
	if opt.Index != nil && opt.Index.NumVertices() != g.CSR.NumVertices {
		return opt, fmt.Errorf("%w: an index of %d vertices for a graph of %d", ErrInvalid, opt.Index.NumVertices(), g.CSR.NumVertices)
	}
	if t := g.CSR.Type; opt.Index == nil && (t == graph.DistFloat32 || t == graph.DistFloat64) && !hierarchy.Exact(g.CSR) && !g.CSR.HasNegative() {
		return opt, fmt.Errorf("%w: the algorithm ch is exact only for integer weights and float weights whose path sums float64 holds; "+
			"these float weights' sums round: use --algo dijkstra", ErrInvalid)
	}
	return opt, nil
}

// RouteCH puts a request of the algorithm ch on the CPU engine (from
// auto, said on opt.Log) and refuses what ch cannot answer whatever the
// graph: the GPU engine, predecessors, and paths without targets. Front ends call it
// before loading the graph, so that no GPU is opened for such a run;
// every run of ch passes through it.
func RouteCH(opt *Options) error {
	switch opt.Engine {
	case "gpu": // for int32 distances without paths (checkCHOnGPU, chgpu.go)
	case "auto", "":
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "pathctl: the algorithm ch runs on the CPU engine\n")
		}
		opt.Engine = "cpu"
	}
	if opt.WithPredecessors {
		return fmt.Errorf("%w: the algorithm ch keeps no predecessors, so no predecessor column; use --algo dijkstra", ErrInvalid)
	}
	if opt.WithPaths && len(opt.Targets) == 0 {
		return fmt.Errorf("%w: the algorithm ch gives paths to --targets only (one query per target); use --algo dijkstra for paths to every vertex", ErrInvalid)
	}
	return nil
}

// prepare prepares the run's runner on eng, a run of g. For ch it gives
// the CPU or GPU engine the index's hierarchy, else the one g keeps, built now
// where g keeps none (its Reverse for a reversed run, whose graph is the
// transposed one), and makes a graph the hierarchy refuses an invalid
// request. A run that auto made ch runs the search kernels after all where
// the build gave up, or is under way for another run.
func prepare(ctx context.Context, g *Graph, eng graph.Engine, csr *graph.CSR, req graph.Request, opt Options) (graph.Runner, error) {
	if req.Algorithm != graph.CH {
		return eng.Prepare(ctx, csr, req)
	}
	onGPU, isGPU := eng.(chPreparer) // the GPU engine (chgpu.go)
	if eng.Name() != "cpu" && !isGPU {
		return nil, fmt.Errorf("%w: the algorithm ch runs on the CPU and GPU engines, not on %s", ErrInvalid, eng.Name())
	}
	h := opt.Index
	if h == nil {
		var err error
		h, err = g.hierarchyFor(ctx, opt)
		switch {
		case err == nil:
		case opt.Algorithm == graph.Auto && (errors.Is(err, hierarchy.ErrTooManyShortcuts) || errors.Is(err, errHierarchyBuilding)):
			// auto picked ch (autoCH) for a graph that looked road-like
			// but has no hierarchy, or whose hierarchy another run is
			// building: the search kernels after all.
			fmt.Fprintf(opt.Log, "pathctl: auto: the search kernels after all: %v\n", err)
			req.Algorithm = graph.Auto
			return eng.Prepare(ctx, csr, req)
		case errors.Is(err, hierarchy.ErrInexact) || errors.Is(err, hierarchy.ErrTooManyShortcuts):
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		default:
			return nil, err
		}
	}
	if opt.Reverse {
		h = h.Reverse()
	}
	if isGPU {
		return onGPU.PrepareCH(ctx, csr, req, h)
	}
	return cpu.New(cpu.WithThreads(opt.Threads), cpu.WithHierarchy(h)).Prepare(ctx, csr, req)
}

// auto picks ch on the CPU engine where the hierarchy pays for its build
// within the run (autoCH). The constants were measured on a 256² grid
// (pathctl gen grid, 2-core machine, BenchmarkHierarchy): the build costs
// about as much CPU as 440 searches of the CPU engine's auto; a PHAST row
// is 2.8 times cheaper than a search, a row of targets' columns from the
// buckets 11 times.
const (
	chBuildSearches = 440
	chSweepSpeedup  = 2.8
	chBucketSpeedup = 11
	// chPayback is the margin on the break-even point: ch is picked
	// from twice the sources that would just repay the build.
	chPayback = 2
	// A road-like graph, for the probe: few arcs per vertex, and a
	// breadth-first search from vertex 0 that reaches at least half the
	// vertices and is at least sqrt(n)/4 levels deep (grids and road
	// networks; R-MAT and social graphs are a few levels deep).
	chMaxMeanDegree = 8
	chMaxDegree     = 16
)

// autoCH returns the algorithm a run of auto prepares on eng: ch where
// the CPU or GPU engine runs it, the request allows it, and the graph keeps a
// hierarchy (kept), or has none in question yet but looks road-like and
// the run has sources enough to repay the build (chPays); otherwise req's.
// It says its choice and the reason on opt.Log when ch was in question. A
// build that gives up after all, or that another run has under way, falls
// back to the search kernels (prepare).
func autoCH(kept hierarchyState, eng graph.Engine, csr *graph.CSR, opt Options, req graph.Request, sources int) graph.Algorithm {
	if req.Algorithm != graph.Auto || opt.Index != nil {
		return req.Algorithm
	}
	onGPU := runsCHOnGPU(eng, csr) // chgpu.go
	if (eng.Name() != "cpu" && !onGPU) || opt.WithPredecessors || opt.WithPaths || opt.K > 0 || opt.HasCutoff ||
		opt.Layout == arrowio.LayoutNearest || opt.Layout == arrowio.LayoutBetweenness || csr.HasNegative() {
		return req.Algorithm // searches that stop early, or what ch does not answer
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(opt.Log, "pathctl: auto: "+format+"\n", args...)
	}
	switch {
	case kept.ready:
		say("ch, the contraction hierarchy the graph keeps (built before: any number of sources repays it)")
		return graph.CH
	case kept.failed != nil:
		say("the search kernels, not ch: the graph's hierarchy failed before (%v)", kept.failed)
		return req.Algorithm
	}
	pays, why := chPays(csr, len(req.Targets), sources)
	if onGPU {
		pays, why = gpuCHPays(csr, sources)
	}
	switch {
	case !pays:
		say("the search kernels, not ch: %s", why)
		return req.Algorithm
	case kept.building:
		say("the search kernels, not ch: the graph's hierarchy is still being built (%s)", why)
		return req.Algorithm
	}
	say("ch, a contraction hierarchy built for the run and kept with the graph (%s)", why)
	return graph.CH
}

// chPays reports whether building a hierarchy of csr pays within a run of
// sources rows of targets columns (0: every vertex): csr looks road-like,
// the sources repay the build, and its weights' sums are exact. It says
// why, for the log.
func chPays(csr *graph.CSR, targets, sources int) (bool, string) {
	road, probe := roadLike(csr)
	if !road {
		return false, fmt.Sprintf("the graph does not look road-like (%s)", probe)
	}
	speedup, rows := float64(chSweepSpeedup), "PHAST rows"
	if targets > 0 && targets <= csr.NumVertices/16 {
		speedup, rows = chBucketSpeedup, "rows of the targets' buckets"
	}
	need := int(math.Ceil(chPayback * chBuildSearches / (1 - 1/speedup)))
	if sources < need {
		return false, fmt.Sprintf("%d sources do not repay the hierarchy's build (%s, from %d sources)", sources, probe, need)
	}
	if !hierarchy.Exact(csr) {
		return false, fmt.Sprintf("the float weights' sums round (%s)", probe)
	}
	return true, fmt.Sprintf("%s; %d sources repay the build with %s from %d", probe, sources, rows, need)
}

// roadLike probes csr in O(n + m): its degrees and the depth of a
// breadth-first search from vertex 0. It reports whether they look like a
// road network's and says what it found.
func roadLike(csr *graph.CSR) (bool, string) {
	n := csr.NumVertices
	if n == 0 {
		return false, "no vertices"
	}
	maxDegree := 0
	for u := range n {
		maxDegree = max(maxDegree, csr.OutDegree(graph.VertexID(u)))
	}
	mean := float64(csr.NumEdges()) / float64(n)
	if mean > chMaxMeanDegree || maxDegree > chMaxDegree {
		return false, fmt.Sprintf("%.1f arcs per vertex, at most %d", mean, maxDegree)
	}
	depth, reached := bfsDepth(csr, 0)
	found := fmt.Sprintf("%.1f arcs per vertex, at most %d; a search from vertex 0 reaches %d vertices in %d levels", mean, maxDegree, reached, depth)
	return 2*reached >= n && float64(depth) >= math.Sqrt(float64(n))/4, found
}

// bfsDepth is the number of levels of a breadth-first search from s and
// the vertices it reaches.
func bfsDepth(csr *graph.CSR, s graph.VertexID) (depth, reached int) {
	level := make([]int32, csr.NumVertices)
	for i := range level {
		level[i] = -1
	}
	queue := make([]graph.VertexID, 1, csr.NumVertices)
	queue[0], level[s] = s, 0
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for k := csr.Offsets[u]; k < csr.Offsets[u+1]; k++ {
			if v := csr.Targets[k]; level[v] < 0 {
				level[v] = level[u] + 1
				depth = max(depth, int(level[v]))
				queue = append(queue, v)
			}
		}
	}
	return depth, len(queue)
}
