package gen

import (
	"fmt"
	"testing"
)

func BenchmarkGenerators(b *testing.B) {
	for _, scale := range []int{16, 20} {
		b.Run(fmt.Sprintf("rmat-%d-16", scale), func(b *testing.B) {
			var arcs int
			for b.Loop() {
				e, err := RMAT(scale, 16, 1)
				if err != nil {
					b.Fatal(err)
				}
				arcs = e.Len()
			}
			b.ReportMetric(float64(arcs)*float64(b.N)/b.Elapsed().Seconds(), "arcs/s")
		})
	}
	b.Run("grid-1024x1024", func(b *testing.B) {
		var arcs int
		for b.Loop() {
			e, err := Grid(1024, 1024, 1)
			if err != nil {
				b.Fatal(err)
			}
			arcs = e.Len()
		}
		b.ReportMetric(float64(arcs)*float64(b.N)/b.Elapsed().Seconds(), "arcs/s")
	})
	b.Run("uniform-1M-16", func(b *testing.B) {
		var arcs int
		for b.Loop() {
			e, err := Uniform(1<<20, 16, 1)
			if err != nil {
				b.Fatal(err)
			}
			arcs = e.Len()
		}
		b.ReportMetric(float64(arcs)*float64(b.N)/b.Elapsed().Seconds(), "arcs/s")
	})
}
