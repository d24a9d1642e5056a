package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// betweennessGraph loads n vertices with ids 10, 11, … and the arcs
// src[i] → dst[i] (dense), weighted by w where not nil.
func betweennessGraph(t *testing.T, n int, src, dst []graph.VertexID, w []int64, undirected bool) *Graph {
	t.Helper()
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
	for i := range n {
		v.Ints = append(v.Ints, int64(10+i))
	}
	tbl := &arrowio.EdgeTable{Edges: graph.Edges{NumVertices: n, Src: src, Dst: dst, IntWeights: w}, Vertices: v, Name: "b.csv"}
	g, err := LoadGraph(tbl, LoadOptions{Undirected: undirected, Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// collectBetweenness runs runBetweennessQuery and returns the values in vertex
// order, checking the ids and that nothing stays allocated.
func collectBetweenness(t *testing.T, g *Graph, opt Options, bopt BetweennessOptions) ([]float64, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator, opt.Engine = mem, "cpu"
	var out []float64
	_, err := runBetweennessQuery(context.Background(), g, opt, bopt, func(r arrow.RecordBatch) error {
		ids, vals := r.Column(0).(*array.Int64), r.Column(1).(*array.Float64)
		for i := range int(r.NumRows()) {
			if ids.Value(i) != int64(10+len(out)) {
				return fmt.Errorf("row %d: vertex %d", len(out), ids.Value(i))
			}
			out = append(out, vals.Value(i))
		}
		return nil
	})
	return out, err
}

func sameValues(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !(got[i] == want[i] || math.Abs(got[i]-want[i]) <= 1e-12 || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			return false
		}
	}
	return true
}

// TestBetweennessScaledAsNetworkx: the 3-path examples of networkx's
// betweenness_centrality docstring (networkx 3.6), directed and undirected,
// normalized or not, with endpoints or not, and its k = 2 sample of 0 and
// 2 given as sources.
func TestBetweennessScaledAsNetworkx(t *testing.T) {
	path := func(undirected bool) *Graph {
		return betweennessGraph(t, 3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, nil, undirected)
	}
	third := 1.0 / 3
	cases := []struct {
		name       string
		undirected bool
		sources    []string
		bopt       BetweennessOptions
		want       []float64
	}{
		{"undirected raw", true, nil, BetweennessOptions{Unnormalized: true}, []float64{0, 1, 0}},
		{"undirected raw endpoints", true, nil, BetweennessOptions{Unnormalized: true, Endpoints: true}, []float64{2, 3, 2}},
		{"undirected", true, nil, BetweennessOptions{}, []float64{0, 1, 0}},
		{"undirected endpoints", true, nil, BetweennessOptions{Endpoints: true}, []float64{2 * third, 1, 2 * third}},
		{"directed raw", false, nil, BetweennessOptions{Unnormalized: true}, []float64{0, 1, 0}},
		{"directed raw endpoints", false, nil, BetweennessOptions{Unnormalized: true, Endpoints: true}, []float64{2, 3, 2}},
		{"directed endpoints", false, nil, BetweennessOptions{Endpoints: true}, []float64{third, 0.5, third}},
		{"directed", false, nil, BetweennessOptions{}, []float64{0, 0.5, 0}},
		// networkx's k=2 with seed 42 samples 0 and 2: {0.75, 1, 0.75}.
		{"sample as sources, endpoints", true, []string{"10", "12"}, BetweennessOptions{Endpoints: true}, []float64{0.75, 1, 0.75}},
		// Unnormalized given sources keep their raw sums, halved: {3, 4, 3} / 2.
		{"sources raw endpoints", true, []string{"10", "12"}, BetweennessOptions{Unnormalized: true, Endpoints: true}, []float64{1.5, 2, 1.5}},
		// A sample of one without endpoints: NaN at the source, as networkx.
		{"one source", false, []string{"10"}, BetweennessOptions{}, []float64{math.NaN(), 1, 0}},
	}
	for _, c := range cases {
		got, err := collectBetweenness(t, path(c.undirected), Options{Query: Query{Sources: c.sources}}, c.bopt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !sameValues(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// gridGraph is a rows×cols grid, undirected, weights 1..3 by position.
func gridGraph(t *testing.T, rows, cols int) *Graph {
	var src, dst []graph.VertexID
	var w []int64
	for r := range rows {
		for c := range cols {
			v := graph.VertexID(r*cols + c)
			if c+1 < cols {
				src, dst, w = append(src, v), append(dst, v+1), append(w, int64(1+(r+c)%3))
			}
			if r+1 < rows {
				src, dst, w = append(src, v), append(dst, v+graph.VertexID(cols)), append(w, int64(1+(r*c)%2))
			}
		}
	}
	return betweennessGraph(t, rows*cols, src, dst, w, true)
}

// TestBetweennessSampleIsSources: k sampled sources give what the same
// vertices given as sources give (normalized), the sample is k distinct
// vertices in ascending order, the same for one seed and another for
// another, and matches the values the Python tests reimplement.
func TestBetweennessSampleIsSources(t *testing.T) {
	g := gridGraph(t, 5, 6)
	sample := SampleSources(30, 7, 99)
	if again := SampleSources(30, 7, 99); fmt.Sprint(again) != fmt.Sprint(sample) {
		t.Fatalf("seed 99 drew %v, then %v", sample, again)
	}
	if other := SampleSources(30, 7, 100); fmt.Sprint(other) == fmt.Sprint(sample) {
		t.Errorf("seeds 99 and 100 drew one sample %v", sample)
	}
	for i := 1; i < len(sample); i++ {
		if sample[i] <= sample[i-1] {
			t.Fatalf("sample %v: not distinct and ascending", sample)
		}
	}
	// splitmix64 from 0: its first output is 0xE220A8397B1DCDAF, so the
	// first swap of 0..9 takes place 0xE220A8397B1DCDAF mod 10 = 5.
	if got := SampleSources(10, 1, 0); len(got) != 1 || got[0] != graph.VertexID(0xE220A8397B1DCDAF%10) {
		t.Errorf("SampleSources(10, 1, 0) = %v, want [%d]", got, uint64(0xE220A8397B1DCDAF)%10)
	}
	var ids []string
	for _, v := range sample {
		ids = append(ids, fmt.Sprint(10+v))
	}
	for _, endpoints := range []bool{false, true} {
		sampled, err := collectBetweenness(t, g, Options{}, BetweennessOptions{Sample: 7, Seed: 99, Endpoints: endpoints})
		if err != nil {
			t.Fatal(err)
		}
		given, err := collectBetweenness(t, g, Options{Query: Query{Sources: ids}}, BetweennessOptions{Endpoints: endpoints})
		if err != nil {
			t.Fatal(err)
		}
		if !sameValues(sampled, given) {
			t.Errorf("endpoints %v: sample %v, the same sources given %v", endpoints, sampled, given)
		}
	}
	// k = n is the exact betweenness.
	all, _ := collectBetweenness(t, g, Options{}, BetweennessOptions{})
	if kn, _ := collectBetweenness(t, g, Options{}, BetweennessOptions{Sample: 30, Seed: 5}); !sameValues(kn, all) {
		t.Errorf("k = n: %v, exact %v", kn, all)
	}
}

// TestBetweennessSourcesPartitionAddUp: unnormalized, the results of a
// partition of the vertices into source lists add up to the exact
// unnormalized betweenness (with and without endpoints).
func TestBetweennessSourcesPartitionAddUp(t *testing.T) {
	g := gridGraph(t, 4, 5)
	for _, endpoints := range []bool{false, true} {
		bopt := BetweennessOptions{Unnormalized: true, Endpoints: endpoints}
		exact, err := collectBetweenness(t, g, Options{}, bopt)
		if err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, len(exact))
		for part := range 3 {
			var ids []string
			for v := part; v < 20; v += 3 {
				ids = append(ids, fmt.Sprint(10+v))
			}
			got, err := collectBetweenness(t, g, Options{Query: Query{Sources: ids}}, bopt)
			if err != nil {
				t.Fatal(err)
			}
			for v := range got {
				sum[v] += got[v]
			}
		}
		for v := range sum {
			if math.Abs(sum[v]-exact[v]) > 1e-9*max(1, exact[v]) {
				t.Fatalf("endpoints %v: vertex %d: parts add to %v, exact %v", endpoints, v, sum[v], exact[v])
			}
		}
	}
}

// TestBetweennessRefusals: what the layout cannot do is one clear error.
func TestBetweennessRefusals(t *testing.T) {
	path := betweennessGraph(t, 3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, []int64{1, 2}, false)
	negative := betweennessGraph(t, 3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, []int64{1, -2}, false)
	zero := betweennessGraph(t, 3, []graph.VertexID{0, 1}, []graph.VertexID{1, 2}, []int64{0, 2}, false)
	cases := []struct {
		name string
		g    *Graph
		opt  Options
		bopt BetweennessOptions
		is   error
		says string
	}{
		{"negative", negative, Options{}, BetweennessOptions{}, ErrNegativeWeight, "negative weight -2 on edge 11 -> 12: betweenness needs non-negative weights"},
		{"zero", zero, Options{}, BetweennessOptions{}, ErrInvalid, "edge 10 -> 11 weighs 0"},
		{"k above n", path, Options{}, BetweennessOptions{Sample: 4}, ErrInvalid, "k 4 is more than the graph's 3 vertices"},
		{"k and sources", path, Options{Query: Query{Sources: []string{"10"}}}, BetweennessOptions{Sample: 1}, ErrInvalid, "give k or the sources, not both"},
		{"targets", path, Options{Query: Query{Targets: []string{"10"}}}, BetweennessOptions{}, ErrInvalid, "targets"},
		{"cutoff", path, Options{Query: Query{HasCutoff: true, Cutoff: 2}}, BetweennessOptions{}, ErrInvalid, "cutoff"},
		{"algorithm", path, Options{Query: Query{Algorithm: graph.BellmanFord}}, BetweennessOptions{}, ErrInvalid, "betweenness runs dijkstra"},
		{"unknown source", path, Options{Query: Query{Sources: []string{"99"}}}, BetweennessOptions{}, ErrUnknownSource, "99"},
	}
	for _, c := range cases {
		_, err := collectBetweenness(t, c.g, c.opt, c.bopt)
		if !errors.Is(err, c.is) || !strings.Contains(fmt.Sprint(err), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.is, c.says)
		}
	}
	// Hops ignore the weights, negative and zero ones too.
	if _, err := collectBetweenness(t, zero, Options{Query: Query{Algorithm: graph.BFS}}, BetweennessOptions{}); err != nil {
		t.Errorf("bfs on zero weights: %v", err)
	}
}

// TestBetweennessLayoutThroughRun: a query of the betweenness layout
// with no betweenness options runs networkx's defaults, and its records
// carry the schema its Prepared query gives.
func TestBetweennessLayoutThroughRun(t *testing.T) {
	g := gridGraph(t, 3, 4)
	want, err := collectBetweenness(t, g, Options{}, BetweennessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Query: Query{Layout: arrowio.LayoutBetweenness}, Resources: Resources{Engine: "cpu"}}
	schema, err := schemaOf(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	sum, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		if !r.Schema().Equal(schema) {
			return fmt.Errorf("schema %v, Schema says %v", r.Schema(), schema)
		}
		got = append(got, r.Column(1).(*array.Float64).Float64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(got, want) || sum.Rows != 12 || sum.Sources != 12 {
		t.Errorf("Run: %v (%d rows, %d sources), want %v", got, sum.Rows, sum.Sources, want)
	}
}

// TestBetweennessProgress: Progress is called once per block of sources
// summed, with the sources done rising to all of them, and the Prepared
// query's plan names the sample, the CPU engine and the search.
func TestBetweennessProgress(t *testing.T) {
	const n = 70 // five blocks of at most 16 sources
	var src, dst []graph.VertexID
	for v := range n - 1 {
		src, dst = append(src, graph.VertexID(v)), append(dst, graph.VertexID(v+1))
	}
	g := betweennessGraph(t, n, src, dst, nil, true)
	var calls []int64
	opt := Options{Resources: Resources{Threads: 2}, Progress: func(done, total int64) {
		if total != n {
			t.Errorf("progress total %d, want %d", total, n)
		}
		calls = append(calls, done)
	}}
	if _, err := collectBetweenness(t, g, opt, BetweennessOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []int64{16, 32, 48, 64, 70}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("progress calls %v, want %v", calls, want)
	}
	q, err := Prepare(g, Options{Query: Query{Layout: arrowio.LayoutBetweenness, Betweenness: BetweennessOptions{Sample: 9, Seed: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	engine, algo := q.Plan()
	if est := q.Estimate(); est.Sources != 9 || est.Rows != n || !strings.HasPrefix(engine, "cpu") || algo != "betweenness (Brandes, BFS per source)" {
		t.Errorf("plan of a sample of 9: %d sources, %d rows, engine %q, algorithm %q", est.Sources, est.Rows, engine, algo)
	}
}
