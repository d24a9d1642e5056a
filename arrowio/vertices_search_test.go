package arrowio

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestSearchIDs checks searchIDs against a plain binary search on sorted
// distinct ids of several shapes (consecutive, a few gaps, sparse, around
// the ends of int64), for ids inside, between and outside them, and
// Lookup on nearly consecutive ids; the seed is printed on failure.
func TestSearchIDs(t *testing.T) {
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 5))
	shapes := map[string]func(n int) []int64{
		"consecutive": func(n int) []int64 {
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(i) - 3
			}
			return ids
		},
		"few gaps": func(n int) []int64 {
			var ids []int64
			for x := int64(0); len(ids) < n; x++ {
				if rng.IntN(50) > 0 {
					ids = append(ids, x)
				}
			}
			return ids
		},
		"sparse": func(n int) []int64 {
			seen := map[int64]bool{}
			for len(seen) < n {
				seen[rng.Int64N(1<<40)-1<<39] = true
			}
			ids := make([]int64, 0, n)
			for x := range seen {
				ids = append(ids, x)
			}
			slices.Sort(ids)
			return ids
		},
		"int64 ends": func(n int) []int64 {
			ids := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 7, math.MaxInt64 - 1, math.MaxInt64}
			return ids[:min(n, len(ids))]
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{0, 1, 2, 7, 1000} {
			ids := shape(n)
			probes := []int64{math.MinInt64, math.MaxInt64, 0, -1}
			for _, x := range ids {
				probes = append(probes, x, x-1, x+1)
			}
			for _, x := range probes {
				wantAt, wantFound := slices.BinarySearch(ids, x)
				at, found := searchIDs(ids, x)
				if found != wantFound || (found && at != wantAt) {
					t.Fatalf("seed %d, %s, n=%d: searchIDs(%d) = %d, %v; want %d, %v", seed, name, len(ids), x, at, found, wantAt, wantFound)
				}
			}
		}
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: shapes["few gaps"](5000)}
	for i, x := range v.Ints {
		if got, err := v.Lookup(strconv.FormatInt(x, 10)); err != nil || got != int32(i) {
			t.Fatalf("seed %d: Lookup(%d) = %d, %v; want %d", seed, x, got, err, i)
		}
		if i > 0 && v.Ints[i-1] < x-1 {
			if _, err := v.Lookup(strconv.FormatInt(x-1, 10)); err == nil {
				t.Fatalf("seed %d: Lookup(%d) found a vertex that is not there", seed, x-1)
			}
		}
	}
}

// BenchmarkLookup times Lookup of 10,000 random ids among a million ids
// numbered 0..n-1 with a few gaps, as issue 17's grid has them.
func BenchmarkLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64}
	for x := int64(0); len(v.Ints) < 999_887; x++ {
		if rng.IntN(9000) > 0 {
			v.Ints = append(v.Ints, x)
		}
	}
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = strconv.FormatInt(v.Ints[rng.IntN(len(v.Ints))], 10)
	}
	for b.Loop() {
		for _, id := range ids {
			if _, err := v.Lookup(id); err != nil {
				b.Fatal(err)
			}
		}
	}
}
