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
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/cpu"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// refRow is the oracle's row of distances from s as float64, +Inf where
// unreachable.
func refRow(t *testing.T, g *graph.CSR, s graph.VertexID) []float64 {
	t.Helper()
	var out []float64
	conv := func(d []float64, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = d
	}
	switch g.Type {
	case graph.DistInt32:
		conv(asFloats(ref.Dijkstra[int32](g, s)))
	case graph.DistInt64:
		conv(asFloats(ref.Dijkstra[int64](g, s)))
	case graph.DistFloat32:
		conv(asFloats(ref.Dijkstra[float32](g, s)))
	default:
		conv(asFloats(ref.Dijkstra[float64](g, s)))
	}
	return out
}

func asFloats[D graph.Number](d []D, err error) ([]float64, error) {
	if err != nil {
		return nil, err
	}
	inf := graph.Infinity[D]()
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = float64(x)
		if x == inf {
			out[i] = math.Inf(1)
		}
	}
	return out, nil
}

// pairRow is one row of a pairs result; rank is 0 without a rank column.
type pairRow struct {
	source, target int64
	distance       float64
	rank           int32
}

func (r pairRow) String() string {
	return fmt.Sprintf("(%d→%d %v #%d)", r.source, r.target, r.distance, r.rank)
}

// collectPairs runs opt in the pairs layout on a graph of int64 ids.
func collectPairs(t *testing.T, g *Graph, opt Options) ([]pairRow, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout, opt.Allocator = arrowio.LayoutPairs, mem
	var out []pairRow
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		src := r.Column(0).(*array.Int64)
		tgt := r.Column(1).(*array.Int64)
		rankAt := r.Schema().FieldIndices(arrowio.ColRank)
		for i := 0; i < int(r.NumRows()); i++ {
			row := pairRow{source: src.Value(i), target: tgt.Value(i), distance: floatAt(r.Column(2), i)}
			if len(rankAt) > 0 {
				row.rank = r.Column(rankAt[0]).(*array.Int32).Value(i)
			}
			out = append(out, row)
		}
		return nil
	})
	return out, err
}

func floatAt(a arrow.Array, i int) float64 {
	switch a := a.(type) {
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	}
	return math.NaN()
}

// queryCase is one random narrowed request with the oracle's rows.
type queryCase struct {
	sources, targets []graph.VertexID // targets nil: every vertex
	cutoff           float64
	hasCutoff        bool
	k                int
	defaultBlocks    bool // the pipeline plans the blocks (else blocks of 3)
}

func (q queryCase) options(algo graph.Algorithm, engine string) Options {
	opt := Options{Query: Query{Algorithm: algo, Cutoff: q.cutoff, HasCutoff: q.hasCutoff, K: q.k}, Resources: Resources{Engine: engine, MaxBlock: 3}}
	if q.defaultBlocks {
		opt.MaxBlock = 0
	}
	for _, s := range q.sources {
		opt.Sources = append(opt.Sources, fmt.Sprint(s))
	}
	if q.targets != nil {
		opt.Targets = []string{}
		for _, v := range q.targets {
			opt.Targets = append(opt.Targets, fmt.Sprint(v))
		}
	}
	return opt
}

// columns are the vertices of the answer's columns, in order.
func (q queryCase) columns(n int) []graph.VertexID {
	if q.targets != nil {
		return q.targets
	}
	all := make([]graph.VertexID, n)
	for i := range all {
		all[i] = graph.VertexID(i)
	}
	return all
}

// within reports whether a distance d counts as reached under q.
func (q queryCase) within(d float64) bool {
	return !math.IsInf(d, 1) && (!q.hasCutoff || d <= q.cutoff)
}

// expectPairs is what the pairs layout must hold for q: every reached
// column in order, or the k nearest other vertices ranked.
func (q queryCase) expectPairs(t *testing.T, g *graph.CSR) []pairRow {
	return q.expectPairsOf(g.NumVertices, func(s graph.VertexID) []float64 { return refRow(t, g, s) })
}

