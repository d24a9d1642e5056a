package pipeline

// The algorithm ch on the GPU engine (--engine gpu --algo ch): the engine
// sweeps a block of sources at once over a hierarchy built on the host
// (package gpu, ch.go), so the pipeline hands it the index's, or the one
// the graph keeps (chkept.go), through chPreparer. The GPU engine answers
// ch for int32 distances, without paths; other requests of ch on the GPU
// are refused with one line naming what to use instead.

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
)

// chPreparer is an engine that runs the algorithm ch over a hierarchy it
// is given (the GPU engine, gpu/devices' Engine).
type chPreparer interface {
	PrepareCH(ctx context.Context, csr *graph.CSR, req graph.Request, h *hierarchy.Hierarchy) (graph.Runner, error)
}

// checkCHOnGPU refuses what the GPU engine's ch does not answer on g.
func checkCHOnGPU(g *Graph, opt Options) error {
	if opt.Engine != "gpu" {
		return nil
	}
	if t := g.CSR.Type; t != graph.DistInt32 {
		return fmt.Errorf("%w: the algorithm ch runs on the GPU engine for int32 distances only so far, and this graph's are %s; use --engine cpu", ErrInvalid, t)
	}
	if opt.WithPaths {
		return fmt.Errorf("%w: the algorithm ch unpacks paths on the CPU engine only; use --engine cpu", ErrInvalid)
	}
	return nil
}

// runsCHOnGPU reports whether eng is a GPU engine that runs ch on csr:
// one that takes a hierarchy (several devices do not yet), for int32
// distances.
func runsCHOnGPU(eng graph.Engine, csr *graph.CSR) bool {
	_, ok := eng.(chPreparer)
	return ok && eng.Name() == "gpu" && csr.Type == graph.DistInt32
}

// The GPU engine's costs for auto, measured on pathctl gen grid graphs on
// one H200 and its host's 16 cores (docs/benchmarks-history.md, "The
// algorithm ch on the GPU", and for the sweep "Issue 40: ch stats from the
// table, the downward sweep without divisions, the upward phase's live
// bytes marked ahead"): the hierarchy's build takes about 15 µs a
// vertex on 16 cores (256²: 1.0 s, 1000²: 14.7 s); a source's row by the
// search kernels about 21 µs at 65,536 vertices, growing as n^1.3 (725 µs
// at 10⁶), and by the sweep about 15 µs per 10⁶ vertices.
const (
	gpuCHBuildPerVertex = 15e-6 * 16 // seconds on one core
	gpuSearchAt64K      = 21e-6
	gpuSearchGrowth     = 1.3
	gpuSweepPerVertex   = 1.5e-11
)

// gpuCHPays is chPays for the GPU engine: csr looks road-like, and the
// sources repay the build (with the margin chPayback) by what the sweep
// saves on each source against the search kernels.
func gpuCHPays(csr *graph.CSR, sources int) (bool, string) {
	road, probe := roadLike(csr)
	if !road {
		return false, fmt.Sprintf("the graph does not look road-like (%s)", probe)
	}
	n := float64(csr.NumVertices)
	build := gpuCHBuildPerVertex * n / float64(runtime.NumCPU())
	saved := gpuSearchAt64K*math.Pow(n/65536, gpuSearchGrowth) - gpuSweepPerVertex*n
	if saved <= 0 {
		return false, fmt.Sprintf("the sweep saves nothing on a graph this small (%s)", probe)
	}
	need := int(math.Ceil(chPayback * build / saved))
	if sources < need {
		return false, fmt.Sprintf("%d sources do not repay the hierarchy's build on the GPU (%s, from %d sources)", sources, probe, need)
	}
	return true, fmt.Sprintf("%s; %d sources repay the build on the GPU from %d", probe, sources, need)
}
