package plan

import (
	"slices"
	"testing"
)

// TestPhaseParts cuts every phase of planned blocks into two parts
// (PhasePart) and checks that the parts hold each kernel source once, in
// its row, with the seeds of b (the same arcs) past the first phase, and
// that Derivations keeps b's minimums and leaves with no kernel source.
func TestPhaseParts(t *testing.T) {
	t.Parallel()
	phases := DefaultConfig()
	phases.Seeds, phases.SeedsOnMeshes, phases.SeedsMinShare, phases.Phases, phases.PhasesWeighted = 0.2, true, 0, []float64{0.6}, []float64{0.6}
	for name, g := range planGraphs(t) {
		b, err := NewGraph(g).Plan(identity(g.NumVertices), phases)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Cuts) == 0 {
			t.Fatalf("%s: the block has one phase", name)
		}
		for i := range b.NumPhases() {
			var halves [2][]int
			for at := b.PhaseStart(i); at < b.PhaseStart(i+1); at++ {
				halves[at%2] = append(halves[at%2], at)
			}
			for _, pos := range halves {
				p := b.PhasePart(i, pos)
				if len(p.Sources) != len(pos) || p.SeedFirst != (i > 0) || p.NumPhases() != 1 {
					t.Fatalf("%s phase %d: a part of %d sources, seeded %v, %d phases", name, i, len(p.Sources), p.SeedFirst, p.NumPhases())
				}
				for k, at := range pos {
					if p.Sources[k] != b.Sources[at] || p.Rows[k] != b.Rows[at] {
						t.Fatalf("%s phase %d: part source %d is %d in row %d, want %d in row %d", name, i, k, p.Sources[k], p.Rows[k], b.Sources[at], b.Rows[at])
					}
					if i == 0 {
						continue
					}
					want, got := b.Seeds[at-b.Cuts[0]], p.Seeds[k]
					if got.Source != want.Source || got.Dst != want.Dst ||
						!slices.Equal(p.MinArcs[got.First:got.First+got.Count], b.MinArcs[want.First:want.First+want.Count]) {
						t.Fatalf("%s phase %d: the seeds of source %d differ from the block's", name, i, want.Source)
					}
				}
			}
		}
		d := b.Derivations()
		if len(d.Sources) != 0 || d.Rows == nil || !slices.Equal(d.Mins, b.Mins) || !slices.Equal(d.Derive, b.Derive) || d.Passes != b.Passes {
			t.Fatalf("%s: Derivations does not keep the block's minimums and leaves alone", name)
		}
		// Each device runs its own copies: a change to them leaves b as it is.
		mins, arcs, derive, rows := slices.Clone(b.Mins), slices.Clone(b.MinArcs), slices.Clone(b.Derive), slices.Clone(b.Rows)
		for i := range d.Mins {
			d.Mins[i].Dst += 1000
		}
		for i := range d.MinArcs {
			d.MinArcs[i].Row += 1000
		}
		for i := range d.Derive {
			d.Derive[i].Dst += 1000
		}
		last := b.PhasePart(b.NumPhases()-1, []int{b.PhaseStart(b.NumPhases() - 1)})
		last.Rows[0] += 1000
		for i := range last.MinArcs {
			last.MinArcs[i].Row += 1000
		}
		if !slices.Equal(b.Mins, mins) || !slices.Equal(b.MinArcs, arcs) || !slices.Equal(b.Derive, derive) || !slices.Equal(b.Rows, rows) {
			t.Fatalf("%s: changing a part changed the block's own rows", name)
		}
		if len(b.Mins)+len(b.Derive) == 0 {
			t.Logf("%s: nothing derived", name)
		}
	}
}