// expectPairsOf is expectPairs over the oracle rows rowOf(s) of a graph of
// n vertices (the forward rows, or the reversed ones of --reverse).
func (q queryCase) expectPairsOf(n int, rowOf func(s graph.VertexID) []float64) []pairRow {
	var want []pairRow
	for _, s := range q.sources {
		row := rowOf(s)
		var got []pairRow
		cols := q.columns(n)
		if q.k > 0 {
			cols = graph.Distinct(cols)
		}
		for _, v := range cols {
			if q.within(row[v]) && (q.k == 0 || v != s) {
				got = append(got, pairRow{source: int64(s), target: int64(v), distance: row[v]})
			}
		}
		if q.k > 0 {
			slices.SortStableFunc(got, func(a, b pairRow) int {
				if a.distance != b.distance {
					if a.distance < b.distance {
						return -1
					}
					return 1
				}
				return int(a.target - b.target)
			})
			got = got[:min(len(got), q.k)]
			for i := range got {
				got[i].rank = int32(i + 1)
			}
		}
		want = append(want, got...)
	}
	return want
}

// randomQuery draws sources, and by chance targets (in random order), a
// cutoff among the graph's distances and a k.
func randomQuery(rng *rand.Rand, t *testing.T, g *graph.CSR) queryCase {
	n := g.NumVertices
	var q queryCase
	for range 1 + rng.IntN(6) {
		// Distinct sources: Run drops repeats (TestResolveSourcesDropsRepeats).
		if s := graph.VertexID(rng.IntN(n)); !slices.Contains(q.sources, s) {
			q.sources = append(q.sources, s)
		}
	}
	if rng.IntN(3) > 0 {
		perm := rng.Perm(n)
		for _, v := range perm[:1+rng.IntN(n)] {
			q.targets = append(q.targets, graph.VertexID(v))
		}
		if rng.IntN(4) == 0 { // a repeated target: a column twice, one of the k nearest once
			q.targets = append(q.targets, q.targets[rng.IntN(len(q.targets))])
		}
	}
	if rng.IntN(3) > 0 {
		row := refRow(t, g, q.sources[0])
		var finite []float64
		for _, d := range row {
			if !math.IsInf(d, 1) {
				finite = append(finite, d)
			}
		}
		q.cutoff, q.hasCutoff = finite[rng.IntN(len(finite))], true
		if rng.IntN(4) == 0 {
			q.cutoff += 0.5 // between distances
		}
	}
	return q
}

// TestQueriesAgainstOracle checks targets, cutoff and k nearest, alone and
// together, in the pairs, matrix and stats layouts, against Dijkstra's
// oracle, on random graphs of every weight type, for the kernels that
// prune at the cutoff (auto) and those clipped after (the seeds').
func TestQueriesAgainstOracle(t *testing.T) { queryTrials(t, "cpu") }

// TestQueriesGPU is TestQueriesAgainstOracle on the GPU engine, whose
// runners gather the targets and clip at the cutoff on the device, in
// blocks started ahead, reduce the narrowed stats on the device
// (engineNarrowedAhead) and select the k nearest there (engineSelects).
func TestQueriesGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skipf("no usable GPU: %s", st.Reason)
	}
	queryTrials(t, "gpu")
}

func queryTrials(t *testing.T, engine string) {
	rng := testgraphs.Rand(t, 17)
	for trial := range 24 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64, testgraphs.Unweighted}[trial%4]
		n := 2 + rng.IntN(40)
		g, err := LoadGraph(randomTable(rng, n, rng.IntN(4*n), kind), LoadOptions{Undirected: trial%5 == 0})
		if err != nil {
			t.Fatal(err)
		}
		algos := []graph.Algorithm{graph.Auto, graph.Dijkstra, graph.Delta, graph.BellmanFord, graph.Edge}
		if kind == testgraphs.Unweighted {
			algos = append(algos, graph.BFS, graph.BFSLevel)
		}
		for _, algo := range algos {
			q := randomQuery(rng, t, g.CSR)
			name := fmt.Sprintf("%s/trial %d/%s/%v n=%d", engine, trial, algo, kind, n)
			verifyQuery(t, name, g, q, algo, engine)
			q.k = 1 + rng.IntN(5)
			verifyQuery(t, name+" k", g, q, algo, engine)
		}
	}
}

