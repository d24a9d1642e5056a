package arrowio

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// TestCopyBits checks copyBits against arrow-go's CopyBitmap at random
// source and destination offsets and lengths, the destination's other
// bits kept.
func TestCopyBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 2000 {
		srcLen, dstLen := 1+rng.IntN(300), 1+rng.IntN(300)
		src, dst := make([]byte, srcLen), make([]byte, dstLen)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for i := range dst {
			dst[i] = byte(rng.Uint32())
		}
		from, at := rng.IntN(srcLen*8), rng.IntN(dstLen*8)
		n := rng.IntN(min(srcLen*8-from, dstLen*8-at) + 1)
		want := bytes.Clone(dst)
		bitutil.CopyBitmap(src, from, n, want, at)
		copyBits(dst, at, src, from, n)
		if !bytes.Equal(dst, want) {
			t.Fatalf("trial %d: copyBits(at %d, from %d, n %d) on %d/%d bytes differs from CopyBitmap", trial, at, from, n, dstLen, srcLen)
		}
	}
}

// BenchmarkCopyBits compares copyBits with CopyBitmap on one record's
// validity bits (R-MAT 16: 358 rows of 46,841) at an offset that is not a
// whole byte.
func BenchmarkCopyBits(b *testing.B) {
	const n = 358 * 46841
	src, dst := make([]byte, n/8+16), make([]byte, n/8+16)
	for i := range src {
		src[i] = byte(i * 37)
	}
	b.Run("copyBits", func(b *testing.B) {
		b.SetBytes(n / 8)
		for range b.N {
			copyBits(dst, 3, src, 5, n)
		}
	})
	b.Run("CopyBitmap", func(b *testing.B) {
		b.SetBytes(n / 8)
		for range b.N {
			bitutil.CopyBitmap(src, 5, n, dst, 3)
		}
	})
}
