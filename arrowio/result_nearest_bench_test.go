package arrowio

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// nearestBenchResult is a nearest result shaped like issue 17's bench: a
// million vertices with int64 ids, int32 distances, 10,000 sources, a few
// vertices unreached.
func nearestBenchResult() (*Vertices, *graph.Nearest) {
	const n, sources = 999_887, 10_000
	rng := rand.New(rand.NewPCG(1, 17))
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: make([]int64, n)}
	for i := range v.Ints {
		v.Ints[i] = int64(i + i/900)
	}
	dist := make([]int32, n)
	res := &graph.Nearest{Type: graph.DistInt32, Dist: dist, Source: make([]graph.VertexID, n)}
	for i := range res.Source {
		res.Source[i], dist[i] = graph.VertexID(rng.IntN(sources)*(n/sources)), int32(rng.IntN(20_000))
		if rng.IntN(100_000) == 0 {
			res.Source[i], dist[i] = -1, 1<<31-1
		}
	}
	return v, res
}

// BenchmarkNearestRecords times the host part of the nearest layout on
// issue 17's bench shape: the records alone, and the records written to an
// IPC file as `pathctl run --nearest -o out.arrow` does.
func BenchmarkNearestRecords(b *testing.B) {
	v, res := nearestBenchResult()
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			rb := NewResultBuilder(LayoutNearest, v, graph.DistInt32, false, memory.DefaultAllocator)
			rows := int64(0)
			if err := rb.Nearest(res, func(r arrow.RecordBatch) error { rows += r.NumRows(); return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "out.arrow")
		for b.Loop() {
			rb := NewResultBuilder(LayoutNearest, v, graph.DistInt32, false, memory.DefaultAllocator)
			w, err := CreateResult(out, rb.Schema(), WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := rb.Nearest(res, w.Write); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
