package arrowio

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestPairsSideBySide builds the pairs records of random blocks (rows all
// unreachable, a last row cut short, predecessors, the rank column) in
// records of a few rows, which the builder builds on several goroutines,
// and checks their rows, in order, against one record of the whole block;
// an emit that fails stops the block with its error and leaves nothing
// allocated.
func TestPairsSideBySide(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 9))
	ints := make([]int64, 97)
	for i := range ints {
		ints[i] = int64(1000 + i)
	}
	v := &Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: ints}
	n := len(ints)
	for trial := range 20 {
		k := 1 + rng.IntN(40)
		sources := make([]graph.VertexID, k)
		for i := range sources {
			sources[i] = graph.VertexID(rng.IntN(n))
		}
		blk := graph.NewBlock(sources, n, graph.DistInt32, true)
		d := graph.DistOf[int32](blk)
		for i := range d {
			d[i] = int32(rng.IntN(50))
			if rng.IntN(4) == 0 || (i/n)%7 == 3 {
				d[i] = graph.Infinity[int32]()
			}
			blk.Pred[i] = int32(rng.IntN(n))
		}
		shape := Shape{Rank: trial%2 == 1}
		rows := func(maxRows int, fail int) ([]string, int, error) {
			b := NewResultBuilder(LayoutPairs, v, graph.DistInt32, true, mem)
			b.SetShape(shape)
			b.maxRows = maxRows
			var got []string
			records := 0
			err := b.Block(blk, func(r arrow.RecordBatch) error {
				if records++; records == fail {
					return errors.New("the sink is full")
				}
				for i := range int(r.NumRows()) {
					row := ""
					for c := range int(r.NumCols()) {
						row += fmt.Sprint(r.Column(c).(interface{ ValueStr(int) string }).ValueStr(i), " ")
					}
					got = append(got, row)
				}
				return nil
			})
			return got, records, err
		}
		want, _, err := rows(1<<20, 0)
		if err != nil {
			t.Fatal(err)
		}
		maxRows := 1 + rng.IntN(60)
		got, records, err := rows(maxRows, 0)
		if err != nil {
			t.Fatal(err)
		}
		if wantRecords := (len(want) + maxRows - 1) / maxRows; records != wantRecords {
			t.Errorf("trial %d: %d records of up to %d rows for %d rows", trial, records, maxRows, len(want))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d, records of %d rows:\n got %v\nwant %v", trial, maxRows, got, want)
		}
		if records > 2 {
			if _, at, err := rows(maxRows, 2); err == nil || at != 2 {
				t.Errorf("trial %d: a failing emit: %v after %d records", trial, err, at)
			}
		}
	}
}
