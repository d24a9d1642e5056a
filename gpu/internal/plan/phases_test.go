package plan

import (
	"math"
	"slices"
	"testing"
)

// TestPhasesSplitDealtHands plans the core of each graph dealt into two
// hands (hand 0 its 1st, 3rd, 5th ... vertex, then hand 1 the others, as
// the GPU runner deals its shared hub rows) in phases, and checks that
// every phase holds as many rows of each hand but for at most two: the
// degree a cut falls in is split by vertex id, as the core lists it,
// rather than hand 0's hubs first.
func TestPhasesSplitDealtHands(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Seeds, cfg.SeedsOnMeshes, cfg.SeedsMinShare, cfg.Phases, cfg.PhasesWeighted = 0.15, true, 0, []float64{0.4}, []float64{0.4}
	for name, g := range planGraphs(t) {
		pg := NewGraph(g)
		core, err := pg.Core(g.NumVertices, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var hands [2][]int32
		for i, v := range core {
			hands[i%2] = append(hands[i%2], v)
		}
		dealt := append(slices.Clone(hands[0]), hands[1]...)
		b, finish, err := pg.StartResident(dealt, cfg, math.Inf(1), Resident{})
		if err != nil {
			t.Fatal(err)
		}
		if finish != nil {
			finish()
		}
		if b.NumPhases() < 2 {
			t.Fatalf("%s: %d phases over a core of %d", name, b.NumPhases(), len(core))
		}
		for i := range b.NumPhases() {
			var count [2]int
			for at := b.PhaseStart(i); at < b.PhaseStart(i+1); at++ {
				row := int32(at)
				if b.Rows != nil {
					row = b.Rows[at]
				}
				count[min(1, int(row)/len(hands[0]))]++
			}
			if d := count[0] - count[1]; d < -2 || d > 2 {
				t.Errorf("%s: phase %d holds %d rows of hand 0 and %d of hand 1", name, i, count[0], count[1])
			}
		}
	}
}
