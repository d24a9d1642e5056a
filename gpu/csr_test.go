package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// sameCSR reports how got differs from want (graph.Build's), or "".
func sameCSR(got, want *graph.CSR) string {
	switch {
	case got.NumVertices != want.NumVertices:
		return fmt.Sprintf("%d vertices, want %d", got.NumVertices, want.NumVertices)
	case got.Type != want.Type:
		return fmt.Sprintf("type %s, want %s", got.Type, want.Type)
	case got.Weighted != want.Weighted || got.Undirected != want.Undirected:
		return fmt.Sprintf("weighted %v undirected %v, want %v %v", got.Weighted, got.Undirected, want.Weighted, want.Undirected)
	case got.MinWeight != want.MinWeight || got.MaxWeight != want.MaxWeight:
		return fmt.Sprintf("weights in [%v, %v], want [%v, %v]", got.MinWeight, got.MaxWeight, want.MinWeight, want.MaxWeight)
	case !slices.Equal(got.Offsets, want.Offsets):
		return fmt.Sprintf("offsets %v, want %v", head(got.Offsets), head(want.Offsets))
	case !slices.Equal(got.Targets, want.Targets):
		return fmt.Sprintf("targets %v, want %v", head(got.Targets), head(want.Targets))
	}
	gw, err := sliceBytes(got.Weights)
	if err != nil {
		return err.Error()
	}
	ww, _ := sliceBytes(want.Weights)
	if !slices.Equal(gw, ww) {
		return fmt.Sprintf("weights %v, want %v", got.Weights, want.Weights)
	}
	return ""
}

func head[T any](s []T) []T { return s[:min(len(s), 40)] }

// messyEdges draws a random edge list over n vertices with many self-loops,
// duplicate rows (some with equal weights), and one high-degree vertex whose
// row is longer than a thread block.
func messyEdges(rng *rand.Rand, n, m int, kind testgraphs.WeightKind, uniform bool) *graph.Edges {
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: m, Kind: kind, MinWeight: 0, MaxWeight: 9,
		Dyadic: !uniform, Duplicates: m / 3})
	if n == 0 {
		return e
	}
	extra := m / 4
	for i := 0; i < extra; i++ {
		k := rng.IntN(len(e.Src) + 1)
		var s, d graph.VertexID
		switch i % 3 {
		case 0: // self-loop
			s = graph.VertexID(rng.IntN(n))
			d = s
		case 1: // the hub
			s, d = 0, graph.VertexID(rng.IntN(n))
		default: // an exact duplicate of a row
			if k == len(e.Src) {
				k--
			}
			if k < 0 {
				continue
			}
			s, d = e.Src[k], e.Dst[k]
		}
		e.Src = append(e.Src, s)
		e.Dst = append(e.Dst, d)
		switch {
		case e.IntWeights != nil:
			e.IntWeights = append(e.IntWeights, int64(rng.IntN(10)))
		case e.Float32Weights != nil:
			e.Float32Weights = append(e.Float32Weights, float32(rng.IntN(80))/8)
		case e.Float64Weights != nil:
			e.Float64Weights = append(e.Float64Weights, float64(rng.IntN(80))/8)
		}
	}
	return e
}

// TestBuildCSRMatchesBuild builds random messy edge lists on the device and
// compares them with graph.Build, for every weight type (forced types
// included), directed and undirected.
func TestBuildCSRMatchesBuild(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	for _, size := range [][2]int{{0, 0}, {1, 3}, {5, 0}, {7, 40}, {300, 1500}, {3001, 20000}, {20000, 150000}} {
		n, m := size[0], size[1]
		for _, dk := range distKinds {
			for _, undirected := range []bool{false, true} {
				name := fmt.Sprintf("n=%d/m=%d/%s/undirected=%v", n, m, dk.name, undirected)
				t.Run(name, func(t *testing.T) {
					edges := messyEdges(rng, n, m, dk.kind, dk.uniform)
					opt := graph.BuildOptions{Undirected: undirected, DistType: dk.typ}
					want, err := graph.Build(edges, opt)
					if err != nil {
						t.Fatal(err)
					}
					got, err := e.BuildCSR(context.Background(), edges, opt)
					if err != nil {
						t.Fatal(err)
					}
					if diff := sameCSR(got, want); diff != "" {
						t.Fatal(diff)
					}
				})
			}
		}
	}
}