func verifyQuery(t *testing.T, name string, g *Graph, q queryCase, algo graph.Algorithm, engine string) {
	t.Helper()
	opt := q.options(algo, engine)
	got, err := collectPairs(t, g, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if want := q.expectPairs(t, g.CSR); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s %+v: pairs\n got %v\nwant %v", name, q, got, want)
	}
	if q.k > 0 {
		return
	}
	cols := q.columns(g.NumVertices())
	mat, err := collectMatrix(t, g, opt)
	if err != nil {
		t.Fatalf("%s: matrix: %v", name, err)
	}
	stats := collectStats(t, g, opt)
	for i, s := range q.sources {
		row := refRow(t, g.CSR, s)
		var reach int
		var sum, ecc float64
		for j, v := range cols {
			want := math.Inf(1)
			if q.within(row[v]) {
				want = row[v]
			}
			if got := mat[i*len(cols)+j]; got != want {
				t.Fatalf("%s %+v: matrix[%d][%d] = %v, want %v", name, q, i, j, got, want)
			}
			if v != s && q.within(row[v]) {
				reach++
				sum += row[v]
				ecc = max(ecc, row[v])
			}
		}
		if stats[1][i] != float64(reach) || math.Abs(stats[3][i]-sum) > 1e-6*max(1, sum) {
			t.Fatalf("%s %+v: stats of source %d: reachable %v sum %v, want %d %v", name, q, s, stats[1][i], stats[3][i], reach, sum)
		}
		if reach > 0 && stats[2][i] != ecc {
			t.Fatalf("%s %+v: eccentricity of source %d: %v, want %v", name, q, s, stats[2][i], ecc)
		}
	}
}

