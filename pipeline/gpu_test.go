package pipeline

import (
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// TestChooseGPUAlgorithm checks what auto resolves to on the GPU: hop counts
// for unweighted graphs, bellman-ford for negative weights, the batched
// kernel otherwise, and that the summary names the batched kernel.
func TestChooseGPUAlgorithm(t *testing.T) {
	build := func(e *graph.Edges) *graph.CSR {
		t.Helper()
		g, err := graph.Build(e, graph.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	src, dst := []graph.VertexID{0, 1}, []graph.VertexID{1, 2}
	for _, c := range []struct {
		name string
		g    *graph.CSR
		want graph.Algorithm
	}{
		{"unweighted", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst}), gpu.Batched},
		{"negative", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, IntWeights: []int64{2, -1}}), graph.BellmanFord},
		{"integer", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, IntWeights: []int64{2, 0}}), gpu.Batched},
		{"float", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, Float64Weights: []float64{0.5, 2}}), gpu.Batched},
		{"empty", build(&graph.Edges{NumVertices: 0, IntWeights: []int64{}}), gpu.Batched},
	} {
		if got, why := chooseGPUAlgorithm(c.g); got != c.want || why == "" {
			t.Errorf("%s: chose %q (%q), want %q with a reason", c.name, got, why, c.want)
		}
	}
	d := describedRunner{algo: string(gpu.Batched), why: "non-negative weights"}.Describe()
	if !strings.HasPrefix(d, "auto: batched label-correcting (B=32") || strings.Contains(d, ";") {
		t.Errorf("Describe() = %q", d)
	}
}
