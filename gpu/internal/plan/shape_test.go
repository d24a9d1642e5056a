package plan

import (
	"math"
	"testing"

	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
)

// TestShapeAndStep checks that a grid looks like a mesh and R-MAT does
// not, and the threshold step each gets: the asked step always, the scaled
// mean weight on the mesh, none on R-MAT unless StepMeshesOnly is off, and
// none on a graph without arcs.
func TestShapeAndStep(t *testing.T) {
	t.Parallel()
	gs := planGraphs(t)
	grid, rmat := ShapeOf(gs["grid"]), ShapeOf(gs["rmat"])
	if !grid.Arcs || !grid.MeshLike || rmat.MeshLike || !rmat.Arcs {
		t.Fatalf("shapes: grid %+v, rmat %+v", grid, rmat)
	}
	if grid.MeanWeight < 1 || grid.MeanWeight > 20 {
		t.Errorf("grid of weights 1..20: mean weight %v", grid.MeanWeight)
	}
	cfg := DefaultConfig()
	if got, want := cfg.Step(grid, 0), cfg.DeltaScale*grid.MeanWeight; got != want || got <= 0 {
		t.Errorf("grid: step %v, want %v", got, want)
	}
	if got := cfg.Step(rmat, 0); got != 0 {
		t.Errorf("rmat: step %v, want none", got)
	}
	if got := cfg.Step(rmat, 2.5); got != 2.5 {
		t.Errorf("rmat asked 2.5: step %v", got)
	}
	everywhere := cfg
	everywhere.StepMeshesOnly = false
	if got := everywhere.Step(rmat, 0); math.Abs(got-cfg.DeltaScale*rmat.MeanWeight) > 1e-12 {
		t.Errorf("rmat, every graph: step %v", got)
	}
	off := cfg
	off.DeltaScale = 0
	if got := off.Step(grid, 0); got != 0 {
		t.Errorf("scale 0: step %v", got)
	}
	empty, err := graph.Build(&graph.Edges{NumVertices: 4}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := ShapeOf(empty); s.Arcs || cfg.Step(s, 0) != 0 {
		t.Errorf("no arcs: shape %+v, step %v", s, cfg.Step(s, 0))
	}
	el, err := gen.Grid(5, 5, 1)
	g := undirectedGraph(t, el, err)
	pg := NewGraph(g)
	if pg.CSR() != g || pg.Shape() != ShapeOf(g) || len(pg.Rank()) != g.NumVertices {
		t.Errorf("Graph does not measure its own CSR")
	}
}