// TestQueriesHostNarrowed runs the host-side narrowing the GPU engine
// uses (a runner that is no NarrowRunner) on the CPU's full rows, against
// the CPU engine's own narrowing.
func TestQueriesHostNarrowed(t *testing.T) {
	rng := testgraphs.Rand(t, 18)
	for trial := range 10 {
		n := 2 + rng.IntN(30)
		g, err := LoadGraph(randomTable(rng, n, rng.IntN(4*n), testgraphs.Float32), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q := randomQuery(rng, t, g.CSR)
		if q.targets == nil && !q.hasCutoff {
			q.targets = []graph.VertexID{graph.VertexID(rng.IntN(n))}
		}
		targets := q.targets
		req := graph.Request{Algorithm: graph.Auto, Targets: targets, Cutoff: q.cutoff, HasCutoff: q.hasCutoff, WithPredecessors: true}
		eng := cpu.New()
		full, err := eng.Prepare(context.Background(), g.CSR, graph.Request{Algorithm: graph.Auto, WithPredecessors: true})
		if err != nil {
			t.Fatal(err)
		}
		narrowed, err := eng.Prepare(context.Background(), g.CSR, req)
		if err != nil {
			t.Fatal(err)
		}
		host := narrowRunner(plainRunner{full}, req, n, false)
		if _, ok := host.(*hostNarrowed); !ok {
			t.Fatalf("a runner that is no NarrowRunner runs as %T", host)
		}
		// The CSR of float32 weights holds them as float64 (rounding.go).
		a := graph.NewTargetBlock(q.sources, targets, n, g.CSR.Type, true)
		b := graph.NewTargetBlock(q.sources, targets, n, g.CSR.Type, true)
		if err := host.Run(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if err := narrowed.Run(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(graph.DistOf[float64](a), graph.DistOf[float64](b)) || !slices.Equal(a.Pred, b.Pred) {
			t.Fatalf("trial %d %+v: host narrowing differs from the CPU engine's", trial, q)
		}
	}
}

// plainRunner hides every optional interface of a runner.
type plainRunner struct{ graph.Runner }

// TestReverseAgainstOracle checks --reverse: the pairs of a reversed run
// hold d(v → s), the oracle's distance from v to the source s (one
// Dijkstra from each v on the graph as given, no transposed copy), and the
// matrix row of s holds the same distances in column order, +Inf where v
// does not reach s (or only past the cutoff); with targets and cutoffs, on
// graphs of every weight kind, directed and undirected, for auto and the
// seed kernels, on every engine here.
func TestReverseAgainstOracle(t *testing.T) {
	rng := testgraphs.Rand(t, 19)
	for _, engine := range engines(t) {
		reverseTrials(t, rng, engine)
	}
}

func reverseTrials(t *testing.T, rng *rand.Rand, engine string) {
	for trial := range 16 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64, testgraphs.Float32, testgraphs.Unweighted}[trial%4]
		algo := []graph.Algorithm{graph.Auto, graph.Dijkstra, graph.Auto, graph.BellmanFord, graph.Auto, graph.Delta, graph.Auto, graph.Edge}[trial%8]
		n := 2 + rng.IntN(30)
		g, err := LoadGraph(randomTable(rng, n, rng.IntN(4*n), kind), LoadOptions{Undirected: trial%5 == 0})
		if err != nil {
			t.Fatal(err)
		}
		q := randomQuery(rng, t, g.CSR)
		if trial%2 == 0 {
			q.hasCutoff = false
		}
		opt := q.options(algo, engine)
		opt.Reverse = true
		name := fmt.Sprintf("%s, trial %d, %s, %v weights, %d vertices %+v", engine, trial, algo, kind, n, q)
		got, err := collectPairs(t, g, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows := reversedRows(t, g.CSR)
		want := q.expectPairsOf(n, rows)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: reversed pairs\n got %v\nwant %v", name, got, want)
		}
		mat, err := collectMatrix(t, g, opt)
		if err != nil {
			t.Fatalf("%s: matrix: %v", name, err)
		}
		cols := q.columns(n)
		if len(mat) != len(q.sources)*len(cols) {
			t.Fatalf("%s: reversed matrix of %d cells, want %d × %d", name, len(mat), len(q.sources), len(cols))
		}
		for i, s := range q.sources {
			row := rows(s)
			for j, v := range cols {
				want := math.Inf(1)
				if q.within(row[v]) {
					want = row[v]
				}
				if got := mat[i*len(cols)+j]; got != want {
					t.Fatalf("%s: reversed matrix[%d][%d] (source %d, vertex %d) = %v, want d(%d → %d) = %v", name, i, j, s, v, got, v, s, want)
				}
			}
		}
	}
}

// TestNearestAgainstOracle checks the nearest layout: every vertex some
// source reaches (within the cutoff), its distance to the nearest source
// and that source, ties to the smaller source id, against one oracle run
// per source; with --reverse the distances run to the sources.
func TestNearestAgainstOracle(t *testing.T) {
	rng := testgraphs.Rand(t, 20)
	for trial := range 30 {
		kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float32, testgraphs.Float64, testgraphs.Unweighted}[trial%4]
		n := 1 + rng.IntN(40)
		g, err := LoadGraph(randomTable(rng, n, rng.IntN(3*n), kind), LoadOptions{Undirected: trial%5 == 0})
		if err != nil {
			t.Fatal(err)
		}
		q := randomQuery(rng, t, g.CSR)
		q.targets = nil
		opt := q.options(graph.Auto, "cpu")
		opt.Layout = arrowio.LayoutNearest
		opt.Reverse = trial%3 == 1
		want := map[int64]pairRow{} // vertex -> (source, vertex, distance)
		for _, s := range q.sources {
			var row []float64
			if opt.Reverse {
				row = make([]float64, n)
				for v := range n {
					row[v] = refRow(t, g.CSR, graph.VertexID(v))[s]
				}
			} else {
				row = refRow(t, g.CSR, s)
			}
			for v, d := range row {
				if !q.within(d) {
					continue
				}
				if old, ok := want[int64(v)]; !ok || d < old.distance || (d == old.distance && int64(s) < old.source) {
					want[int64(v)] = pairRow{source: int64(s), target: int64(v), distance: d}
				}
			}
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var got []pairRow
		_, err = runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
			if names := fmt.Sprintln(r.Schema().Field(0).Name, r.Schema().Field(1).Name, r.Schema().Field(2).Name); names != "vertex distance source\n" {
				return fmt.Errorf("columns %s", names)
			}
			for i := 0; i < int(r.NumRows()); i++ {
				got = append(got, pairRow{source: r.Column(2).(*array.Int64).Value(i), target: r.Column(0).(*array.Int64).Value(i), distance: floatAt(r.Column(1), i)})
			}
			return nil
		})
		mem.AssertSize(t, 0)
		if err != nil {
			t.Fatal(err)
		}
		var expect []pairRow
		for v := range int64(n) {
			if r, ok := want[v]; ok {
				expect = append(expect, r)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(expect) {
			t.Fatalf("trial %d %+v reverse %v:\n got %v\nwant %v", trial, q, opt.Reverse, got, expect)
		}
	}
	g, err := LoadGraph(randomTable(rng, 5, 8, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery(context.Background(), g, Options{Query: Query{Layout: arrowio.LayoutNearest}}, func(arrow.RecordBatch) error { return nil }); !errors.Is(err, ErrInvalid) {
		t.Errorf("nearest without sources: %v, want ErrInvalid", err)
	}
}

// arcWeight is the lightest arc u -> v of g, as float64.
func arcWeight(g *graph.CSR, u, v graph.VertexID) (float64, bool) {
	best, ok := math.Inf(1), false
	for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
		if g.Targets[k] != v {
			continue
		}
		var w float64
		switch ws := g.Weights.(type) {
		case []int32:
			w = float64(ws[k])
		case []int64:
			w = float64(ws[k])
		case []float32:
			w = float64(ws[k])
		case []float64:
			w = ws[k]
		}
		best, ok = min(best, w), true
	}
	return best, ok
}

// TestPathsAgainstOracle checks every path of the path column: it starts
// at the source, ends at the target, its arcs exist, and their weights sum
// to the row's distance, which is the oracle's; with targets, cutoff and
// k nearest, on every engine here.
func TestPathsAgainstOracle(t *testing.T) {
	rng := testgraphs.Rand(t, 21)
	for _, engine := range engines(t) {
		for trial := range 30 {
			kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64, testgraphs.Unweighted}[trial%3]
			n := 1 + rng.IntN(30)
			g, err := LoadGraph(randomTable(rng, n, rng.IntN(4*n), kind), LoadOptions{Undirected: trial%4 == 0})
			if err != nil {
				t.Fatal(err)
			}
			q := randomQuery(rng, t, g.CSR)
			if trial%3 == 2 {
				q.k = 1 + rng.IntN(4)
			}
			algo := []graph.Algorithm{graph.Auto, graph.Dijkstra, graph.BellmanFord}[trial%3]
			opt := q.options(algo, engine)
			opt.WithPaths, opt.WithPredecessors = true, trial%2 == 0
			got, paths := collectPathRows(t, g, opt, q.k > 0)
			name := fmt.Sprintf("%s trial %d %s %+v", engine, trial, algo, q)
			if want := q.expectPairs(t, g.CSR); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: pairs with paths\n got %v\nwant %v", name, got, want)
			}
			checkPathRows(t, name, g.CSR, got, paths, false)
		}
	}
}

