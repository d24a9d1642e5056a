package arrowio

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// TestBetweennessLayout: the layout parses, its schema is vertex (the id
// type) and betweenness float64 whatever the distance type, and the
// records carry every vertex once in vertex order with its value, in
// windows of at most 2^20 rows; nothing stays allocated.
func TestBetweennessLayout(t *testing.T) {
	if l, err := ParseLayout("betweenness"); err != nil || l != LayoutBetweenness {
		t.Fatalf("ParseLayout: %v, %v", l, err)
	}
	for _, n := range []int{0, 3, betweennessWindow + 5} {
		for _, strings := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/strings=%v", n, strings), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				v := &Vertices{Type: arrow.PrimitiveTypes.Int32, Ints: make([]int64, n)}
				if strings {
					v = &Vertices{Type: arrow.BinaryTypes.String, Strings: make([]string, n)}
				}
				values := make([]float64, n)
				for i := range n {
					values[i] = float64(i) / 8
					if strings {
						v.Strings[i] = fmt.Sprintf("v%07d", i)
					} else {
						v.Ints[i] = int64(2*i - 5)
					}
				}
				want := ResultSchema(LayoutBetweenness, v, graph.DistInt32, false)
				if got := want.Field(0).Type; !arrow.TypeEqual(got, IDType(v)) {
					t.Fatalf("vertex column %v, want %v", got, IDType(v))
				}
				if md := want.Metadata(); md.FindKey(MetaDistType) < 0 || md.Values()[md.FindKey(MetaDistType)] != "float64" {
					t.Errorf("metadata %v: want dist_type float64", md)
				}
				next := 0
				err := BetweennessRecords(v, values, mem, func(r arrow.RecordBatch) error {
					if !r.Schema().Equal(want) {
						return fmt.Errorf("schema %v, want %v", r.Schema(), want)
					}
					if r.NumRows() > betweennessWindow {
						return fmt.Errorf("a record of %d rows", r.NumRows())
					}
					bs := r.Column(1).(*array.Float64)
					for i := range int(r.NumRows()) {
						var id string
						switch c := r.Column(0).(type) {
						case *array.Int32:
							id = fmt.Sprint(c.Value(i))
						case *array.String:
							id = c.Value(i)
						}
						if id != v.Format(int32(next)) || bs.Value(i) != values[next] {
							return fmt.Errorf("row %d: (%s, %v), want (%s, %v)", next, id, bs.Value(i), v.Format(int32(next)), values[next])
						}
						next++
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if next != n {
					t.Errorf("%d rows, want %d", next, n)
				}
			})
		}
	}
}
