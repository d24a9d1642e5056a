package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestBetweennessOnGPU runs the betweenness layouts (vertices and edges)
// with --engine gpu
// through the whole pipeline, against the CPU engine's, on random graphs
// with ties (weights 1..3), hop counts and an undirected one, normalized
// or not, with endpoints, a sample and given sources, in blocks of one
// and several sizes; and checks that float32 weights (float64 arcs) run
// on the device too, equal to the CPU engine's.
func TestBetweennessOnGPU(t *testing.T) {
	if st := GPUStatus(); !st.Available {
		t.Skip("no GPU: " + st.Reason)
	}
	seed := testgraphs.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	for _, c := range []struct {
		name       string
		n, m       int
		maxW       int
		undirected bool
	}{{"ties", 150, 500, 3, false}, {"undirected", 171, 400, 9, true}, {"hops", 160, 600, 0, false}} {
		var src, dst []graph.VertexID
		var w []int64
		for range c.m {
			src, dst = append(src, graph.VertexID(rng.IntN(c.n))), append(dst, graph.VertexID(rng.IntN(c.n)))
			if c.maxW > 0 {
				w = append(w, int64(1+rng.IntN(c.maxW)))
			}
		}
		g := betweennessGraph(t, c.n, src, dst, w, c.undirected)
		for _, b := range []struct {
			layout  arrowio.Layout
			bopt    BetweennessOptions
			sources []string
			block   int
		}{
			{arrowio.LayoutBetweenness, BetweennessOptions{}, nil, 0},
			{arrowio.LayoutBetweenness, BetweennessOptions{Unnormalized: true, Endpoints: true}, nil, 37},
			{arrowio.LayoutBetweenness, BetweennessOptions{Sample: 70, Seed: 5}, nil, 1},
			{arrowio.LayoutBetweenness, BetweennessOptions{Unnormalized: true}, []string{"10", "11", "12", "40", "40", "90"}, 0},
			{arrowio.LayoutEdgeBetweenness, BetweennessOptions{}, nil, 0},
			{arrowio.LayoutEdgeBetweenness, BetweennessOptions{Unnormalized: true}, nil, 29},
			{arrowio.LayoutEdgeBetweenness, BetweennessOptions{Sample: 40, Seed: 9}, nil, 1},
			{arrowio.LayoutEdgeBetweenness, BetweennessOptions{}, []string{"10", "40", "40", "90"}, 0},
		} {
			opt := Options{Query: Query{Layout: b.layout, Betweenness: b.bopt}, Resources: Resources{MaxBlock: b.block}}
			if b.sources != nil {
				opt.Sources = b.sources
			}
			want, _ := gpuBetweenness(t, g, opt, "cpu")
			var notes strings.Builder
			opt.Notice = &notes
			got, sum := gpuBetweenness(t, g, opt, "gpu")
			if sum.Engine != "gpu" || notes.Len() != 0 {
				t.Fatalf("seed %d %s %s %+v: engine %s, notes %q", seed, c.name, b.layout, b.bopt, sum.Engine, notes.String())
			}
			if len(got) != len(want) {
				t.Fatalf("seed %d %s %s: %d rows, want %d", seed, c.name, b.layout, len(got), len(want))
			}
			for v := range want {
				if d := math.Abs(got[v] - want[v]); d > 1e-9*math.Max(1, math.Abs(want[v])) && !(math.IsNaN(got[v]) && math.IsNaN(want[v])) {
					t.Fatalf("seed %d %s %s %+v: row %d: %v, want %v", seed, c.name, b.layout, b.bopt, v, got[v], want[v])
				}
			}
		}
	}
	// float32 weights: float64 arcs (rounding.go), on the device, equal to
	// the CPU engine's.
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{10, 11, 12, 13}}
	tbl := &arrowio.EdgeTable{Edges: graph.Edges{NumVertices: 4, Src: []graph.VertexID{0, 1, 0, 3}, Dst: []graph.VertexID{1, 2, 3, 2},
		Float32Weights: []float32{0.5, 1.25, 0.75, 1}}, Vertices: v, Name: "f.csv"}
	g, err := LoadGraph(tbl, LoadOptions{Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var notes strings.Builder
	opt := Options{Query: Query{Layout: arrowio.LayoutBetweenness}, Notice: &notes}
	want, _ := gpuBetweenness(t, g, opt, "cpu")
	got, sum := gpuBetweenness(t, g, opt, "gpu")
	if sum.Engine != "gpu" || notes.Len() != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("float32 weights: engine %s, notes %q, betweenness %v, want %v from the CPU engine", sum.Engine, notes.String(), got, want)
	}
}

// gpuBetweenness runs opt's betweenness layout on engine and returns its
// values (the last column) in row order and the summary.
func gpuBetweenness(t *testing.T, g *Graph, opt Options, engine string) ([]float64, *Summary) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator, opt.Engine = mem, engine
	var out []float64
	sum, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		out = append(out, r.Column(int(r.NumCols())-1).(*array.Float64).Float64Values()...)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	return out, sum
}

// TestBetweennessBlock checks the blocks' sizing: the fixed bytes come off
// each device's budget once, a block holds a device's sources per device,
// and the sources and --max-block bound it.
func TestBetweennessBlock(t *testing.T) {
	for _, c := range []struct {
		name                       string
		budget, fixed, per         int64
		devices, sources, maxBlock int
		want                       int
	}{
		{"fixed off the budget", 1000, 300, 7, 1, 1 << 20, 0, 100},
		{"two devices", 1000, 300, 7, 2, 1 << 20, 0, 200},
		{"fewer sources", 1000, 300, 7, 1, 42, 0, 42},
		{"max block", 1000, 300, 7, 1, 1 << 20, 64, 64},
		{"exactly one source", 307, 300, 7, 1, 10, 0, 1},
	} {
		got, err := betweennessBlock(c.budget, c.fixed, c.per, c.devices, c.sources, c.maxBlock)
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	_, err := betweennessBlock(306, 300, 7, 1, 10, 0)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "307 bytes one source of betweenness needs (300 of them whatever the block)") {
		t.Fatalf("a budget below one source: %v, want ErrInvalid naming 307 and 300 bytes", err)
	}
}
