package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestVerifySampleCounts: a negative sample count is ErrInvalid, not a
// panic; 0 checks every source and the report lists every one of them, as
// does a count above the vertices; a count below them lists that many
// (issue 37, point 11).
func TestVerifySampleCounts(t *testing.T) {
	g := randomGraph(t, testgraphs.Rand(t, 11), 9, testgraphs.Int)
	n := g.NumVertices()
	if _, err := verifyOf(context.Background(), g, Options{Resources: Resources{Engine: "cpu"}}, -1, 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("samples -1: error %v, want ErrInvalid", err)
	}
	for _, c := range []struct{ samples, sources int }{{0, n}, {3, 3}, {n + 5, n}} {
		rep, err := verifyOf(context.Background(), g, Options{Resources: Resources{Engine: "cpu"}}, c.samples, 1)
		if err != nil {
			t.Fatalf("samples %d: %v", c.samples, err)
		}
		if len(rep.Sources) != c.sources || rep.Pairs != int64(c.sources*n) || rep.Mismatches != 0 {
			t.Errorf("samples %d: %d sources, %d pairs, %d mismatches; want %d sources, %d pairs, 0",
				c.samples, len(rep.Sources), rep.Pairs, rep.Mismatches, c.sources, c.sources*n)
		}
	}
	// Given sources are the ones reported, a repeat once.
	rep, err := verifyOf(context.Background(), g, Options{Query: Query{Sources: []string{"2", "4", "2"}}, Resources: Resources{Engine: "cpu"}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources) != 2 || rep.Pairs != int64(2*n) {
		t.Errorf("sources 2,4,2: %v and %d pairs, want [2 4] and %d", rep.Sources, rep.Pairs, 2*n)
	}
}

// TestVerifyRefusesNegativeLoops: verify refuses a negative self-loop a
// source reaches as run does (a negative cycle for bellman-ford and auto,
// a negative weight for dijkstra); it reported the engine and the oracle
// in agreement, since neither sees the loop.
func TestVerifyRefusesNegativeLoops(t *testing.T) {
	e := &graph.Edges{NumVertices: 3, Src: []graph.VertexID{0, 1, 1}, Dst: []graph.VertexID{1, 1, 2}, IntWeights: []int64{3, -1, 2}}
	table := &arrowio.EdgeTable{Edges: *e, Vertices: &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{0, 1, 2}}, Name: "loop.csv"}
	g, err := LoadGraph(table, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		algo graph.Algorithm
		want error
	}{{graph.BellmanFord, graph.ErrNegativeCycle}, {graph.Auto, graph.ErrNegativeCycle}, {graph.Dijkstra, graph.ErrNegativeWeight}} {
		_, err := verifyOf(context.Background(), g, Options{Query: Query{Algorithm: c.algo}, Resources: Resources{Engine: "cpu"}}, 0, 1)
		if !errors.Is(err, c.want) {
			t.Errorf("verify --algo %s: %v, want %v", c.algo, err, c.want)
		}
	}
}
