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

// TestNearFarChoice checks when the batched kernel runs near-far rounds
// and their bucket width: in auto on weighted meshes of at least
// NearFarMinVertices vertices only (not on R-MAT, a mesh of unit weights,
// a smaller mesh, or a graph without arcs), always when on, never when
// off; the asked width when positive, else NearFarScale times the mean
// weight, +Inf where that is 0.
func TestNearFarChoice(t *testing.T) {
	t.Parallel()
	gs := planGraphs(t)
	grid, rmat := ShapeOf(gs["grid"]), ShapeOf(gs["rmat"])
	if grid.Vertices != gs["grid"].NumVertices || !grid.Weighted || !rmat.Weighted {
		t.Fatalf("shapes: grid %+v of %d vertices, rmat %+v", grid, gs["grid"].NumVertices, rmat)
	}
	el, err := gen.Grid(6, 7, 1, gen.WithWeights(1, 1))
	unit := ShapeOf(undirectedGraph(t, el, err))
	if !unit.MeshLike || unit.Weighted || unit.Vertices != 42 || unit.MeanWeight != 1 {
		t.Fatalf("unit grid: %+v", unit)
	}
	empty, err := graph.Build(&graph.Edges{NumVertices: 4}, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	none := ShapeOf(empty)
	if none.Vertices != 4 || none.Arcs {
		t.Fatalf("no arcs: %+v", none)
	}
	cfg := DefaultConfig()
	cfg.NearFarMinVertices = grid.Vertices
	for _, c := range []struct {
		name  string
		mode  NearFarMode
		shape Shape
		asked float64
		on    bool
		delta float64
	}{
		{"auto grid", NearFarAuto, grid, 0, true, cfg.NearFarScale * grid.MeanWeight},
		{"auto grid asked", NearFarAuto, grid, 3.5, true, 3.5},
		{"auto rmat", NearFarAuto, rmat, 0, false, 0},
		{"auto unit grid", NearFarAuto, unit, 0, false, 0},
		{"auto no arcs", NearFarAuto, none, 0, false, 0},
		{"on rmat", NearFarOn, rmat, 0, true, cfg.NearFarScale * rmat.MeanWeight},
		{"on unit grid", NearFarOn, unit, 0, true, cfg.NearFarScale},
		{"on no arcs", NearFarOn, none, 0, true, math.Inf(1)},
		{"off grid", NearFarOff, grid, 3.5, false, 0},
	} {
		c2 := cfg
		c2.NearFarMode = c.mode
		on, delta := c2.NearFar(c.shape, c.asked)
		if on != c.on || (on && math.Abs(delta-c.delta) > 1e-9*c.delta && delta != c.delta) {
			t.Errorf("%s: near-far %v, delta %v; want %v, %v", c.name, on, delta, c.on, c.delta)
		}
	}
	small := grid
	small.Vertices = cfg.NearFarMinVertices - 1
	if on, _ := cfg.NearFar(small, 0); on {
		t.Errorf("auto on a grid of %d vertices, below the minimum %d: near-far", small.Vertices, cfg.NearFarMinVertices)
	}
	zero := cfg
	zero.NearFarMode, zero.NearFarScale = NearFarOn, 0
	if on, delta := zero.NearFar(grid, 0); !on || !math.IsInf(delta, 1) {
		t.Errorf("scale 0: near-far %v, delta %v; want on, +Inf", on, delta)
	}
	// The default keeps the 256² grid of docs/benchmarks-history.md on the threshold
	// rounds and puts issue 17's million-vertex grid on near-far rounds.
	def := DefaultConfig()
	g256, g1000 := grid, grid
	g256.Vertices, g1000.Vertices = 256*256, 999887
	if on, _ := def.NearFar(g256, 0); on {
		t.Errorf("default: near-far on the 256² grid")
	}
	if on, _ := def.NearFar(g1000, 0); !on {
		t.Errorf("default: no near-far on the million-vertex grid")
	}
}
