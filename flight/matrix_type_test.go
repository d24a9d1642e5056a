package flight

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestTicketMatrixType: "matrix_type": "float" gives a matrix of float32
// values with +Inf for unreachable pairs, equal to the shared case's
// expected distances; a type that cannot hold them, and a name that is
// no type, are INVALID_ARGUMENT naming the matrix type.
func TestTicketMatrixType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	var c testgraphs.Case
	for _, name := range []string{"ties", "float64-weights"} {
		found, err := testgraphs.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		uploadCase(t, ctx, cl, found.Name, found)
		if name == "ties" {
			c = found
		}
	}
	schema, recs, err := doGet(ctx, cl, fmt.Sprintf(`{"graph": %q, "engine": "cpu", "layout": "matrix", "matrix_type": "float"}`, c.Name), mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := schema.Field(1).Type.(*arrow.FixedSizeListType).Elem(); !arrow.TypeEqual(got, arrow.PrimitiveTypes.Float32) {
		t.Fatalf("values of %s, want float32", got)
	}
	var got []float64
	for _, r := range recs {
		vals := r.Column(1).(*array.FixedSizeList).ListValues().(*array.Float32)
		for i := range vals.Len() {
			got = append(got, float64(vals.Value(i)))
		}
	}
	releaseAll(recs)
	want := c.WantMatrix()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	inf := 0
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %v, want %v", i, got[i], want[i])
		}
		if math.IsInf(want[i], 1) {
			inf++
		}
	}
	if inf == 0 {
		t.Fatalf("case %s has no unreachable pair to check", c.Name)
	}
	for _, bad := range []string{
		`{"graph": "float64-weights", "layout": "matrix", "matrix_type": "int32"}`,
		`{"graph": "ties", "layout": "matrix", "matrix_type": "float16"}`,
	} {
		_, recs, err := doGet(ctx, cl, bad, mem)
		releaseAll(recs)
		if codeOf(err) != "InvalidArgument" || !strings.Contains(err.Error(), "matrix type") {
			t.Errorf("%s: %v, want INVALID_ARGUMENT naming the matrix type", bad, err)
		}
	}
}