// TestPathsRefusedOnLargeGraphs checks that paths are bounded by their
// estimated output, not by the graph's vertices: one source's paths on a
// graph of 12578 vertices (0.5 MiB) are given, every source's (6.5 GiB)
// are refused with the rows and the size, unless Resources.MaxOutput is
// raised. A finite cutoff does not narrow the estimate; K and targets do.
func TestPathsRefusedOnLargeGraphs(t *testing.T) {
	const n = 12578
	rng := testgraphs.Rand(t, 22)
	g, err := LoadGraph(randomTable(rng, n, n, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, Sources: []string{"0"}}}); err != nil {
		t.Errorf("paths of one source on %d vertices (0.5 MiB): %v", n, err)
	}
	_, err = schemaOf(g, Options{Query: Query{WithPaths: true}})
	for _, want := range []string{"invalid request: paths too large: 12578 sources × 12578 vertices: 158206084 rows, at least 6.5 GiB of output, above the limit of 1.0 GiB",
		"fewer sources, some targets or the k nearest"} {
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrPathsTooLarge) || !strings.Contains(err.Error(), want) {
			t.Errorf("paths for every pair of %d vertices: %v, want %q", n, err, want)
		}
	}
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true}, Resources: Resources{MaxOutput: 7 << 30}}); err != nil {
		t.Errorf("paths for every pair under a limit of 7 GiB: %v", err)
	}
	// A limit below one source's output refuses it, in bytes.
	_, err = schemaOf(g, Options{Query: Query{WithPaths: true, Sources: []string{"0"}}, Resources: Resources{MaxOutput: 1000}})
	if !errors.Is(err, ErrPathsTooLarge) || !strings.Contains(err.Error(), "at least 0.5 MiB of output, above the limit of 1000 bytes") {
		t.Errorf("paths of one source under a limit of 1000 bytes: %v", err)
	}
	// A cutoff, finite or not, leaves every pair's estimate.
	for _, cut := range []float64{math.Inf(1), 1e9, 1} {
		if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, Cutoff: cut, HasCutoff: true}}); !errors.Is(err, ErrPathsTooLarge) {
			t.Errorf("paths for every pair under a cutoff of %v: %v", cut, err)
		}
		if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, Sources: []string{"0"}, Cutoff: cut, HasCutoff: true}}); err != nil {
			t.Errorf("paths of one source under a cutoff of %v: %v", cut, err)
		}
	}
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, K: 3}}); err != nil {
		t.Errorf("paths of every source's 3 nearest: %v", err)
	}
	// A K or a list of targets as wide as the graph narrows nothing.
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, K: 1 << 40}}); !errors.Is(err, ErrPathsTooLarge) {
		t.Errorf("paths of the 2^40 nearest: %v", err)
	}
	every := make([]string, n)
	for i := range every {
		every[i] = "0"
	}
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, Targets: every}}); !errors.Is(err, ErrPathsTooLarge) {
		t.Errorf("paths to %d targets: %v", len(every), err)
	}
	if _, err := schemaOf(g, Options{Query: Query{WithPaths: true, Targets: every[:100]}}); err != nil {
		t.Errorf("paths to 100 targets: %v", err)
	}
	// Run refuses as Schema does, before any row.
	_, err = runQuery(context.Background(), g, Options{Query: Query{WithPaths: true}, Resources: Resources{Engine: "cpu"}}, func(arrow.RecordBatch) error {
		t.Error("a record of a refused run")
		return nil
	})
	if !errors.Is(err, ErrPathsTooLarge) {
		t.Errorf("Run of paths for every pair: %v", err)
	}
}

