package gpu

// Algorithm "auto" on the GPU: Prepare resolves it here, as the CPU engine
// resolves it in cpu/auto.go, and the runner describes the choice.

import (
	"fmt"

	"github.com/pathctl/pathctl/graph"
)

// chooseAlgorithm picks the kernel that measured fastest on graphs like
// csr (H200, all-pairs, stats layout, bench/bench_gpu.py): Bellman-Ford
// for negative weights (the only kernel that takes them), and otherwise
// the engine's own batched label-correcting kernel (Batched), which
// relaxes each arc for 32 sources at once: R-MAT 16 in 1.61 s against 5.86
// s for delta and 7.66 s for Bellman-Ford, the 256×256 grid in 4.46 s
// against 7.66 s for Bellman-Ford and 23.8 s for delta. Predecessors do
// not change the choice: every kernel derives or tracks them.
//
// Unweighted graphs run the batched kernel too, every arc of weight 1 (an
// unweighted CSR holds int32 weights of 1), so their hop counts gain its
// derivations: email-Enron, every source, stats layout, H100: 317 ms
// with bfs against 139 ms (cond-mat-2005: 571 against 195 ms).
//
// A cutoff (Request.Cutoff) does not change the choice either: the batched
// kernel relaxes nothing past it (plan.Config.KernelCutoff), so its cost
// falls with the cutoff's radius. Bellman-Ford, the choice for negative
// weights, computes full rows, which the gather clips (gather.go): a path
// past the cutoff may come back under it through a negative arc, so its
// search cannot stop there.
//
// It returns the kernel and why it was chosen.
func chooseAlgorithm(csr *graph.CSR) (graph.Algorithm, string) {
	switch {
	case csr.HasNegative():
		return graph.BellmanFord, "negative weights"
	case !csr.Weighted:
		return Batched, "unweighted: hop counts as unit weights"
	}
	return Batched, "non-negative weights"
}

// describeKernel says what a runner of algo runs; why, when not empty, is
// the reason auto chose algo.
func describeKernel(algo graph.Algorithm, why string) string {
	switch {
	case algo == Batched:
		return fmt.Sprintf("auto: %s (%s)", BatchedDescription, why)
	case why == "":
		return string(algo)
	}
	return fmt.Sprintf("auto: %s (%s)", algo, why)
}
