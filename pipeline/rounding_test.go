package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// float32Table is an edge table of float32 weights over ids 0..n-1.
func float32Table(e *graph.Edges, name string) *arrowio.EdgeTable {
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
	for i := range e.NumVertices {
		v.Ints = append(v.Ints, int64(i))
	}
	return &arrowio.EdgeTable{Edges: *e, Vertices: v, Name: name}
}

// asFloat32Weights rewrites e's float64 weights as float32 ones.
func asFloat32Weights(e *graph.Edges) *graph.Edges {
	e.Float32Weights = make([]float32, len(e.Float64Weights))
	for i, w := range e.Float64Weights {
		e.Float32Weights[i] = float32(w)
	}
	e.Float64Weights = nil
	return e
}

// roundingGraphs are float32-weighted graphs of several shapes, none made
// for the rounding: uniform random weights with duplicates, an R-MAT of
// other parameters, a deep chain of fractional weights with shortcuts
// (long sums, where float32 steps drift), and a star of zero and tiny
// weights in several components.
func roundingGraphs(t *testing.T) map[string]*graph.Edges {
	t.Helper()
	out := map[string]*graph.Edges{}
	rng := testgraphs.Rand(t, 41)
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 60, M: 300, Kind: testgraphs.Float32, MinWeight: 0, MaxWeight: 30, Duplicates: 40})
	out["random"] = e
	rm, err := gen.RMAT(7, 8, 11, gen.WithFloatWeights(0.1, 10), gen.WithRMATParams(0.45, 0.25, 0.15))
	if err != nil {
		t.Fatal(err)
	}
	if e, err = rm.GraphEdges(); err != nil {
		t.Fatal(err)
	}
	out["rmat"] = asFloat32Weights(e)
	chain := &graph.Edges{NumVertices: 400}
	for v := range 399 {
		chain.Src = append(chain.Src, graph.VertexID(v))
		chain.Dst = append(chain.Dst, graph.VertexID(v+1))
		chain.Float32Weights = append(chain.Float32Weights, float32(0.1+rng.Float64()))
		if v%7 == 0 && v+5 < 400 {
			chain.Src = append(chain.Src, graph.VertexID(v))
			chain.Dst = append(chain.Dst, graph.VertexID(v+5))
			chain.Float32Weights = append(chain.Float32Weights, float32(2+3*rng.Float64()))
		}
	}
	out["chain"] = chain
	star := &graph.Edges{NumVertices: 50}
	for v := 1; v < 50; v++ {
		hub := graph.VertexID(0)
		if v >= 25 {
			hub = 25 // a second component
		}
		if graph.VertexID(v) == hub {
			continue
		}
		w := float32(0)
		if v%3 != 0 {
			w = float32(rng.Float64() * 1e-3)
		}
		star.Src = append(star.Src, hub, graph.VertexID(v))
		star.Dst = append(star.Dst, graph.VertexID(v), hub)
		star.Float32Weights = append(star.Float32Weights, w, w)
	}
	out["star"] = star
	return out
}

