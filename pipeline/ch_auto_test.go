package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

func genCSR(t *testing.T, list *gen.EdgeList, err error) *graph.CSR {
	if err != nil {
		t.Fatal(err)
	}
	e, err := list.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(e, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAutoCH checks when auto runs ch on the CPU engine: road-like graphs
// with sources enough to repay the build, and nothing else.
func TestAutoCH(t *testing.T) {
	list, err := gen.Grid(64, 64, 1)
	grid := genCSR(t, list, err)
	list, err = gen.Road(64, 64, 0.3, 1)
	road := genCSR(t, list, err)
	list, err = gen.RMAT(12, 16, 1)
	rmat := genCSR(t, list, err)
	many := grid.NumVertices
	for _, c := range []struct {
		name    string
		eng     graph.Engine
		csr     *graph.CSR
		opt     Options
		targets int
		sources int
		want    graph.Algorithm
		why     string
	}{
		{"grid, every source", cpu.New(), grid, Options{}, 0, many, graph.CH, "ch, a contraction hierarchy"},
		{"road, every source to 100 targets", cpu.New(), road, Options{}, 100, many, graph.CH, "targets' buckets"},
		{"grid, 100 sources", cpu.New(), grid, Options{}, 0, 100, graph.Auto, "do not repay"},
		{"rmat, every source", cpu.New(), rmat, Options{}, 0, rmat.NumVertices, graph.Auto, "does not look road-like"},
		{"grid, k nearest", cpu.New(), grid, Options{Query: Query{K: 4}}, 0, many, graph.Auto, ""},
		{"grid, paths", cpu.New(), grid, Options{Query: Query{WithPaths: true}}, 0, many, graph.Auto, ""},
		{"grid, nearest", cpu.New(), grid, Options{Query: Query{Layout: arrowio.LayoutNearest}}, 0, many, graph.Auto, ""},
	} {
		var log bytes.Buffer
		c.opt.Log = &log
		req := graph.Request{Algorithm: graph.Auto}
		for j := range c.targets {
			req.Targets = append(req.Targets, graph.VertexID(j))
		}
		got := autoCH(hierarchyState{}, c.eng, c.csr, c.opt, req, c.sources)
		if got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, got, c.want, log.String())
		}
		if c.why == "" && log.Len() > 0 || !strings.Contains(log.String(), c.why) {
			t.Errorf("%s: said %q, want %q", c.name, log.String(), c.why)
		}
	}
	// An explicit algorithm stays.
	if got := autoCH(hierarchyState{}, cpu.New(), grid, Options{}, graph.Request{Algorithm: graph.Dijkstra}, many); got != graph.Dijkstra {
		t.Errorf("dijkstra became %s", got)
	}
}
