//go:build linux

package arrowio

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// BenchmarkPeerMatrix writes a matrix of R-MAT 16's width (46,841
// vertices, blocks of 358 rows as a GPU run's 64 MiB records, a quarter
// of the pairs unreachable) into a result peer played by this process:
// the matrix writer's own cost per byte, values and validity bits.
func BenchmarkPeerMatrix(b *testing.B) {
	const n, rows, blocks = 46841, 358, 8
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ids}
	sizes := make([]int, blocks)
	nulls := make([]bool, blocks)
	for i := range sizes {
		sizes[i], nulls[i] = rows, true
	}
	blks := mappedTestBlocks(11, n, graph.DistInt32, sizes, nulls)
	b.SetBytes(int64(n) * rows * blocks * 4)
	for range b.N {
		p := newTestPeer(b, nil)
		rb := NewResultBuilder(LayoutMatrix, v, graph.DistInt32, false, memory.DefaultAllocator)
		path, f := newMemfd(b)
		w, err := CreateResult(path, rb.Schema(), WriteOptions{MatrixRows: rows * blocks, Format: "arrow", MatrixWrites: MatrixWritesPrefill, ResultPeer: p.conn})
		if err != nil {
			b.Fatal(err)
		}
		for _, blk := range blks {
			if err := rb.Block(blk, w.Write); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		p.conn.Close()
		p.wait()
		f.Close()
		if p.done <= 0 {
			b.Fatal("the peer got no result")
		}
	}
}
