package arrowio

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// dimacsText writes a random graph of n vertices (the last few isolated)
// and m arcs with weights in [-5, 1000).
func dimacsText(rng *rand.Rand, n, m int) (text string, src, dst []int32, w []int64) {
	var b strings.Builder
	fmt.Fprintf(&b, "c random test graph\nc second comment\np sp %d %d\n", n, m)
	for i := 0; i < m; i++ {
		u, v, wt := rng.IntN(n-3)+1, rng.IntN(n-3)+1, int64(rng.IntN(1005)-5)
		if i == m/2 {
			b.WriteString("c a comment between arcs\n\n")
		}
		fmt.Fprintf(&b, "a %d\t%d %d\n", u, v, wt)
		src, dst, w = append(src, int32(u-1)), append(dst, int32(v-1)), append(w, wt)
	}
	return b.String(), src, dst, w
}

func TestReadDIMACS(t *testing.T) {
	for _, c := range []struct {
		name string
		n, m int
		file string
		pack func(testing.TB, []byte) []byte
		opt  ReadOptions
	}{
		{name: "plain", n: 50, m: 200, file: "g.gr"},
		{name: "gzip", n: 500, m: 3000, file: "g.gr.gz", pack: gzipped},
		{name: "zstd-unweighted", n: 20, m: 40, file: "g.gr.zst", pack: zstded, opt: ReadOptions{Unweighted: true}},
		{name: "no-arcs", n: 4, m: 0, file: "g.gr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := uint64(c.n)
			text, src, dst, w := dimacsText(rand.New(rand.NewPCG(seed, 3)), c.n, c.m)
			data := []byte(text)
			if c.pack != nil {
				data = c.pack(t, data)
			}
			got, err := ReadEdges(writeTemp(t, c.file, data), c.opt)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			v := got.Vertices
			if v.Len() != c.n || got.Edges.NumVertices != c.n || !arrow.TypeEqual(v.Type, arrow.PrimitiveTypes.Int64) {
				t.Fatalf("%d vertices of %v, want %d of int64", v.Len(), v.Type, c.n)
			}
			for i := range c.n {
				if v.Ints[i] != int64(i+1) {
					t.Fatalf("vertex %d has id %d, want %d", i, v.Ints[i], i+1)
				}
			}
			if id, err := v.Lookup(fmt.Sprint(c.n)); err != nil || id != int32(c.n-1) {
				t.Errorf("Lookup(isolated %d) = %d, %v", c.n, id, err)
			}
			if !slices.Equal(got.Edges.Src, src) || !slices.Equal(got.Edges.Dst, dst) {
				t.Fatal("arcs differ from those written")
			}
			if c.opt.Unweighted {
				if got.Edges.Weighted() || got.WeightType != nil {
					t.Fatal("Unweighted, yet weights")
				}
				return
			}
			if !slices.Equal(got.Edges.IntWeights, w) && !(len(w) == 0 && len(got.Edges.IntWeights) == 0) || got.Edges.IntWeights == nil {
				t.Fatalf("weights %v, want %v", got.Edges.IntWeights, w)
			}
			if got.WeightType.ID() != arrow.INT64 {
				t.Errorf("WeightType = %v", got.WeightType)
			}
		})
	}
}
