package pipeline

import (
	"fmt"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestStatsInOrderChecksItsRows checks that statsInOrder refuses stats of
// other sources than the run's, and gives the rows back in the caller's
// order, a record per block.
func TestStatsInOrderChecksItsRows(t *testing.T) {
	sources := []graph.VertexID{10, 11, 12, 13}
	order := []int32{2, 0, 3, 1}
	held := newStatsInOrder(sources, order, graph.DistInt32)
	first := graph.NewStats([]graph.VertexID{12, 10}, graph.DistInt32)
	first.SumInt[0], first.SumInt[1] = 120, 100
	if err := held.add(2, first); err != nil {
		t.Fatal(err)
	}
	wrong := graph.NewStats([]graph.VertexID{11, 13}, graph.DistInt32)
	if err := held.add(4, wrong); err == nil {
		t.Fatal("stats of sources 11, 13 where 13, 11 were run were taken")
	}
	second := graph.NewStats([]graph.VertexID{13, 11}, graph.DistInt32)
	second.SumInt[0], second.SumInt[1] = 130, 110
	if err := held.add(4, second); err != nil {
		t.Fatal(err)
	}
	var ids []graph.VertexID
	var sums []int64
	blocks := 0
	err := held.emit([]SourceBlock{{0, 3}, {3, 4}}, func(s *graph.Stats) error {
		blocks++
		ids, sums = append(ids, s.Sources...), append(sums, s.SumInt...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids, sums, blocks) != "[10 11 12 13] [100 110 120 130] 2" {
		t.Fatalf("emitted %v %v in %d records", ids, sums, blocks)
	}
}
