package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// rmatEdges draws an R-MAT graph of 2^scale vertices and edgeFactor·2^scale
// rows (a, b, c = 0.57, 0.19, 0.19, as Graph500), integer weights in
// [1, 100], seeded.
func rmatEdges(scale, edgeFactor int, seed uint64) *graph.Edges {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 1 << scale
	m := edgeFactor * n
	e := &graph.Edges{NumVertices: n, Src: make([]graph.VertexID, m), Dst: make([]graph.VertexID, m), IntWeights: make([]int64, m)}
	for i := range m {
		var u, v int
		for bit := 0; bit < scale; bit++ {
			p := rng.Float64()
			switch {
			case p < 0.57:
			case p < 0.76:
				v |= 1 << bit
			case p < 0.95:
				u |= 1 << bit
			default:
				u |= 1 << bit
				v |= 1 << bit
			}
		}
		e.Src[i], e.Dst[i], e.IntWeights[i] = graph.VertexID(u), graph.VertexID(v), int64(1+rng.IntN(100))
	}
	return e
}

// gridEdges is a side×side grid, each cell joined to its right and lower
// neighbours, integer weights in [1, 10], seeded.
func gridEdges(side int, seed uint64) *graph.Edges {
	rng := rand.New(rand.NewPCG(seed, 2))
	e := &graph.Edges{NumVertices: side * side}
	add := func(u, v int) {
		e.Src = append(e.Src, graph.VertexID(u))
		e.Dst = append(e.Dst, graph.VertexID(v))
		e.IntWeights = append(e.IntWeights, int64(1+rng.IntN(10)))
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
	return e
}

type benchGraph struct {
	name       string
	edges      func() *graph.Edges
	undirected bool
}

var benchGraphs = []benchGraph{
	{"rmat16", func() *graph.Edges { return rmatEdges(16, 16, 16) }, false},
	{"grid256", func() *graph.Edges { return gridEdges(256, 256) }, true},
	{"random64k", func() *graph.Edges {
		e, _ := testgraphs.Random(rand.New(rand.NewPCG(64, 3)), testgraphs.RandomOptions{N: 1 << 16, M: 1 << 20, Kind: testgraphs.Int, MinWeight: 1, MaxWeight: 100})
		return e
	}, false},
}

// BenchmarkAlgorithms times one block of 1024 sources per operation for
// every algorithm on each benchmark graph, and reports pairs/s over the
// whole Run (copies included) and the kernels' device time.
func BenchmarkAlgorithms(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range benchGraphs {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		k := min(1024, n)
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(i * (n / k))
		}
		want, err := ref.Dijkstra[int32](g, sources[k-1])
		if err != nil {
			b.Fatal(err)
		}
		for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge, graph.BellmanFord, graph.BFS, graph.BFSLevel} {
			b.Run(fmt.Sprintf("%s/n=%d/m=%d/%s", bg.name, n, g.NumEdges(), alg), func(b *testing.B) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				out := graph.NewBlock(sources, n, r.DistType(), false)
				if err := r.Run(context.Background(), out); err != nil { // warm-up
					b.Fatal(err)
				}
				if !alg.CountsHops() {
					row := graph.Row[int32](out, k-1)
					for v := range row {
						if row[v] != want[v] {
							b.Fatalf("dist[%d] = %d, want %d", v, row[v], want[v])
						}
					}
				}
				var kernel float64
				b.ResetTimer()
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					kernel += r.KernelTime().Seconds()
				}
				b.StopTimer()
				b.ReportMetric(float64(k)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
				b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
				b.ReportMetric(float64(k)*float64(n)*float64(b.N)/kernel, "kernel-pairs/s")
			})
		}
	}
}

// BenchmarkDeltaWidth times delta-stepping for bucket widths at multiples of
// mean weight / mean out-degree (the default is 1×), and the maximum weight.
func BenchmarkDeltaWidth(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range benchGraphs[:2] {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		k := min(1024, n)
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(i * (n / k))
		}
		base := chooseDelta(g, 0)
		for _, delta := range []float64{base, 4 * base, 16 * base, 32 * base, 128 * base, g.MaxWeight} {
			b.Run(fmt.Sprintf("%s/delta=%g", bg.name, delta), func(b *testing.B) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: graph.Delta, Delta: delta})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				out := graph.NewBlock(sources, n, r.DistType(), false)
				var kernel float64
				for b.Loop() {
					if err := r.Run(context.Background(), out); err != nil {
						b.Fatal(err)
					}
					kernel += r.KernelTime().Seconds()
				}
				b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
			})
		}
	}
}

// BenchmarkAPSP times all-pairs shortest paths (every vertex a source, in
// blocks of 2048 sources, copies into a reused host block included) on the
// graphs gpu.md compares with scipy: R-MAT scale 16 and a 128×128 grid.
func BenchmarkAPSP(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range []benchGraph{
		{"grid128", func() *graph.Edges { return gridEdges(128, 128) }, true},
		benchGraphs[0],
	} {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge, graph.BellmanFord, graph.BFS} {
			b.Run(fmt.Sprintf("%s/n=%d/m=%d/%s", bg.name, n, g.NumEdges(), alg), func(b *testing.B) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				const block = 2048
				out := graph.NewBlock(make([]graph.VertexID, block), n, r.DistType(), false)
				var kernel float64
				for b.Loop() {
					for lo := 0; lo < n; lo += block {
						for i := range out.Sources {
							out.Sources[i] = graph.VertexID(lo + i)
						}
						if err := r.Run(context.Background(), out); err != nil {
							b.Fatal(err)
						}
						kernel += r.KernelTime().Seconds()
					}
				}
				b.ReportMetric(float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
				b.ReportMetric(kernel/float64(b.N), "kernel-s/op")
			})
		}
	}
}

// BenchmarkFewSources times blocks of 1 and of 132 sources (one per SM of an
// H100/H200): one thread block per source leaves most of the device idle
// for small blocks.
func BenchmarkFewSources(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	for _, bg := range benchGraphs[:2] {
		g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
		if err != nil {
			b.Fatal(err)
		}
		n := g.NumVertices
		for _, k := range []int{1, 132} {
			sources := make([]graph.VertexID, k)
			for i := range sources {
				sources[i] = graph.VertexID(i * 97 % n)
			}
			for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.Delta, graph.Edge, graph.BellmanFord, graph.BFS, graph.BFSLevel} {
				b.Run(fmt.Sprintf("%s/k=%d/%s", bg.name, k, alg), func(b *testing.B) {
					r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
					if err != nil {
						b.Fatal(err)
					}
					defer r.Close()
					out := graph.NewBlock(sources, n, r.DistType(), false)
					var kernel float64
					for b.Loop() {
						if err := r.Run(context.Background(), out); err != nil {
							b.Fatal(err)
						}
						kernel += r.KernelTime().Seconds()
					}
					b.ReportMetric(kernel/float64(b.N)*1e3, "kernel-ms/op")
				})
			}
		}
	}
}
