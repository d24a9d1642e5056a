package gpu

import (
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestChooseAlgorithm checks what auto resolves to on the GPU, without a
// device: the batched kernel for unweighted and non-negative weights,
// bellman-ford for negative weights, and that the description names the
// batched kernel and the reason.
func TestChooseAlgorithm(t *testing.T) {
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
		{"unweighted", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst}), Batched},
		{"negative", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, IntWeights: []int64{2, -1}}), graph.BellmanFord},
		{"integer", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, IntWeights: []int64{2, 0}}), Batched},
		{"float", build(&graph.Edges{NumVertices: 3, Src: src, Dst: dst, Float64Weights: []float64{0.5, 2}}), Batched},
		{"empty", build(&graph.Edges{NumVertices: 0, IntWeights: []int64{}}), Batched},
	} {
		if got, why := chooseAlgorithm(c.g); got != c.want || why == "" {
			t.Errorf("%s: chose %q (%q), want %q with a reason", c.name, got, why, c.want)
		}
	}
	for _, c := range []struct {
		algo     graph.Algorithm
		why      string
		prefix   string
		contains string
	}{
		{Batched, "non-negative weights", "auto: batched label-correcting (B=32", "(non-negative weights)"},
		{graph.BellmanFord, "negative weights", "auto: bellman-ford", "(negative weights)"},
		{graph.Delta, "", "delta", "delta"},
	} {
		d := describeKernel(c.algo, c.why)
		if !strings.HasPrefix(d, c.prefix) || !strings.Contains(d, c.contains) || strings.Contains(d, ";") {
			t.Errorf("describeKernel(%s, %q) = %q", c.algo, c.why, d)
		}
	}
}