// TestBuildCSRErrors checks that the inputs graph.Build refuses are refused
// too, before the device is touched, and that nothing stays allocated.
func TestBuildCSRErrors(t *testing.T) {
	e := openEngine(t)
	for _, tc := range []struct {
		name  string
		edges *graph.Edges
		opt   graph.BuildOptions
		want  string
	}{
		{"target out of range", &graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1, 2}}, graph.BuildOptions{}, "row 1: edge 1 -> 2 outside"},
		{"negative source", &graph.Edges{NumVertices: 2, Src: []int32{-1}, Dst: []int32{1}}, graph.BuildOptions{}, "row 0"},
		{"lengths", &graph.Edges{NumVertices: 2, Src: []int32{0, 1}, Dst: []int32{1}}, graph.BuildOptions{}, "2 sources but 1 targets"},
		{"weights", &graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{1, 2}}, graph.BuildOptions{}, "2 integer weights for 1 edges"},
		{"NaN", &graph.Edges{NumVertices: 2, Src: []int32{0}, Dst: []int32{1}, Float64Weights: []float64{math.NaN()}}, graph.BuildOptions{}, "not finite"},
		{"int32 too small", &graph.Edges{NumVertices: 3, Src: []int32{0}, Dst: []int32{1}, IntWeights: []int64{1 << 40}}, graph.BuildOptions{DistType: graph.DistInt32}, "int64"},
		{"negative vertices", &graph.Edges{NumVertices: -1}, graph.BuildOptions{}, "vertices"},
	} {
		_, werr := graph.Build(tc.edges, tc.opt)
		_, err := e.BuildCSR(context.Background(), tc.edges, tc.opt)
		if err == nil || werr == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gpu: ") {
			t.Errorf("%s: err = %v (graph.Build: %v), want one containing %q", tc.name, err, werr, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.BuildCSR(ctx, &graph.Edges{NumVertices: 1}, graph.BuildOptions{}); err == nil {
		t.Error("cancelled: no error")
	}
}

// TestBuildCSRResident checks that Prepare adopts the device copy that
// BuildCSRResident kept (no second upload: the live bytes do not grow by the
// graph), that runs on it match runs on an uploaded copy, and that
// unadopted copies are freed by ReleaseCSR and Close.
func TestBuildCSRResident(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	edges := messyEdges(rng, 500, 2500, testgraphs.Int, false)
	opt := graph.BuildOptions{Undirected: true}
	g, err := e.BuildCSRResident(context.Background(), edges, opt)
	if err != nil {
		t.Fatal(err)
	}
	graphBytes := 8*int64(g.NumVertices+1) + 8*g.NumEdges() // offsets, int32 targets and weights
	if got := e.LiveBytes(); got != graphBytes {
		t.Fatalf("LiveBytes = %d after BuildCSRResident, want the graph's %d", got, graphBytes)
	}
	want, err := graph.Build(edges, opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameCSR(g, want); diff != "" {
		t.Fatal(diff)
	}
	sources := []graph.VertexID{0, 1, 77, 499}
	req := graph.Request{Algorithm: graph.Dijkstra, WithPredecessors: true}
	r, err := e.Prepare(context.Background(), g, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != graphBytes {
		t.Fatalf("LiveBytes = %d after Prepare adopted the graph, want %d", got, graphBytes)
	}
	got := graph.NewBlock(sources, g.NumVertices, r.DistType(), true)
	if err := r.Run(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	r2, err := e.Prepare(context.Background(), want, req)
	if err != nil {
		t.Fatal(err)
	}
	exp := graph.NewBlock(sources, g.NumVertices, r.DistType(), true)
	if err := r2.Run(context.Background(), exp); err != nil {
		t.Fatal(err)
	}
	if !sameBlock(got, exp, true) {
		t.Error("runs on the adopted and the uploaded graph differ")
	}
	for _, x := range []*Runner{r, r2} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.LiveBytes(); got != 0 {
		t.Fatalf("LiveBytes = %d after closing the runners", got)
	}
	// A copy nobody adopts: freed by ReleaseCSR, and by Close.
	g2, err := e.BuildCSRResident(context.Background(), edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ReleaseCSR(g2); err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != 0 {
		t.Fatalf("LiveBytes = %d after ReleaseCSR", got)
	}
	if _, err := e.BuildCSRResident(context.Background(), edges, graph.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if e.LiveBytes() == 0 {
		t.Fatal("no device copy kept")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.LiveBytes(); got != 0 {
		t.Fatalf("LiveBytes = %d after Close with an unadopted copy", got)
	}
}

// BenchmarkBuildCSR compares BuildCSR (upload, device build, download) with
// graph.Build on R-MAT graphs, undirected, integer weights.
func BenchmarkBuildCSR(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, scale := range []int{16, 20} {
		edges := rmatEdges(scale, 16, 1)
		opt := graph.BuildOptions{Undirected: true}
		b.Run(fmt.Sprintf("rmat%d/gpu", scale), func(b *testing.B) {
			for range b.N {
				if _, err := e.BuildCSR(context.Background(), edges, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("rmat%d/cpu", scale), func(b *testing.B) {
			for range b.N {
				if _, err := graph.Build(edges, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