// float64Oracle is Bellman-Ford's float64 distances from every vertex of
// a float64 CSR built from e's float32 weights, independent of the run's
// graph.
func float64Oracle(t *testing.T, e *graph.Edges) [][]float64 {
	t.Helper()
	csr, err := graph.Build(e, graph.BuildOptions{DistType: graph.DistFloat64})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, e.NumVertices)
	for s := range rows {
		if rows[s], err = ref.Distances[float64](csr, graph.VertexID(s)); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// float32Drift counts the cells where float32 Bellman-Ford (sums rounded at
// every step) differs from the float64 distances rounded once.
func float32Drift(t *testing.T, e *graph.Edges, want [][]float64) int {
	t.Helper()
	csr, err := graph.Build(e, graph.BuildOptions{DistType: graph.DistFloat32})
	if err != nil {
		t.Fatal(err)
	}
	drift := 0
	for s, row := range want {
		d, err := ref.Distances[float32](csr, graph.VertexID(s))
		if err != nil {
			t.Fatal(err)
		}
		for v, x := range row {
			if d[v] != float32(x) {
				drift++
			}
		}
	}
	return drift
}

// collectFloat32Matrix runs opt in the matrix layout and returns its rows,
// failing unless the values are float32.
func collectFloat32Matrix(t *testing.T, g *Graph, opt Options) [][]float32 {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout, opt.Allocator = arrowio.LayoutMatrix, mem
	var rows [][]float32
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		list := r.Column(1).(*array.FixedSizeList)
		vals, ok := list.ListValues().(*array.Float32)
		if !ok {
			return fmt.Errorf("matrix values of type %s, want float32", list.ListValues().DataType())
		}
		w := int(list.DataType().(*arrow.FixedSizeListType).Len())
		for i := range int(r.NumRows()) {
			rows = append(rows, append([]float32(nil), vals.Float32Values()[i*w:(i+1)*w]...))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestFloat32WeightsRoundedOnce: float32 weights give float32 results that
// are the float64 distances rounded once (scipy's float64 distances cast
// to float32), in the matrix, pairs and stats layouts and under a cutoff,
// on every engine; the stats sums are the float64 distances' sums.
func TestFloat32WeightsRoundedOnce(t *testing.T) {
	drift := 0
	for name, e := range roundingGraphs(t) {
		want := float64Oracle(t, e)
		drift += float32Drift(t, e, want)
		for _, engine := range engines(t) {
			g, err := LoadGraph(float32Table(e, name), LoadOptions{Engine: engine})
			if err != nil {
				t.Fatal(err)
			}
			if g.DistType() != graph.DistFloat32 {
				t.Fatalf("%s: results of %s, want float32", name, g.DistType())
			}
			base := Options{Resources: Resources{Engine: engine}}
			for s, row := range collectFloat32Matrix(t, g, base) {
				for v, x := range row {
					if x != float32(want[s][v]) {
						t.Fatalf("%s %s: matrix %d -> %d = %v, want %v (float64 %v)", name, engine, s, v, x, float32(want[s][v]), want[s][v])
					}
				}
			}
			// The cutoff compares the float64 distance: a median one.
			// (A float32 value, so that a distance within it rounds
			// within it too.)
			cut := float64(float32(want[0][len(want[0])/2]))
			if math.IsInf(cut, 1) {
				cut = 1
			}
			q := queryCase{cutoff: cut, hasCutoff: true, defaultBlocks: true}
			for s := range e.NumVertices {
				q.sources = append(q.sources, graph.VertexID(s))
			}
			pairs, err := collectPairs(t, g, q.options(graph.Auto, engine))
			if err != nil {
				t.Fatal(err)
			}
			at := 0
			for s, row := range want {
				for v, d := range row {
					if math.IsInf(d, 1) || d > cut {
						continue
					}
					if at >= len(pairs) || pairs[at] != (pairRow{source: int64(s), target: int64(v), distance: float64(float32(d))}) {
						t.Fatalf("%s %s cutoff %v: pair %d is %v, want (%d→%d %v)", name, engine, cut, at, pairs[min(at, len(pairs)-1)], s, v, float32(d))
					}
					at++
				}
			}
			if at != len(pairs) {
				t.Fatalf("%s %s cutoff %v: %d pairs, want %d", name, engine, cut, len(pairs), at)
			}
			// The k nearest of the rounded values, ties by vertex, with
			// and without the cutoff (on the float64 distance).
			for _, k := range []int{1, 5} {
				for _, withCut := range []bool{false, true} {
					kq := queryCase{sources: q.sources, k: k, defaultBlocks: true, cutoff: cut, hasCutoff: withCut}
					got, err := collectPairs(t, g, kq.options(graph.Auto, engine))
					if err != nil {
						t.Fatal(err)
					}
					wantK := kq.expectPairsOf(e.NumVertices, func(s graph.VertexID) []float64 {
						row := make([]float64, len(want[s]))
						for v, d := range want[s] {
							if withCut && d > cut {
								d = math.Inf(1)
							}
							row[v] = float64(float32(d))
						}
						return row
					})
					if fmt.Sprint(got) != fmt.Sprint(wantK) {
						t.Fatalf("%s %s: the %d nearest (cutoff %v: %v) differ from the rounded oracle's", name, engine, k, cut, withCut)
					}
				}
			}
			st := collectStats(t, g, base)
			for s, row := range want {
				var sum, ecc float64
				reach := 0
				for v, d := range row {
					if v != s && !math.IsInf(d, 1) {
						reach++
						sum += d
						ecc = max(ecc, d)
					}
				}
				if st[1][s] != float64(reach) || (reach > 0 && st[2][s] != float64(float32(ecc))) ||
					math.Abs(st[3][s]-sum) > 1e-12*max(1, sum) {
					t.Fatalf("%s %s: stats of %d: reachable %v eccentricity %v sum %v, want %d %v %v",
						name, engine, s, st[1][s], st[2][s], st[3][s], reach, float32(ecc), sum)
				}
			}
			g.Close()
		}
	}
	if drift == 0 {
		t.Fatal("float32 sums never drift from the rounded float64 distances on these graphs: the test checks nothing float32 would miss")
	}
}

// TestFloat32RoundingTies: the k nearest are chosen on the rounded values,
// ties by vertex, and a cutoff compares the float64 distance. From vertex
// 0, vertices 2 and 3 lie at 2^24 and vertex 1 at 2^24 + 1, which rounds
// to 2^24 in float32: the nearest is vertex 1 (the tie's smallest), and a
// cutoff of 2^24 keeps it out.
func TestFloat32RoundingTies(t *testing.T) {
	const big = 1 << 24
	e := &graph.Edges{NumVertices: 4, Src: []graph.VertexID{0, 3, 0}, Dst: []graph.VertexID{3, 1, 2},
		Float32Weights: []float32{big, 1, big}}
	for _, engine := range engines(t) {
		g, err := LoadGraph(float32Table(e, "ties"), LoadOptions{Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			q    queryCase
			want []pairRow
		}{
			{queryCase{sources: []graph.VertexID{0}, k: 1}, []pairRow{{0, 1, big, 1}}},
			{queryCase{sources: []graph.VertexID{0}, k: 3}, []pairRow{{0, 1, big, 1}, {0, 2, big, 2}, {0, 3, big, 3}}},
			{queryCase{sources: []graph.VertexID{0}, k: 3, cutoff: big, hasCutoff: true}, []pairRow{{0, 2, big, 1}, {0, 3, big, 2}}},
			{queryCase{sources: []graph.VertexID{0}, cutoff: big, hasCutoff: true}, []pairRow{{0, 0, 0, 0}, {0, 2, big, 0}, {0, 3, big, 0}}},
		} {
			got, err := collectPairs(t, g, c.q.options(graph.Auto, engine))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s k %d cutoff %v: %v, want %v", engine, c.q.k, c.q.cutoff, got, c.want)
			}
		}
		g.Close()
	}
}

// TestFloat32WeightsAsFloat64 keeps float64 results where they are asked
// for: --dist-type float64, and a float64 matrix of float32 weights, which
// carries the float64 distances unrounded.
func TestFloat32WeightsAsFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: 30, M: 120, Kind: testgraphs.Float32, MinWeight: 0, MaxWeight: 10})
	want := float64Oracle(t, e)
	g, err := LoadGraph(float32Table(e, "f"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sch, err := schemaOf(g, Options{Query: Query{Layout: arrowio.LayoutMatrix, MatrixType: "float64"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sch.Field(1).Type.(*arrow.FixedSizeListType).Elem(); got.ID() != arrow.FLOAT64 {
		t.Fatalf("float64 matrix of float32 weights has %s values", got)
	}
	var got []float64
	_, err = runQuery(context.Background(), g, Options{Query: Query{Layout: arrowio.LayoutMatrix, MatrixType: "float64"}}, func(r arrow.RecordBatch) error {
		got = append(got, r.Column(1).(*array.FixedSizeList).ListValues().(*array.Float64).Float64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for s, row := range want {
		for v, d := range row {
			if got[s*len(row)+v] != d {
				t.Fatalf("float64 matrix %d -> %d = %v, want %v", s, v, got[s*len(row)+v], d)
			}
		}
	}
	g64, err := LoadGraph(float32Table(e, "f"), LoadOptions{DistType: graph.DistFloat64})
	if err != nil {
		t.Fatal(err)
	}
	defer g64.Close()
	if g64.DistType() != graph.DistFloat64 {
		t.Fatalf("--dist-type float64 of float32 weights gives %s results", g64.DistType())
	}
}
