package arrowio

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestInfValidity checks the parallel bitmap builder entry by entry against
// the definition (valid unless Infinity) on blocks that span several work
// pieces and end inside a byte, with no, some and only Infinity entries.
func TestInfValidity(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 11))
	inf := graph.Infinity[int32]()
	for _, c := range []struct {
		n    int
		frac float64 // share of Infinity entries
	}{{0, 0}, {13, 0.5}, {3<<20 + 5, 0}, {3<<20 + 5, 0.01}, {2<<20 + 3, 1}} {
		d := make([]int32, c.n)
		want := 0
		for i := range d {
			if rng.Float64() < c.frac {
				d[i] = inf
				want++
			} else {
				d[i] = rng.Int32N(1000)
			}
		}
		buf, nulls := infValidity(d, mem)
		if nulls != want {
			t.Fatalf("n=%d: %d nulls, want %d", c.n, nulls, want)
		}
		if want == 0 {
			if buf != nil {
				t.Fatalf("n=%d: a bitmap without nulls", c.n)
			}
			continue
		}
		bits := buf.Bytes()
		for i, x := range d {
			if bitutil.BitIsSet(bits, i) != (x != inf) {
				t.Fatalf("n=%d: bit %d is %v for %d", c.n, i, bitutil.BitIsSet(bits, i), x)
			}
		}
		buf.Release()
	}
}

// BenchmarkInfValidity times the matrix validity bitmap over 64 Mi int32
// distances, one in 64 of them unreachable.
func BenchmarkInfValidity(b *testing.B) {
	d := make([]int32, 64<<20)
	for i := range d {
		d[i] = int32(i % 1000)
		if i%64 == 7 {
			d[i] = graph.Infinity[int32]()
		}
	}
	b.SetBytes(int64(4 * len(d)))
	for b.Loop() {
		buf, _ := infValidity(d, memory.DefaultAllocator)
		buf.Release()
	}
}
