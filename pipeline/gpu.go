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

// DefaultBudget is 80 % of the device's free memory, and at most
// maxHostBudget: every block in flight is also held in host memory.
func (g gpuEngine) DefaultBudget() int64 {
	free, err := g.FreeMemory()
	if err != nil || free <= 0 {
		return DefaultMemBudget
	}
	return min(free/5*4, maxHostBudget)
}

// maxHostBudget bounds the host memory of the blocks in flight on a GPU run.
const maxHostBudget = 8 << 30

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
// like csr (BENCHMARKS.md, H200, all-pairs): BFS for hop counts,
// Bellman-Ford for negative weights and for sparse high-diameter graphs
// (grid 256×256: 11.3 s against 20.9 s for edge and 27.4 s for delta), and
// delta-stepping otherwise (R-MAT 16: 7.6 s against 9.4 s for Bellman-Ford
// and 12.7 s for edge).
func chooseGPUAlgorithm(csr *graph.CSR) (graph.Algorithm, string) {
	n := csr.NumVertices
	if !csr.Weighted {
		return graph.BFS, "unweighted"
	}
	if csr.HasNegative() {
		return graph.BellmanFord, "negative weights"
	}
	if n == 0 {
		return graph.Delta, "empty graph"
	}
	mean := float64(csr.NumEdges()) / float64(n)
	maxDeg := 0
	for u := 0; u < n; u++ {
		maxDeg = max(maxDeg, csr.OutDegree(graph.VertexID(u)))
	}
	if mean < 6 && float64(maxDeg) < 4*mean {
		return graph.BellmanFord, fmt.Sprintf("sparse and even, likely high diameter: max degree %d, mean %.1f", maxDeg, mean)
	}
	return graph.Delta, fmt.Sprintf("max degree %d, mean %.1f", maxDeg, mean)
}
