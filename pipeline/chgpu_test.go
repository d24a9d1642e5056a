package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// edgesGraph loads e, its vertex ids 0..n-1, as a pipeline graph.
func edgesGraph(t *testing.T, e *graph.Edges, undirected bool) *Graph {
	t.Helper()
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := range e.NumVertices {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "edges"}, LoadOptions{Undirected: undirected})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// genGraph is a pipeline graph of a generator's list.
func genGraph(t *testing.T, list *gen.EdgeList, err error, undirected bool) *Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	e, err := list.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	return edgesGraph(t, e, undirected)
}

// TestCHOnGPURefused checks what the GPU engine's ch refuses, with one
// line naming what to use: float distances and paths.
func TestCHOnGPURefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 40))
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 30, M: 80, Kind: testgraphs.Float32, MinWeight: 1, MaxWeight: 4, Dyadic: true})
	floats := edgesGraph(t, e, false)
	ints := randomIntGraph(t, rng, 30, 9, false)
	for _, c := range []struct {
		g    *Graph
		opt  Options
		want string
	}{
		{floats, Options{Query: Query{Algorithm: graph.CH}, Resources: Resources{Engine: "gpu"}}, "int32 distances only so far"},
		{ints, Options{Query: Query{Algorithm: graph.CH, WithPaths: true, Targets: []string{"1"}}, Resources: Resources{Engine: "gpu"}}, "paths on the CPU engine only"},
	} {
		_, err := routeCH(c.g, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--engine cpu") {
			t.Errorf("%+v: err = %v, want %q and --engine cpu", c.opt.Query, err, c.want)
		}
	}
	if _, err := routeCH(ints, Options{Query: Query{Algorithm: graph.CH}, Resources: Resources{Engine: "gpu"}}); err != nil {
		t.Errorf("ch of int32 distances on the GPU refused: %v", err)
	}
}

