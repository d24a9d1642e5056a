package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// collectStats runs the stats layout and returns every column as float64,
// column by column (NaN for nulls).
func collectStats(t *testing.T, g *Graph, opt Options) [][]float64 {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Layout = arrowio.LayoutStats
	opt.Allocator = mem
	var cols [][]float64
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		if cols == nil {
			cols = make([][]float64, r.NumCols())
		}
		for c := range cols {
			col := r.Column(c)
			for i := 0; i < col.Len(); i++ {
				x := math.NaN()
				if !col.IsNull(i) {
					switch a := col.(type) {
					case *array.Int32:
						x = float64(a.Value(i))
					case *array.Int64:
						x = float64(a.Value(i))
					case *array.Float32:
						x = float64(a.Value(i))
					case *array.Float64:
						x = a.Value(i)
					default:
						t.Fatalf("stats column %d of type %s", c, col.DataType())
					}
				}
				cols[c] = append(cols[c], x)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// sameStats fails unless the GPU's stats columns got equal the CPU's
// want, but for the float64 harmonic sums (the last column), which the
// device adds in another order: within a relative 1e-12, every term being
// positive.
func sameStats(t *testing.T, got, want [][]float64, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d columns, want %d", what, len(got), len(want))
	}
	harmonic := len(want) - 1
	for c := range want {
		if len(got[c]) != len(want[c]) {
			t.Fatalf("%s: column %d has %d rows, want %d", what, c, len(got[c]), len(want[c]))
		}
		for i := range want[c] {
			a, b := got[c][i], want[c][i]
			same := a == b || (math.IsNaN(a) && math.IsNaN(b))
			if c == harmonic {
				same = math.Abs(a-b) <= 1e-12*math.Abs(b)
			}
			if !same {
				t.Fatalf("%s: row %d column %d: gpu %v, cpu %v", what, i, c, a, b)
			}
		}
	}
}

// TestGPUStatsLayout checks the stats layout computed on the GPU (RunStats)
// against the CPU engine's, through the whole pipeline, on random integer
// graphs: every column equal, except the float64 harmonic sums, which the
// device adds in another order (within a relative 1e-12; every term is
// positive).
func TestGPUStatsLayout(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 5))
	for trial := 0; trial < 6; trial++ {
		n := 2 + rng.IntN(900)
		e := graph.Edges{NumVertices: n}
		for i := 0; i < n*3; i++ {
			e.Src = append(e.Src, int32(rng.IntN(n)))
			e.Dst = append(e.Dst, int32(rng.IntN(n)))
			e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(100)))
		}
		v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
		for i := 0; i < n; i++ {
			v.Ints = append(v.Ints, int64(i))
		}
		g, err := LoadGraph(&arrowio.EdgeTable{Edges: e, Vertices: v, Name: "random"}, LoadOptions{Undirected: trial%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, algo := range []graph.Algorithm{graph.Auto, graph.Dijkstra, graph.BFS} {
			want := collectStats(t, g, Options{Query: Query{Algorithm: algo}, Resources: Resources{Engine: "cpu"}})
			got := collectStats(t, g, Options{Query: Query{Algorithm: algo}, Resources: Resources{Engine: "gpu", MaxBlock: 1 + rng.IntN(300)}})
			sameStats(t, got, want, fmt.Sprintf("seed %d: trial %d: %s", seed, trial, algo))
		}
	}
}

// TestGPUStatsInBlockOrder checks a stats run of several blocks on the
// GPU's batched kernel, whose runner orders the sources by the graph
// (plan.Graph.BlockOrder): on an undirected R-MAT graph with many leaves,
// in blocks of a tenth and of two thirds of the vertices, the log says the
// order was taken and every row equals the CPU engine's, in the caller's
// order (the harmonic sums within a relative 1e-12). On one device: on
// several the order is the caller's.
func TestGPUStatsInBlockOrder(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	el, err := gen.RMAT(11, 8, 3, gen.WithWeights(1, 100))
	if err != nil {
		t.Fatal(err)
	}
	e, err := el.GraphEdges()
	if err != nil {
		t.Fatal(err)
	}
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64}
	for i := 0; i < e.NumVertices; i++ {
		v.Ints = append(v.Ints, int64(i))
	}
	g, err := LoadGraph(&arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "rmat"}, LoadOptions{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	n := g.NumVertices()
	want := collectStats(t, g, Options{Resources: Resources{Engine: "cpu"}})
	for _, block := range []int{n / 10, 2 * n / 3} {
		var log strings.Builder
		got := collectStats(t, g, Options{Resources: Resources{Engine: "gpu", Devices: []int{0}, MaxBlock: block}, Log: &log})
		if !strings.Contains(log.String(), "block order") {
			t.Errorf("blocks of %d of %d: the log does not say the sources ran in block order:\n%s", block, n, log.String())
		}
		sameStats(t, got, want, fmt.Sprintf("blocks of %d", block))
	}
}