// TestNearestClamped runs the k nearest with a K far above the vertices:
// the rows are those of K = n-1, and nothing is sized from the K given
// (a K of 2^62 made a block of sources × K cells).
func TestNearestClamped(t *testing.T) {
	g, err := LoadGraph(randomTable(testgraphs.Rand(t, 5), 6, 12, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(k int, targets []string) string {
		var out []string
		_, err := runQuery(context.Background(), g, Options{Query: Query{K: k, Targets: targets}, Resources: Resources{Engine: "cpu"}}, func(r arrow.RecordBatch) error {
			for i := range int(r.NumRows()) {
				out = append(out, r.Column(0).ValueStr(i)+">"+r.Column(1).ValueStr(i)+"="+r.Column(2).ValueStr(i))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("k %d: %v", k, err)
		}
		return strings.Join(out, " ")
	}
	want := rows(g.NumVertices()-1, nil)
	for _, k := range []int{g.NumVertices(), 1 << 31, 1 << 62, math.MaxInt} {
		if got := rows(k, nil); got != want {
			t.Errorf("k %d: %s, want %s", k, got, want)
		}
	}
	if got, want := rows(1<<62, []string{"1", "2"}), rows(2, []string{"1", "2"}); got != want {
		t.Errorf("k 2^62 over two targets: %s, want %s", got, want)
	}
}
