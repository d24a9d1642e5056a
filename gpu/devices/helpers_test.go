package devices

// Helpers of the tests that run the pipeline on fake devices and on real
// ones: graphs, the text of a result, and the drivers of fake devices.

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

func init() { pipeline.RegisterGPU(Driver{}) }

// minGPUSources is the pipeline's: auto stays on the CPU below it.
const minGPUSources = 64

// randomTable is a random table of n vertices and about m edges of kind.
func randomTable(rng *rand.Rand, n, m int, kind testgraphs.WeightKind) *arrowio.EdgeTable {
	e, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: m, Kind: kind, MinWeight: 0, MaxWeight: 20,
		Dyadic: true, Duplicates: m / 5})
	v := &arrowio.Vertices{Type: arrow.PrimitiveTypes.Int64, Ints: []int64{}}
	for i := 0; i < n; i++ {
		v.Ints = append(v.Ints, int64(i))
	}
	return &arrowio.EdgeTable{Edges: *e, Vertices: v, Name: "random.parquet"}
}

// runQuery prepares opt on g and runs it, as every front end does.
func runQuery(ctx context.Context, g *pipeline.Graph, opt pipeline.Options, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return nil, err
	}
	return q.Run(ctx, emit)
}

// collectText runs opt and renders every record, row by row, as text (the
// exact value of every cell, nulls included).
func collectText(t *testing.T, g *pipeline.Graph, opt pipeline.Options) (string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opt.Allocator = mem
	var b strings.Builder
	_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
		for i := 0; i < int(r.NumRows()); i++ {
			for c := 0; c < int(r.NumCols()); c++ {
				b.WriteString(r.Column(c).ValueStr(i))
				b.WriteByte('\t')
			}
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String(), err
}

// fakeDevices is a driver whose devices are devs, devs[ordinal] for each
// ordinal.
func fakeDevices(devs ...*fakeDevice) Driver {
	return Driver{
		count: func() (int, error) { return len(devs), nil },
		open:  func(d int) (graph.Engine, error) { return devs[d], nil },
	}
}
