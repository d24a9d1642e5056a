package hierarchy

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// testGraph is one drawn graph of the property tests.
type testGraph struct {
	name string
	g    *graph.CSR
}

func mustBuildCSR(t testing.TB, e *graph.Edges, undirected bool) *graph.CSR {
	t.Helper()
	g, err := graph.Build(e, graph.BuildOptions{Undirected: undirected})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// drawGraphs draws the property tests' graphs from rng.
func drawGraphs(t testing.TB, rng *rand.Rand) []testGraph {
	t.Helper()
	var out []testGraph
	add := func(name string, e *graph.Edges, undirected bool) {
		out = append(out, testGraph{name, mustBuildCSR(t, e, undirected)})
	}
	add("road-grid", testgraphs.RoadGrid(rng, 9+rng.IntN(6), 10+rng.IntN(8), 0.3, 0, 20), false)
	add("road-grid-zero-weights", testgraphs.RoadGrid(rng, 8, 11, 0.2, 0.3, 5), false)
	add("road-grid-all-one-way", testgraphs.RoadGrid(rng, 10, 10, 1, 0.05, 9), false)
	random := func(o testgraphs.RandomOptions) *graph.Edges {
		e, _ := testgraphs.Random(rng, o)
		return e
	}
	add("random-sparse", random(testgraphs.RandomOptions{N: 150, M: 300, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 30}), false)
	add("random-dense", random(testgraphs.RandomOptions{N: 60, M: 600, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 100}), false)
	add("random-undirected", random(testgraphs.RandomOptions{N: 120, M: 200, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 10}), true)
	add("duplicates", random(testgraphs.RandomOptions{N: 80, M: 200, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 9, Duplicates: 150}), false)
	add("isolated-vertices", random(testgraphs.RandomOptions{N: 200, M: 60, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 5}), false)
	add("ties", random(testgraphs.RandomOptions{N: 100, M: 400, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 2}), false)
	add("unweighted", random(testgraphs.RandomOptions{N: 100, M: 250, Kind: testgraphs.Unweighted}), false)
	add("float32-dyadic", random(testgraphs.RandomOptions{N: 100, M: 300, Kind: testgraphs.Float32, MinWeight: 0, MaxWeight: 4, Dyadic: true}), false)
	add("float64-dyadic", random(testgraphs.RandomOptions{N: 100, M: 300, Kind: testgraphs.Float64, MinWeight: 1, MaxWeight: 4, Dyadic: true}), false)

	// Many components: several random pieces on disjoint id ranges.
	comps := &graph.Edges{NumVertices: 200}
	for c := range 8 {
		piece := random(testgraphs.RandomOptions{N: 25, M: 45, Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 12})
		for i := range piece.Src {
			comps.Src = append(comps.Src, piece.Src[i]+int32(25*c))
			comps.Dst = append(comps.Dst, piece.Dst[i]+int32(25*c))
			comps.IntWeights = append(comps.IntWeights, piece.IntWeights[i])
		}
	}
	add("components", comps, false)

	// A star: the hub reaches every leaf, a random half of the leaves
	// reach the hub.
	star := &graph.Edges{NumVertices: 120}
	for leaf := int32(1); leaf < 120; leaf++ {
		star.Src, star.Dst, star.IntWeights = append(star.Src, 0), append(star.Dst, leaf), append(star.IntWeights, int64(rng.IntN(10)))
		if rng.IntN(2) == 0 {
			star.Src, star.Dst, star.IntWeights = append(star.Src, leaf), append(star.Dst, 0), append(star.IntWeights, int64(rng.IntN(10)))
		}
	}
	add("star", star, false)

	// A deep DAG: a chain with random forward skips.
	dag := &graph.Edges{NumVertices: 200}
	for u := int32(0); u+1 < 200; u++ {
		dag.Src, dag.Dst, dag.IntWeights = append(dag.Src, u), append(dag.Dst, u+1), append(dag.IntWeights, int64(1+rng.IntN(5)))
	}
	for range 150 {
		u := int32(rng.IntN(199))
		v := u + 1 + int32(rng.IntN(int(199-u)))
		dag.Src, dag.Dst, dag.IntWeights = append(dag.Src, u), append(dag.Dst, v), append(dag.IntWeights, int64(rng.IntN(40)))
	}
	add("deep-dag", dag, false)

	// Equal paths side by side: s reaches t through many middle vertices,
	// each path of the same length, so that a round contracts several
	// middles at once, each the other's witness.
	ties := &graph.Edges{NumVertices: 40}
	for mid := int32(2); mid < 40; mid++ {
		zero := int64(rng.IntN(2))
		ties.Src = append(ties.Src, 0, mid, 1, mid)
		ties.Dst = append(ties.Dst, mid, 1, mid, 0)
		ties.IntWeights = append(ties.IntWeights, zero, 1-zero, 1, 0)
	}
	add("equal-paths", ties, false)
	return out
}

// refRow is the oracle's row from s, as float64 with +Inf unreachable.
func refRow(t testing.TB, g *graph.CSR, s graph.VertexID) []float64 {
	t.Helper()
	switch g.Type {
	case graph.DistInt32:
		return refRowOf[int32](t, g, s)
	case graph.DistInt64:
		return refRowOf[int64](t, g, s)
	case graph.DistFloat32:
		return refRowOf[float32](t, g, s)
	}
	return refRowOf[float64](t, g, s)
}

func refRowOf[D graph.Number](t testing.TB, g *graph.CSR, s graph.VertexID) []float64 {
	t.Helper()
	d, err := ref.Distances[D](g, s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(d))
	inf := graph.Infinity[D]()
	for i, x := range d {
		if x == inf {
			out[i] = math.Inf(1)
		} else {
			out[i] = float64(x)
		}
	}
	return out
}

// oracle holds every row of a graph's distances.
func oracle(t testing.TB, g *graph.CSR) [][]float64 {
	rows := make([][]float64, g.NumVertices)
	for s := range rows {
		rows[s] = refRow(t, g, graph.VertexID(s))
	}
	return rows
}

// checkHierarchy compares every query of h on g with the oracle: PHAST
// from every source, Distance for every pair, and a Table of random
// sources and targets, repeats included.
func checkHierarchy(t *testing.T, rng *rand.Rand, name string, g *graph.CSR, h *Hierarchy, want [][]float64) {
	t.Helper()
	n := g.NumVertices
	q := h.NewQuery()
	row := make([]int64, n)
	for s := range n {
		if err := q.DistancesFrom(graph.VertexID(s), row); err != nil {
			t.Fatal(err)
		}
		for v := range n {
			if got := h.Float(row[v]); got != want[s][v] {
				t.Fatalf("%s: PHAST d(%d, %d) = %v, Dijkstra %v", name, s, v, got, want[s][v])
			}
		}
		for v := range n {
			d, err := q.Distance(graph.VertexID(s), graph.VertexID(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Float(d); got != want[s][v] {
				t.Fatalf("%s: Distance(%d, %d) = %v, Dijkstra %v", name, s, v, got, want[s][v])
			}
		}
	}
	if n == 0 {
		return
	}
	sources := make([]graph.VertexID, 1+rng.IntN(40))
	targets := make([]graph.VertexID, 1+rng.IntN(40))
	for i := range sources {
		sources[i] = graph.VertexID(rng.IntN(n))
	}
	for i := range targets {
		targets[i] = graph.VertexID(rng.IntN(n))
	}
	table, err := h.Table(sources, targets)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sources {
		for j, v := range targets {
			if got := h.Float(table[i*len(targets)+j]); got != want[s][v] {
				t.Fatalf("%s: Table d(%d, %d) = %v, Dijkstra %v", name, s, v, got, want[s][v])
			}
		}
	}
}

func TestAgainstDijkstra(t *testing.T) {
	rng := testgraphs.Rand(t, 1)
	for _, tg := range drawGraphs(t, rng) {
		want := oracle(t, tg.g)
		for _, o := range []struct {
			name string
			opts Options
		}{
			{"defaults", Options{}},
			{"tiny-witness-searches", Options{WitnessSettled: 1, SimulateSettled: 1, Workers: 1, MaxShortcutsPerArc: 1000}},
			{"four-workers", Options{Workers: 4}},
			{"four-workers-short-searches", Options{WitnessSettled: 3, SimulateSettled: 2, Workers: 4, MaxShortcutsPerArc: 1000}},
		} {
			h, err := Build(tg.g, o.opts)
			if err != nil {
				t.Fatalf("%s/%s: %v", tg.name, o.name, err)
			}
			checkHierarchy(t, rng, tg.name+"/"+o.name, tg.g, h, want)
		}
	}
}

// TestAgainstDijkstraMoreSeeds repeats the road-like and random graphs
// with fresh draws.
func TestAgainstDijkstraMoreSeeds(t *testing.T) {
	rng := testgraphs.Rand(t, 2)
	for trial := range 6 {
		var e *graph.Edges
		if trial%2 == 0 {
			e = testgraphs.RoadGrid(rng, 6+rng.IntN(10), 6+rng.IntN(10), rng.Float64(), rng.Float64()/3, 1+rng.IntN(50))
		} else {
			e, _ = testgraphs.Random(rng, testgraphs.RandomOptions{N: 20 + rng.IntN(150), M: rng.IntN(500), Kind: testgraphs.Int, MinWeight: 0, MaxWeight: 1 + rng.IntN(100)})
		}
		g := mustBuildCSR(t, e, false)
		h, err := Build(g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkHierarchy(t, rng, fmt.Sprintf("trial %d", trial), g, h, oracle(t, g))
	}
}

// TestCases runs the shared table of small graphs with non-negative
// weights.
func TestCases(t *testing.T) {
	rng := testgraphs.Rand(t, 3)
	for _, c := range testgraphs.Cases() {
		if c.HasNegative() {
			continue
		}
		g, err := c.CSR()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		h, err := Build(g, Options{})
		if !Exact(g) {
			if !errors.Is(err, ErrInexact) {
				t.Fatalf("%s: Exact is false but Build says %v", c.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		checkHierarchy(t, rng, c.Name, g, h, oracle(t, g))
	}
}

// TestSameForAnyWorkers checks that the hierarchy, byte for byte in its
// index file, does not depend on the number of workers that contract it.
func TestSameForAnyWorkers(t *testing.T) {
	rng := testgraphs.Rand(t, 6)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 40, 40, 0.3, 0.1, 20), false)
	var first []byte
	for _, workers := range []int{1, 2, 5} {
		h, err := Build(g, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := h.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatalf("%d workers build another hierarchy than 1 worker", workers)
		}
	}
}

func TestReverse(t *testing.T) {
	rng := testgraphs.Rand(t, 4)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 9, 9, 0.5, 0.1, 9), false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkHierarchy(t, rng, "reversed", graph.Transpose(g), h.Reverse(), oracle(t, graph.Transpose(g)))
}

func TestBuildRefuses(t *testing.T) {
	rng := testgraphs.Rand(t, 5)
	neg := mustBuildCSR(t, &graph.Edges{NumVertices: 3, Src: []int32{0, 1}, Dst: []int32{1, 2}, IntWeights: []int64{2, -1}}, false)
	if _, err := Build(neg, Options{}); !errors.Is(err, ErrNegativeWeight) {
		t.Errorf("negative weights: %v, want ErrNegativeWeight", err)
	}
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 50, M: 100, Kind: testgraphs.Float64, MinWeight: 0, MaxWeight: 1})
	inexact := mustBuildCSR(t, e, false)
	if Exact(inexact) {
		t.Errorf("Exact reports true for uniform float64 weights")
	}
	if _, err := Build(inexact, Options{}); !errors.Is(err, ErrInexact) {
		t.Errorf("uniform float64 weights: %v, want ErrInexact", err)
	}
	huge := mustBuildCSR(t, &graph.Edges{NumVertices: 3, Src: []int32{0, 1}, Dst: []int32{1, 2}, IntWeights: []int64{math.MaxInt64 / 3, 1}}, false)
	if _, err := Build(huge, Options{}); !errors.Is(err, ErrInexact) {
		t.Errorf("weights near int64's limit: %v, want ErrInexact", err)
	}
	e, _ = testgraphs.Random(rng, testgraphs.RandomOptions{N: 1000, M: 12000, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 100})
	dense := mustBuildCSR(t, e, false)
	if _, err := Build(dense, Options{MaxShortcutsPerArc: 0.25}); !errors.Is(err, ErrTooManyShortcuts) {
		t.Errorf("dense random graph with 0.25 shortcuts per arc: %v, want ErrTooManyShortcuts", err)
	}
	// A random graph of 20 arcs per vertex has no hierarchy: its core
	// turns dense in the first rounds, and the defaults give up there.
	e, _ = testgraphs.Random(rng, testgraphs.RandomOptions{N: 3000, M: 60000, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 100})
	_, err := Build(mustBuildCSR(t, e, false), Options{})
	if !errors.Is(err, ErrTooManyShortcuts) || !strings.Contains(err.Error(), "arcs each on average") {
		t.Errorf("random graph of 20 arcs per vertex: %v, want ErrTooManyShortcuts for a dense core", err)
	}
}

func TestQueriesRefuse(t *testing.T) {
	g := mustBuildCSR(t, &graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}}, false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.DistancesFrom(3, make([]int64, 3)); err == nil {
		t.Error("DistancesFrom(3) on 3 vertices: no error")
	}
	if err := h.DistancesFrom(0, make([]int64, 2)); err == nil {
		t.Error("DistancesFrom with 2 slots for 3 vertices: no error")
	}
	if _, err := h.Distance(0, -1); err == nil {
		t.Error("Distance(0, -1): no error")
	}
	if _, err := h.Table([]graph.VertexID{0}, []graph.VertexID{5}); err == nil {
		t.Error("Table with target 5 on 3 vertices: no error")
	}
	row := make([]int64, 3)
	if err := h.DistancesFrom(0, row); err != nil || row[0] != 0 || row[1] != 1 || row[2] != Infinity {
		t.Errorf("DistancesFrom(0) = %v, %v; want [0 1 Infinity]", row, err)
	}
}

// TestPath checks Query.Path on the property tests' graphs: the distance
// is Dijkstra's, and the path starts at s, ends at t, follows arcs of the
// graph and its weights add up to the distance.
func TestPath(t *testing.T) {
	rng := testgraphs.Rand(t, 7)
	for _, tg := range drawGraphs(t, rng) {
		g := tg.g
		n := g.NumVertices
		h, err := Build(g, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		q := h.NewQuery()
		for range 300 {
			s, v := graph.VertexID(rng.IntN(n)), graph.VertexID(rng.IntN(n))
			want := refRow(t, g, s)[v]
			d, path, err := q.Path(s, v)
			if err != nil {
				t.Fatalf("%s: Path(%d, %d): %v", tg.name, s, v, err)
			}
			if got := h.Float(d); got != want {
				t.Fatalf("%s: Path(%d, %d) distance %v, Dijkstra %v", tg.name, s, v, got, want)
			}
			if math.IsInf(want, 1) {
				if path != nil {
					t.Fatalf("%s: a path %v to an unreachable vertex", tg.name, path)
				}
				continue
			}
			if len(path) == 0 || path[0] != s || path[len(path)-1] != v {
				t.Fatalf("%s: Path(%d, %d) = %v", tg.name, s, v, path)
			}
			sum := 0.0
			for i := 0; i+1 < len(path); i++ {
				w, ok := arcWeight(g, path[i], path[i+1])
				if !ok {
					t.Fatalf("%s: Path(%d, %d) = %v: no arc %d→%d", tg.name, s, v, path, path[i], path[i+1])
				}
				sum += w
			}
			if sum != want {
				t.Fatalf("%s: Path(%d, %d) = %v weighs %v, distance %v", tg.name, s, v, path, sum, want)
			}
		}
	}
}

// arcWeight is the weight of the arc u→v of g.
func arcWeight(g *graph.CSR, u, v graph.VertexID) (float64, bool) {
	for k := g.Offsets[u]; k < g.Offsets[u+1]; k++ {
		if g.Targets[k] == v {
			return g.WeightAt(k), true
		}
	}
	return 0, false
}