// TestCHOnGPU runs the algorithm ch on the GPU engine (the hierarchy built
// for the run, or an index's) on road-like graphs with one-way streets, a
// grid, and a random graph with zero weights and unreachable pairs, in
// every layout and narrow query, and compares each answer with the CPU
// engine's Dijkstra.
func TestCHOnGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skipf("no usable GPU: %s", st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	road, err := gen.Road(20+rng.IntN(10), 25+rng.IntN(10), 0.3, seed)
	grid, err2 := gen.Grid(17, 23, seed)
	graphs := map[string]*Graph{
		"road":   genGraph(t, road, err, false),
		"grid":   genGraph(t, grid, err2, true),
		"random": randomIntGraph(t, rng, 150, 6, false),
	}
	for name, g := range graphs {
		n := g.NumVertices()
		id := func(v int) string { return fmt.Sprint(g.Table.Vertices.Ints[v]) }
		var sources, targets []string
		for range 40 {
			sources = append(sources, id(rng.IntN(n)))
		}
		for range 9 {
			targets = append(targets, id(rng.IntN(n)))
		}
		h, err := hierarchy.Build(g.CSR, hierarchy.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, q := range []struct {
			name   string
			query  Query
			block  int
			layout arrowio.Layout
		}{
			{"matrix", Query{}, 0, arrowio.LayoutMatrix},
			{"matrix in blocks", Query{Sources: sources}, 7, arrowio.LayoutMatrix},
			{"matrix float", Query{MatrixType: MatrixFloat}, 0, arrowio.LayoutMatrix},
			{"reverse", Query{Reverse: true, Sources: sources}, 0, arrowio.LayoutMatrix},
			{"stats", Query{}, 0, arrowio.LayoutStats},
			{"stats in blocks", Query{Sources: sources}, 7, arrowio.LayoutStats},
			{"targets and cutoff", Query{Sources: sources, Targets: targets, Cutoff: 40, HasCutoff: true}, 0, arrowio.LayoutPairs},
			{"k nearest", Query{Sources: sources, K: 3}, 0, arrowio.LayoutPairs},
		} {
			for _, index := range []*hierarchy.Hierarchy{nil, h} {
				label := fmt.Sprintf("seed %d: %s, %s, index %v", seed, name, q.name, index != nil)
				want := q.query
				want.Algorithm, want.Layout = graph.Dijkstra, q.layout
				got := q.query
				got.Algorithm, got.Layout = graph.CH, q.layout
				base := Options{Query: want, Resources: Resources{Engine: "cpu"}}
				run := Options{Query: got, Resources: Resources{Engine: "gpu", MaxBlock: q.block, Index: index}}
				switch q.layout {
				case arrowio.LayoutMatrix:
					a, errA := collectMatrix(t, g, run)
					b, errB := collectMatrix(t, g, base)
					if errA != nil || errB != nil || fmt.Sprint(a) != fmt.Sprint(b) {
						t.Fatalf("%s: gpu ch (err %v) differs from cpu dijkstra (err %v)", label, errA, errB)
					}
				case arrowio.LayoutStats:
					// The device reduces the harmonic sums in its own order.
					sameStats(t, collectStats(t, g, run), collectStats(t, g, base), label)
				default:
					a, errA := collectPairs(t, g, run)
					b, errB := collectPairs(t, g, base)
					if errA != nil || errB != nil || fmt.Sprint(a) != fmt.Sprint(b) {
						t.Fatalf("%s: gpu ch (err %v) differs from cpu dijkstra (err %v)\n got %v\nwant %v", label, errA, errB, a, b)
					}
				}
			}
		}
	}
}

// stubGPU is an engine named gpu that takes a hierarchy, for auto's
// choices; it runs nothing.
type stubGPU struct{}

func (stubGPU) Name() string { return "gpu" }
func (stubGPU) Prepare(context.Context, *graph.CSR, graph.Request) (graph.Runner, error) {
	return nil, errors.New("stub")
}
func (stubGPU) PrepareCH(context.Context, *graph.CSR, graph.Request, *hierarchy.Hierarchy) (graph.Runner, error) {
	return nil, errors.New("stub")
}

// TestAutoCHOnGPU checks auto's choice of ch on the GPU engine: a kept
// hierarchy is used, a small grid's sources do not repay a build there
// (the search kernels are cheap on it), the cost model asks fewer sources
// per vertex as graphs grow, and float distances and R-MAT stay on the
// search kernels.
func TestAutoCHOnGPU(t *testing.T) {
	list, err := gen.Grid(64, 64, 1)
	grid := genCSR(t, list, err)
	list, err = gen.RMAT(12, 16, 1)
	rmat := genCSR(t, list, err)
	floats := *grid
	floats.Type = graph.DistFloat64
	all := grid.NumVertices
	for _, c := range []struct {
		name string
		kept hierarchyState
		csr  *graph.CSR
		want graph.Algorithm
		why  string
	}{
		{"kept", hierarchyState{ready: true}, grid, graph.CH, "the graph keeps"},
		{"small grid", hierarchyState{}, grid, graph.Auto, "do not repay the hierarchy's build on the GPU"},
		{"rmat", hierarchyState{}, rmat, graph.Auto, "does not look road-like"},
		{"float distances", hierarchyState{ready: true}, &floats, graph.Auto, ""},
	} {
		var log strings.Builder
		got := autoCH(c.kept, stubGPU{}, c.csr, Options{Log: &log}, graph.Request{Algorithm: graph.Auto}, all)
		if got != c.want || !strings.Contains(log.String(), c.why) || (c.why == "" && log.Len() > 0) {
			t.Errorf("%s: %s (%q), want %s (%q)", c.name, got, log.String(), c.want, c.why)
		}
	}
	// The sources a build needs, per vertex, fall as the search kernels'
	// rows grow dearer with the graph.
	need := func(n int) float64 {
		saved := gpuSearchAt64K*math.Pow(float64(n)/65536, gpuSearchGrowth) - gpuSweepPerVertex*float64(n)
		return chPayback * gpuCHBuildPerVertex * float64(n) / float64(runtime.NumCPU()) / saved / float64(n)
	}
	if a, b := need(1<<16), need(1<<20); !(b < a) {
		t.Errorf("sources per vertex to repay a build: %v at 2^16 vertices, %v at 2^20", a, b)
	}
}
