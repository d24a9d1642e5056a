package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// collectNearest runs the nearest layout and returns its rows as
// (source, vertex, distance) and the run's summary.
func collectNearest(t *testing.T, g *Graph, opt Options) ([]pairRow, *Summary) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout = arrowio.LayoutNearest
	opt.Allocator = mem
	var rows []pairRow
	sum, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		for i := 0; i < int(r.NumRows()); i++ {
			rows = append(rows, pairRow{source: r.Column(2).(*array.Int64).Value(i), target: r.Column(0).(*array.Int64).Value(i), distance: floatAt(r.Column(1), i)})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("engine %s: %v", opt.Engine, err)
	}
	return rows, sum
}

// nearestSourceOracle is what the nearest layout must hold for q on the
// graph of table: per vertex some source reaches within the cutoff, its
// distance to the nearest source and that source, ties to the smaller
// source id, in vertex order; from one oracle Dijkstra per source. With
// reverse the distances run from the vertex to the source: Dijkstra on the
// graph of the table with every row turned round (built from the swapped
// columns, not by graph.Transpose, which the code under test uses).
func nearestSourceOracle(t *testing.T, table *arrowio.EdgeTable, undirected, reverse bool, q queryCase) []pairRow {
	t.Helper()
	if reverse {
		turned := *table
		turned.Edges.Src = slices.Clone(table.Edges.Dst)
		turned.Edges.Dst = slices.Clone(table.Edges.Src)
		table = &turned
	}
	g, err := LoadGraph(table, LoadOptions{Undirected: undirected, Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	n := g.NumVertices()
	best := make([]pairRow, n)
	for v := range best {
		best[v] = pairRow{source: -1, target: int64(v), distance: math.Inf(1)}
	}
	for _, s := range q.sources {
		for v, d := range refRow(t, g.CSR, s) {
			if !q.within(d) {
				continue
			}
			if b := &best[v]; b.source < 0 || d < b.distance || (d == b.distance && int64(s) < b.source) {
				b.source, b.distance = int64(s), d
			}
		}
	}
	var want []pairRow
	for _, b := range best {
		if b.source >= 0 {
			want = append(want, b)
		}
	}
	return want
}

// nearestTrial is one random case of the nearest layout's tests: a graph
// of n vertices and 3n edges of kind, undirected every third trial, random
// sources without targets, a cutoff every fifth trial and --reverse every
// fourth.
type nearestTrial struct {
	table   *arrowio.EdgeTable
	g       *Graph
	q       queryCase
	reverse bool
	what    string // the case, for failure messages
}

func newNearestTrial(t *testing.T, rng *rand.Rand, trial, n int, kind testgraphs.WeightKind, engine string) nearestTrial {
	t.Helper()
	table := randomTable(rng, n, 3*n, kind)
	g, err := LoadGraph(table, LoadOptions{Undirected: trial%3 == 0, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	q := randomQuery(rng, t, g.CSR)
	q.targets = nil
	if trial%5 == 2 {
		q.hasCutoff, q.cutoff = true, float64(rng.IntN(25))
	}
	reverse := trial%4 == 1
	what := fmt.Sprintf("trial %d: %d vertices, %s, %d sources, cutoff %v %v, reverse %v", trial, n, kind, len(q.sources), q.hasCutoff, q.cutoff, reverse)
	return nearestTrial{table, g, q, reverse, what}
}

// TestGPUNearestLayout runs the nearest layout through the whole pipeline on
// the GPU engine (gpu.Engine.Nearest) and on the CPU engine, on random
// graphs of every weight kind, directed and undirected, with and without a
// cutoff and --reverse: the rows must be equal, they must be the
// independent oracle's (nearestSourceOracle: one Dijkstra per source, ties
// to the smaller source id), and the summary must name the engine that
// ran. With --engine auto a graph of minGPUNearestVertices vertices or
// more runs on the GPU too.
func TestGPUNearestLayout(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	rng := testgraphs.Rand(t, 21)
	for trial := range 24 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64, testgraphs.Unweighted}[trial%4]
		n := 1 + rng.IntN(600)
		if trial == 23 {
			n = minGPUNearestVertices + 5
		}
		tr := newNearestTrial(t, rng, trial, n, kind, "")
		table, g, q, reverse, what := tr.table, tr.g, tr.q, tr.reverse, tr.what
		cpuOpt := q.options(graph.Auto, "cpu")
		cpuOpt.Reverse = reverse
		want, _ := collectNearest(t, g, cpuOpt)
		engine := "gpu"
		if trial == 23 {
			engine = "auto"
		}
		gpuOpt := q.options(graph.Auto, engine)
		gpuOpt.Reverse = reverse
		got, sum := collectNearest(t, g, gpuOpt)
		if sum.Engine != "gpu" || !strings.Contains(sum.Algorithm, "on the device") {
			t.Fatalf("%s: ran on engine %s (%s), want the GPU's kernels", what, sum.Engine, sum.Algorithm)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s:\n gpu %v\n cpu %v", what, got, want)
		}
		if oracle := nearestSourceOracle(t, table, trial%3 == 0, reverse, q); fmt.Sprint(got) != fmt.Sprint(oracle) {
			t.Fatalf("%s:\n    gpu %v\n oracle %v", what, got, oracle)
		}
	}
	// Negative weights: refused by Dijkstra as on the CPU, naming
	// bellman-ford; auto and bellman-ford answer on the CPU engine's
	// multi-source Bellman-Ford (TestNearestBellmanFord).
	e := graph.Edges{NumVertices: 3, Src: []int32{0, 1}, Dst: []int32{1, 2}, IntWeights: []int64{4, -1}}
	ids := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{0, 1, 2}}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: ids, Name: "negative"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runQuery(context.Background(), g, Options{Query: Query{Algorithm: graph.Dijkstra, Layout: arrowio.LayoutNearest, Sources: []string{"0"}}, Resources: Resources{Engine: "gpu"}},
		func(arrow.RecordBatch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "bellman-ford") {
		t.Errorf("negative weight on the GPU: err = %v, want one naming bellman-ford", err)
	}
	for _, algo := range []graph.Algorithm{graph.Auto, graph.BellmanFord} {
		rows, sum := collectNearest(t, g, Options{Query: Query{Algorithm: algo, Sources: []string{"0"}}, Resources: Resources{Engine: "gpu"}})
		if sum.Engine != "cpu" || fmt.Sprint(rows) != fmt.Sprint([]pairRow{{source: 0, target: 0}, {source: 0, target: 1, distance: 4}, {source: 0, target: 2, distance: 3}}) {
			t.Errorf("negative weight, %s on the GPU: engine %s, rows %v", algo, sum.Engine, rows)
		}
	}
}

// BenchmarkNearestLayout times the nearest layout in process, through Run
// with records counted and dropped (no file written), on issue 17's
// road-like grid (1000 × 1000, a tenth of the edges dropped, weights
// 1..1000, undirected) from 10,000 random sources: on the GPU engine (the
// CSR built on the device, as the CLI does) and on the CPU engine; ns/op is
// the run's time, and the log gives the summary's algorithm line, which for
// the GPU says the device run's share. -test.short runs a 300 × 300 grid.
func BenchmarkNearestLayout(b *testing.B) {
	side, k := 1000, 10000
	if testing.Short() {
		side, k = 300, 900
	}
	e, ids, sources := nearestBenchGrid(side, k)
	n := side * side
	for _, engine := range []string{"gpu", "cpu"} {
		b.Run(fmt.Sprintf("grid%d/sources=%d/%s", side, k, engine), func(b *testing.B) {
			if st := GPUStatus(); engine == "gpu" && !st.Available {
				b.Skip("no GPU: " + st.Reason)
			}
			table := &arrowio.EdgeTable{Edges: e, Vertices: ids, Name: "grid"}
			g, err := LoadGraph(table, LoadOptions{Undirected: true, Engine: engine, Sources: k})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			opt := Options{Query: Query{Layout: arrowio.LayoutNearest, Sources: sources}, Resources: Resources{Engine: engine}}
			var rows int64
			var sum *Summary
			b.ResetTimer()
			for b.Loop() {
				rows = 0
				sum, err = runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
					rows += r.NumRows()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if sum.Engine != engine || rows < int64(n)/2 {
				b.Fatalf("ran on %s, %d rows", sum.Engine, rows)
			}
			b.Logf("%s: %s", engine, sum.Algorithm)
		})
	}
}

// nearestBenchGrid is issue 17's road-like grid of side × side vertices (a
// tenth of the edges dropped, weights 1..1000, int64 ids 0..n-1) and k
// random sources among them, the same on every call.
func nearestBenchGrid(side, k int) (graph.Edges, *arrowio.Vertices, []string) {
	rng := rand.New(rand.NewPCG(17, 4))
	n := side * side
	e := graph.Edges{NumVertices: n}
	add := func(u, v int) {
		if rng.Float64() < 0.1 {
			return
		}
		e.Src = append(e.Src, int32(u))
		e.Dst = append(e.Dst, int32(v))
		e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(1000)))
	}
	for r := range side {
		for c := range side {
			if c+1 < side {
				add(r*side+c, r*side+c+1)
			}
			if r+1 < side {
				add(r*side+c, (r+1)*side+c)
			}
		}
	}
	ids := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
	for i := range ids.Ints {
		ids.Ints[i] = int64(i)
	}
	var sources []string
	for _, p := range rng.Perm(n)[:k] {
		sources = append(sources, fmt.Sprint(p))
	}
	return e, ids, sources
}

// BenchmarkNearestHost times the host's part of the nearest layout on
// issue 17's grid, the engine's result computed once beforehand: the
// sources resolved, the records built and written to an IPC file as
// `pathctl run --nearest -o out.arrow` does (the pipeline time the bench
// reports, less the engine's run and the output's close).
func BenchmarkNearestHost(b *testing.B) {
	side, k := 1000, 10000
	if testing.Short() {
		side, k = 300, 900
	}
	e, ids, sources := nearestBenchGrid(side, k)
	table := &arrowio.EdgeTable{Edges: e, Vertices: ids, Name: "grid"}
	g, err := LoadGraph(table, LoadOptions{Undirected: true, Engine: "cpu"})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	dense, err := g.resolveSources(sources)
	if err != nil {
		b.Fatal(err)
	}
	res, err := cpu.New().Nearest(context.Background(), g.CSR, dense, graph.Request{})
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "nearest.arrow")
	b.Run(fmt.Sprintf("grid%d/sources=%d", side, k), func(b *testing.B) {
		for b.Loop() {
			if _, err := g.resolveSources(sources); err != nil {
				b.Fatal(err)
			}
			builder := arrowio.NewResultBuilder(arrowio.LayoutNearest, g.Table.Vertices, res.Type, false, nil)
			w, err := arrowio.CreateResult(out, builder.Schema(), arrowio.WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := builder.Nearest(res, w.Write); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// TestNearestLayoutThroughCH runs the nearest layout of the algorithm ch
// on the CPU engine (one upward search from every source, one sweep of
// the hierarchy), through the hierarchy the graph keeps and through an
// index, on random graphs of every weight kind, directed and undirected,
// with and without a cutoff and --reverse: the rows must be the
// independent oracle's, and the summary must name ch.
func TestNearestLayoutThroughCH(t *testing.T) {
	rng := testgraphs.Rand(t, 45)
	for trial := range 16 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Unweighted, testgraphs.Int, testgraphs.Float64}[trial%4]
		tr := newNearestTrial(t, rng, trial, 1+rng.IntN(300), kind, "cpu")
		table, g, q, reverse, what := tr.table, tr.g, tr.q, tr.reverse, tr.what
		opt := q.options(graph.CH, "cpu")
		opt.Reverse = reverse
		if trial%2 == 1 {
			h, err := g.BuildHierarchy(context.Background(), 0)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			opt.Index = h
		}
		got, sum := collectNearest(t, g, opt)
		if sum.Engine != "cpu" || !strings.Contains(sum.Algorithm, "nearest source: ch") {
			t.Fatalf("%s: ran on engine %s (%s), want ch on the CPU", what, sum.Engine, sum.Algorithm)
		}
		if oracle := nearestSourceOracle(t, table, trial%3 == 0, reverse, q); fmt.Sprint(got) != fmt.Sprint(oracle) {
			t.Fatalf("%s:\n     ch %v\n oracle %v", what, got, oracle)
		}
		g.Close()
	}
}
