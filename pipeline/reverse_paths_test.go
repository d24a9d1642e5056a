package pipeline

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// reversedRows returns the oracle's rows of a reversed run on g: row s
// holds, for every vertex v, d(v → s) (+Inf where v does not reach s). It
// runs Dijkstra's oracle from every vertex of g as given, so that no
// transposed graph of the code under test enters the expectation.
func reversedRows(t *testing.T, g *graph.CSR) func(s graph.VertexID) []float64 {
	t.Helper()
	from := make([][]float64, g.NumVertices) // from[v][s] = d(v → s)
	for v := range g.NumVertices {
		from[v] = refRow(t, g, graph.VertexID(v))
	}
	return func(s graph.VertexID) []float64 {
		row := make([]float64, g.NumVertices)
		for v := range row {
			row[v] = from[v][s]
		}
		return row
	}
}

// TestReversePathsAgainstOracle checks --with-paths with --reverse. A row
// (source s, target v, distance d(v → s)) carries the path the issue's
// "Exact shapes" fix: the ids from the source to the target, both
// included, so the path starts at s and ends at v. The run is on the
// transposed graph, so the path's consecutive ids (a, b) are the arc
// b -> a of the graph as given: read backwards, the path is the route from
// v to s, which is what README.md says. Every path is checked that way:
// its ends, each arc's existence in that direction, and that the arcs'
// weights sum to the row's distance, which must be the oracle's d(v → s);
// the rows themselves must be the oracle's, with targets, cutoffs and k
// nearest, on random graphs of every weight kind, directed and undirected,
// with and without the predecessor column, on every engine here.
func TestReversePathsAgainstOracle(t *testing.T) {
	rng := testgraphs.Rand(t, 43)
	for _, engine := range engines(t) {
		for trial := range 32 {
			kind := []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64, testgraphs.Unweighted, testgraphs.Float32}[trial%4]
			n := 1 + rng.IntN(30)
			g, err := LoadGraph(randomTable(rng, n, rng.IntN(4*n), kind), LoadOptions{Undirected: trial%5 == 0})
			if err != nil {
				t.Fatal(err)
			}
			q := randomQuery(rng, t, g.CSR)
			if trial%3 == 2 {
				q.k = 1 + rng.IntN(4)
			}
			algos := []graph.Algorithm{graph.Auto, graph.Dijkstra, graph.BellmanFord}
			if kind == testgraphs.Unweighted {
				algos = append(algos, graph.BFS)
			}
			algo := algos[trial%len(algos)]
			opt := q.options(algo, engine)
			opt.Reverse, opt.WithPaths, opt.WithPredecessors = true, true, trial%2 == 0
			name := fmt.Sprintf("%s trial %d %s %v weights, %d vertices, undirected %v %+v", engine, trial, algo, kind, n, trial%5 == 0, q)
			got, paths := collectPathRows(t, g, opt, q.k > 0)
			if want := q.expectPairsOf(n, reversedRows(t, g.CSR)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: reversed pairs with paths\n got %v\nwant %v", name, got, want)
			}
			checkPathRows(t, name, g.CSR, got, paths, true)
		}
	}
}

// checkPathRows checks each row's path on g: it runs from the row's
// source to its target, over arcs of g (walked backwards where reversed:
// consecutive ids (a, b) are then the arc b -> a) whose weights sum to the
// row's distance.
func checkPathRows(t *testing.T, name string, g *graph.CSR, rows []pairRow, paths [][]int64, reversed bool) {
	t.Helper()
	for i, p := range paths {
		row := rows[i]
		if len(p) == 0 || p[0] != row.source || p[len(p)-1] != row.target {
			t.Fatalf("%s: path %v of row %v does not run from its source to its target", name, p, row)
		}
		sum := 0.0
		for j := 1; j < len(p); j++ {
			from, to := p[j-1], p[j]
			if reversed {
				from, to = to, from
			}
			w, ok := arcWeight(g, graph.VertexID(from), graph.VertexID(to))
			if !ok {
				t.Fatalf("%s: path %v of row %v steps from %d to %d, but the graph has no arc %d -> %d", name, p, row, p[j-1], p[j], from, to)
			}
			sum += w
		}
		if math.Abs(sum-row.distance) > 1e-9*max(1, row.distance) {
			t.Fatalf("%s: path %v of row %v weighs %v, not its distance", name, p, row, sum)
		}
	}
}

// collectPathRows runs opt (pairs with paths) on a graph of int64 ids and
// returns its rows and each row's path; ranked reads the rank column.
func collectPathRows(t *testing.T, g *Graph, opt Options, ranked bool) ([]pairRow, [][]int64) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout, opt.Allocator = arrowio.LayoutPairs, mem
	var rows []pairRow
	var paths [][]int64
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		last := int(r.NumCols()) - 1
		if name := r.Schema().Field(last).Name; name != arrowio.ColPath {
			return fmt.Errorf("last column %q, want %q", name, arrowio.ColPath)
		}
		rankAt := r.Schema().FieldIndices(arrowio.ColRank)
		if ranked != (len(rankAt) > 0) {
			return fmt.Errorf("rank column present %v, want %v", len(rankAt) > 0, ranked)
		}
		list := r.Column(last).(*array.List)
		ids := list.ListValues().(*array.Int64)
		for i := 0; i < int(r.NumRows()); i++ {
			row := pairRow{source: r.Column(0).(*array.Int64).Value(i), target: r.Column(1).(*array.Int64).Value(i), distance: floatAt(r.Column(2), i)}
			if ranked {
				row.rank = r.Column(rankAt[0]).(*array.Int32).Value(i)
			}
			rows = append(rows, row)
			lo, hi := list.ValueOffsets(i)
			var p []int64
			for j := lo; j < hi; j++ {
				p = append(p, ids.Value(int(j)))
			}
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("engine %s: %v", opt.Engine, err)
	}
	return rows, paths
}
