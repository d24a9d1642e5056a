package pipeline

// The device opened early, beside the read (gpu/devices' Opening, as a
// graph.GPUOpening in LoadOptions.Device): the rule of when a run opens
// it, and the CSR built on the CPU, with the GPU kernel's plan, while
// LoadGraph waits for what is left of the open.

import (
	"fmt"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// minEarlyOpenBytes is the smallest input on which auto, asked for every
// source, opens the device before it knows the vertex count: below it the
// read is too short for the open to hide behind, and the graph may well
// have fewer than minGPUSources vertices, which auto runs on the CPU.
// Where the size is unknown (standard input) the device is opened early.
const minEarlyOpenBytes = 256 << 10

// OpensEarly reports whether a graph loaded with opt, from an edge input
// of inputBytes bytes (-1 where unknown), may be built on the GPU, so that
// opening the device before the read is worth it: engine "gpu"; engine
// "auto" for minGPUSources sources or more; and auto for every source
// (opt.Sources 0), which depends on the vertex count not yet read, when
// the input is at least minEarlyOpenBytes. It is LoadGraph's rule (which
// opens the device where auto's sources reach minGPUSources) with the
// vertex count guessed from the input's size. On a machine without a GPU
// an early open fails within milliseconds (no driver library, or no
// device), and LoadGraph treats that failure as it treats its own.
func OpensEarly(opt LoadOptions, inputBytes int64) bool {
	switch opt.Engine {
	case "gpu":
		return true
	case "auto":
		if opt.Sources > 0 {
			return opt.Sources >= minGPUSources
		}
		return inputBytes < 0 || inputBytes >= minEarlyOpenBytes
	}
	return false
}

// maxRowsBesideOpening bounds the edge rows of a build beside the opening:
// where the GPU's build wins, the CPU's goes on aside until it ends, with a
// second CSR's memory (8 million rows: about a second of one core and 150
// MB).
const maxRowsBesideOpening = 8 << 20

// besideBuild is a CSR built on the CPU beside the opening, with the GPU
// kernel's plan begun after it (plansAhead), or nil.
type besideBuild struct {
	csr   *graph.CSR
	took  time.Duration
	err   error
	ahead graph.HostPlan
}

// plansAhead reports whether a graph loaded with opt has the plan of the
// batched kernel's block of every source (gpu.PlanAhead: the graph's
// shape and breadth-first rank, the leaves and minimums derived after the
// kernel, the phases, the groups' order, the seeds) made on the CPU once
// the CSR built beside the opening is done, while the device is still
// opening: the run then takes it instead of planning on its path (20-35
// ms for R-MAT 16 on an H100; a small run took 391-393 ms to its output
// closed against 423-445 ms, docs/benchmarks-history.md "Issue 18 (stats, every
// source)"). Only where the runs are auto over every vertex, and the
// graph has no negative weight (auto then runs the batched kernel); a run
// whose first device block is not every vertex, or that stops at a
// cutoff, plans its own and keeps only the graph's shape and rank.
// opt.planOwn (tests) has every run plan its own.
func plansAhead(opt LoadOptions) bool {
	return opt.Sources == 0 && (opt.Algorithm == "" || opt.Algorithm == graph.Auto) && !opt.planOwn
}

// startBuildBesideOpening starts building g's CSR on the CPU where early is
// still opening, and returns where the build will be delivered; nil where
// it starts none. The CPU is idle while LoadGraph waits for the open: on
// an H100 the open of about 220 ms outlasts the read of R-MAT 16, 65 ms,
// by about 150 ms, and the CSR's build on the GPU after it took 36 ms.
// The build that is ready first is taken (finishBuildBesideOpening): the
// CPU's where it ended before the open did (Prepare then uploads it, a
// few ms), else the GPU's, the CPU's being dropped, so that a load never
// waits longer than without it. With plan, the GPU kernel's plan of
// every vertex (of the graph's shape and rank alone, past
// maxVerticesPlannedAhead) begins once the CSR is built, on a graph
// without negative weights while the opening has not failed
// (plansAhead), under tune (LoadOptions.Tune), and comes with it.
func startBuildBesideOpening(g *Graph, early graph.GPUOpening, bopt graph.BuildOptions, plan bool, tune string) <-chan besideBuild {
	if early == nil || len(g.Table.Edges.Src) > maxRowsBesideOpening || !early.Pending() {
		return nil
	}
	out := make(chan besideBuild, 1) // the build never waits for a reader
	go func() {
		start := time.Now()
		csr, err := graph.Build(&g.Table.Edges, bopt)
		b := besideBuild{csr: csr, took: time.Since(start), err: err}
		if err == nil && plan && !csr.HasNegative() && csr.NumVertices >= minGPUSources && !early.Failed() {
			var sources []graph.VertexID // the graph's shape and rank alone
			if csr.NumVertices <= maxVerticesPlannedAhead {
				sources = everyVertex(csr.NumVertices)
			}
			b.ahead = gpuDriver.PlanAhead(csr, sources, tune)
		}
		out <- b
	}()
	return out
}

// maxVerticesPlannedAhead bounds the graphs whose block of every source is
// planned beside the opening: the stats layout holds 12 bytes per source
// and vertex on the device (two result rows and the working distances, of
// int32), so that every source of 65,536 vertices takes 51 GB, 80 % of an
// H100's free memory, the budget of a run. Beyond it the first device
// block holds fewer sources, which the plan of every source would not
// match: only the graph's shape and rank are measured ahead.
const maxVerticesPlannedAhead = 1 << 16

// everyVertex is the sources 0 .. n-1, in order: the block of a run of
// every vertex that fits the device whole.
func everyVertex(n int) []graph.VertexID {
	s := make([]graph.VertexID, n)
	for i := range s {
		s[i] = graph.VertexID(i)
	}
	return s
}

// finishBuildBesideOpening takes the CSR built beside the opening, if any
// (beside not nil): after the open failed (wait), once it is built; after
// the device e opened, only if it is built already. A CSR taken is g's,
// built on the CPU, with e kept for Run, and took is true; a build not yet
// done is dropped (the caller builds on e), and took is false. A table the
// build refuses is the error graph.Build's refusal gives wherever the CSR is
// built.
func finishBuildBesideOpening(g *Graph, beside <-chan besideBuild, e graph.GPUDevice, wait bool) (took bool, err error) {
	if beside == nil {
		return false, nil
	}
	var b besideBuild
	if wait {
		b = <-beside
	} else {
		select {
		case b = <-beside:
		default:
			return false, nil
		}
	}
	if b.err != nil {
		return false, fmt.Errorf("%s: %w", g.Table.Name, b.err)
	}
	g.CSR, g.builtOn, g.buildTime, g.device = b.csr, "cpu", b.took, e
	g.times.BesideOpen = true
	if e != nil && b.ahead != nil {
		e.AdoptPlan(b.ahead)
		g.ahead = b.ahead
	}
	return true, nil
}
