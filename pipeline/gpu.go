package pipeline

import (
	"context"
	"fmt"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// openGPU opens the GPU engine on the first device. The caller closes it.
func openGPU() (Engine, error) {
	e, err := gpu.New()
	if err != nil {
		return nil, err
	}
	return gpuEngine{e}, nil
}

// GPUStatus reports whether the GPU engine can run here, with the device.
func GPUStatus() EngineStatus {
	info, err := gpu.Probe()
	if err != nil {
		return EngineStatus{Name: "gpu", Reason: err.Error()}
	}
	return EngineStatus{Name: "gpu", Available: true, Device: info}
}

// gpuEngine adapts *gpu.Engine, whose Prepare returns its concrete runner
// (package gpu cannot import pipeline), and resolves auto for it.
type gpuEngine struct{ *gpu.Engine }

func (g gpuEngine) Prepare(ctx context.Context, csr *graph.CSR, req graph.Request) (Runner, error) {
	why := ""
	if req.Algorithm == graph.Auto {
		req.Algorithm, why = chooseGPUAlgorithm(csr)
	}
	r, err := g.Engine.Prepare(ctx, csr, req)
	if err != nil {
		return nil, err
	}
	return describedRunner{r, string(req.Algorithm), why}, nil
}

// describedRunner names the kernel auto chose, for --verbose and summaries.
type describedRunner struct {
	*gpu.Runner
	algo, why string
}

func (d describedRunner) Describe() string {
	if d.why == "" {
		return d.algo
	}
	return fmt.Sprintf("auto: %s (%s)", d.algo, d.why)
}

// chooseGPUAlgorithm picks the seed kernel that measured fastest on graphs
// like csr (BENCHMARKS.md, H200): BFS for hop counts, Bellman-Ford for
// negative weights and for sparse high-diameter graphs (grids, roads),
// edge-parallel relaxation for skewed degrees (R-MAT, social graphs), and
// delta-stepping for the rest (uniform random).
func chooseGPUAlgorithm(csr *graph.CSR) (graph.Algorithm, string) {
	n := csr.NumVertices
	if !csr.Weighted {
		return graph.BFS, "unweighted"
	}
	if csr.HasNegative() {
		return graph.BellmanFord, "negative weights"
	}
	if n == 0 {
		return graph.Edge, "empty graph"
	}
	mean := float64(csr.NumEdges()) / float64(n)
	maxDeg := 0
	for u := 0; u < n; u++ {
		maxDeg = max(maxDeg, csr.OutDegree(graph.VertexID(u)))
	}
	switch {
	case float64(maxDeg) > 8*mean:
		return graph.Edge, fmt.Sprintf("skewed degrees: max %d, mean %.1f", maxDeg, mean)
	case mean < 6:
		return graph.BellmanFord, fmt.Sprintf("sparse, likely high diameter: mean degree %.1f", mean)
	}
	return graph.Delta, fmt.Sprintf("even degrees: max %d, mean %.1f", maxDeg, mean)
}
