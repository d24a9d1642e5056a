package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// negativeTable draws a directed graph of n vertices (ids 0..n-1) whose
// weights turn negative through a potential, so that no cycle is negative;
// with cycle >= 2 a cycle of that many vertices weighing -1 an arc is
// planted too (returned).
func negativeTable(rng *rand.Rand, n int, kind testgraphs.WeightKind, cycle int) (*arrowio.EdgeTable, []graph.VertexID) {
	o := testgraphs.RandomOptions{N: n, M: 3 * n, Kind: kind, MinWeight: 0, MaxWeight: 12, Dyadic: true, Potential: 15, Duplicates: n / 4}
	if cycle >= 2 {
		o.Potential, o.MinWeight, o.MaxWeight, o.Cycle = 0, cycle, cycle+12, cycle
	}
	e, planted := testgraphs.Random(rng, o)
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
	for i := range n {
		v.Ints = append(v.Ints, int64(i))
	}
	return &arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "negative.parquet"}, planted
}

// bellmanFordRow is the serial oracle's distances from s (ref.BellmanFord),
// as float64, +Inf where unreached.
func bellmanFordRow(t *testing.T, g *graph.CSR, s graph.VertexID) []float64 {
	t.Helper()
	row := func(d []float64, err error) []float64 {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	switch g.Type {
	case graph.DistInt32:
		return row(asFloats(ref.BellmanFord[int32](g, s)))
	case graph.DistInt64:
		return row(asFloats(ref.BellmanFord[int64](g, s)))
	case graph.DistFloat32:
		return row(asFloats(ref.BellmanFord[float32](g, s)))
	}
	return row(ref.BellmanFord[float64](g, s))
}

// nearestBellmanFordOracle is the nearest layout's answer from one serial
// Bellman-Ford per source (on the table with every row turned round for
// reverse), the minimum per vertex, ties to the smaller source id, within
// the cutoff where one is given; ties counts the vertices where two
// sources tie for the nearest.
func nearestBellmanFordOracle(t *testing.T, table *arrowio.EdgeTable, reverse bool, sources []graph.VertexID, cutoff float64, hasCutoff bool) (want []pairRow, ties int) {
	t.Helper()
	if reverse {
		turned := *table
		turned.Edges.Src = slices.Clone(table.Edges.Dst)
		turned.Edges.Dst = slices.Clone(table.Edges.Src)
		table = &turned
	}
	g, err := LoadGraph(table, LoadOptions{Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	best := make([]pairRow, g.NumVertices())
	tied := make([]bool, g.NumVertices())
	for v := range best {
		best[v] = pairRow{source: -1, target: int64(v), distance: math.Inf(1)}
	}
	for _, s := range slices.Compact(slices.Sorted(slices.Values(sources))) {
		for v, d := range bellmanFordRow(t, g.CSR, s) {
			if math.IsInf(d, 1) || (hasCutoff && d > cutoff) {
				continue
			}
			b := &best[v]
			if b.source >= 0 && d == b.distance {
				tied[v] = true
			}
			if b.source < 0 || d < b.distance || (d == b.distance && int64(s) < b.source) {
				if d < b.distance {
					tied[v] = false
				}
				b.source, b.distance = int64(s), d
			}
		}
	}
	for v, b := range best {
		if b.source >= 0 {
			want = append(want, b)
			ties += btoi(tied[v])
		}
	}
	return want, ties
}

// TestNearestBellmanFord: the nearest layout with negative weights runs one
// multi-source Bellman-Ford (it said "use the bellman-ford algorithm" even
// to --algo bellman-ford; issue 37, point 13), with bellman-ford asked for
// and with auto, on the CPU and with --engine gpu (which hands it to the
// CPU with a note), and its rows are the oracle's: one serial Bellman-Ford
// per source, the minimum per vertex, ties to the smaller source id; on
// random graphs with negative weights and no negative cycle, of every
// weight type, with and without a cutoff and --reverse.
func TestNearestBellmanFord(t *testing.T) {
	rng := testgraphs.Rand(t, 37)
	kinds := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64}
	negative, ties := 0, 0
	for trial := range 30 {
		kind := kinds[trial%len(kinds)]
		n := 1 + rng.IntN(70)
		if trial == 29 {
			n = 1500
		}
		table, _ := negativeTable(rng, n, kind, 0)
		g, err := LoadGraph(table, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var sources []graph.VertexID
		for range 1 + rng.IntN(min(n, 6)) {
			sources = append(sources, graph.VertexID(rng.IntN(n)))
		}
		if trial%7 == 3 {
			sources = append(sources, sources[0]) // a repeat counts once
		}
		hasCutoff, cutoff := trial%4 == 2, float64(rng.IntN(20))
		reverse := trial%3 == 1
		want, tied := nearestBellmanFordOracle(t, table, reverse, sources, cutoff, hasCutoff)
		ties += tied
		negative += btoi(g.CSR.HasNegative())
		for _, run := range []struct {
			algo   graph.Algorithm
			engine string
		}{{graph.BellmanFord, "cpu"}, {graph.Auto, "auto"}, {graph.BellmanFord, "gpu"}} {
			what := fmt.Sprintf("trial %d: %d vertices (min weight %v), %s, sources %v, cutoff %v %v, reverse %v, %s on %s",
				trial, n, g.CSR.MinWeight, kind, sources, hasCutoff, cutoff, reverse, run.algo, run.engine)
			if run.algo == graph.Auto && !g.CSR.HasNegative() {
				continue // auto takes Dijkstra there, tested elsewhere
			}
			var notice strings.Builder
			opt := Options{Query: Query{Algorithm: run.algo, Cutoff: cutoff, HasCutoff: hasCutoff, Reverse: reverse}, Resources: Resources{Engine: run.engine}, Notice: &notice}
			for _, s := range sources {
				opt.Sources = append(opt.Sources, fmt.Sprint(s))
			}
			got, sum := collectNearest(t, g, opt)
			if sum.Engine != "cpu" || !strings.Contains(sum.Algorithm, "Bellman-Ford") {
				t.Fatalf("%s: ran %s on %s, want the CPU's multi-source Bellman-Ford", what, sum.Algorithm, sum.Engine)
			}
			if run.engine == "gpu" && !strings.Contains(notice.String(), "runs on the CPU engine") {
				t.Errorf("%s: no note that the CPU answers: %q", what, notice.String())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s:\n    got %v\n oracle %v", what, got, want)
			}
		}
		g.Close()
	}
	// The draws must hold what the test is about.
	if negative < 20 || ties == 0 {
		t.Fatalf("%d of 30 graphs with a negative weight, %d tied vertices: the draws test too little", negative, ties)
	}
}

// TestNearestBellmanFordCycles: a negative cycle that a source reaches is
// ErrNegativeCycle naming a vertex on it and external ids; one that no
// source reaches does not matter. Other algorithms than bellman-ford and
// auto refuse negative weights naming themselves, and bellman-ford as the
// way through.
func TestNearestBellmanFordCycles(t *testing.T) {
	rng := testgraphs.Rand(t, 38)
	for trial := range 10 {
		n := 6 + rng.IntN(40)
		table, cycle := negativeTable(rng, n, testgraphs.Int, 2+rng.IntN(4))
		g, err := LoadGraph(table, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Query: Query{Algorithm: graph.BellmanFord, Layout: arrowio.LayoutNearest, Sources: []string{fmt.Sprint(cycle[0])}}, Resources: Resources{Engine: "cpu"}}
		_, err = runQuery(context.Background(), g, opt, func(arrow.RecordBatch) error { return nil })
		var nc *graph.NegativeCycleError
		if !errors.Is(err, ErrNegativeCycle) || !errors.As(err, &nc) || !slices.Contains(cycle, nc.Vertex) {
			t.Fatalf("trial %d: cycle %v reached from %d: err %v, want a negative cycle through one of its vertices", trial, cycle, cycle[0], err)
		}
		if want := fmt.Sprintf("negative cycle through vertex %d ", nc.Vertex); !strings.Contains(err.Error(), want) {
			t.Errorf("trial %d: %q does not say %q", trial, err, want)
		}
		// Sources that do not reach the cycle: answered.
		var far []graph.VertexID
		for s := range graph.VertexID(n) {
			if !reachesAny(g.CSR, s, cycle) {
				far = append(far, s)
			}
		}
		if len(far) == 0 {
			g.Close()
			continue
		}
		opt.Sources = nil
		for _, s := range far {
			opt.Sources = append(opt.Sources, fmt.Sprint(s))
		}
		got, _ := collectNearest(t, g, opt)
		if want, _ := nearestBellmanFordOracle(t, table, false, far, 0, false); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: sources %v away from the cycle:\n    got %v\n oracle %v", trial, far, got, want)
		}
		g.Close()
	}
	table, _ := negativeTable(rand.New(rand.NewPCG(1, 2)), 30, testgraphs.Int, 0)
	g, err := LoadGraph(table, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.CSR.HasNegative() {
		t.Fatal("the drawn graph has no negative weight")
	}
	for _, algo := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge} {
		_, err := runQuery(context.Background(), g, Options{Query: Query{Algorithm: algo, Layout: arrowio.LayoutNearest, Sources: []string{"0"}}, Resources: Resources{Engine: "cpu"}},
			func(arrow.RecordBatch) error { return nil })
		if !errors.Is(err, ErrNegativeWeight) || !strings.Contains(err.Error(), fmt.Sprintf("%q", algo)) || !strings.Contains(err.Error(), "bellman-ford") {
			t.Errorf("%s with negative weights: err %v, want one naming %s and bellman-ford", algo, err, algo)
		}
	}
}

// reachesAny reports whether some vertex of to is reachable from s in g.
func reachesAny(g *graph.CSR, s graph.VertexID, to []graph.VertexID) bool {
	hops, err := ref.BFS(g, s)
	if err != nil {
		return true
	}
	for _, v := range to {
		if hops[v] != graph.Infinity[int32]() {
			return true
		}
	}
	return false
}
