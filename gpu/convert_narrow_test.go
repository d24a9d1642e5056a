package gpu

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestNarrowValues runs float64 rows of non-dyadic float weights (whose
// sums round differently in float32, so that a copy left unrounded or
// values left in place fail) through a runner that rounds them to float32
// on the device (ConvertValues(DistFloat32): convert.cu's narrowing, in
// place), by Run, by blocks started ahead and by a resident block's rows,
// on graphs of 403 and 5,003 vertices (blocks of fewer cells than the head
// launch narrows, and blocks of several doubling launches), with an
// isolated vertex, and compares every value with a plain runner's float64
// distances rounded on the host by Go's float32(x), +Inf for unreachable.
// It also checks that only 4 bytes a cell left the device.
func TestNarrowValues(t *testing.T) {
	e := openEngine(t)
	rng := newSeed(t)
	ctx := context.Background()
	for _, n := range []int{403, 5003} {
		edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n - 1, M: 3 * n, Kind: testgraphs.Float64, MinWeight: 0, MaxWeight: 7})
		edges.NumVertices = n // vertex n-1 has no arc
		g, err := graph.Build(edges, graph.BuildOptions{DistType: graph.DistFloat64})
		if err != nil {
			t.Fatal(err)
		}
		var sources []graph.VertexID
		for _, p := range rng.Perm(n)[:90] {
			sources = append(sources, graph.VertexID(p))
		}
		plain, err := e.Prepare(ctx, g, graph.Request{Algorithm: Batched})
		if err != nil {
			t.Fatal(err)
		}
		want := runBlocks(t, plain, n, sources, 90, false)
		if err := plain.Close(); err != nil {
			t.Fatal(err)
		}
		rounded := 0
		for _, d := range want.Dist.([]float64) {
			if float64(float32(d)) != d {
				rounded++
			}
		}
		if rounded == 0 {
			t.Fatalf("n=%d: no distance that float32 rounds: the check could not fail", n)
		}
		for _, how := range []string{"run", "ahead", "resident"} {
			name := fmt.Sprintf("n=%d %s", n, how)
			r, err := e.Prepare(ctx, g, graph.Request{Algorithm: Batched, RoundFloat32: true})
			if err != nil {
				t.Fatal(err)
			}
			if !r.ConvertValues(graph.DistFloat32) {
				t.Fatalf("%s: ConvertValues(float32) of float64 distances refused", name)
			}
			var got *graph.Block
			before := r.DownloadedBytes()
			switch how {
			case "run":
				got = graph.NewBlock(sources, n, graph.DistFloat32, false)
				poison(got)
				if err := r.Run(ctx, got); err != nil {
					t.Fatal(err)
				}
			case "ahead":
				got = startAhead(t, r, n, sources, []int{31, 1, 40, 18}, 1, false)
			case "resident":
				res, err := r.ComputeResident(ctx, sources)
				if err != nil {
					t.Fatal(err)
				}
				got = startWith(t, r, n, sources, []int{50, 3, 37}, 2, false, func(lo, hi int, b *graph.Block) (*Pending, error) {
					return res.Start(ctx, lo, hi, b)
				})
			}
			if moved, exp := r.DownloadedBytes()-before, int64(len(sources))*int64(n)*4; moved != exp {
				t.Errorf("%s: %d bytes to the host, want 4 a cell, %d", name, moved, exp)
			}
			gd, ok := got.Dist.([]float32)
			if !ok {
				t.Fatalf("%s: block of %T", name, got.Dist)
			}
			unreachable := 0
			for i, w := range want.Dist.([]float64) {
				exp := float32(w)
				if math.IsInf(w, 1) {
					unreachable++
				}
				if gd[i] != exp {
					t.Fatalf("%s: cell %d (source %d, vertex %d) = %v, want float32(%v) = %v",
						name, i, sources[i/n], i%n, gd[i], w, exp)
				}
			}
			if unreachable == 0 {
				t.Fatalf("%s: no unreachable pair to check", name)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
