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
	folded := 0
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
				p := b.PhasePart(i, pos, nil)
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
		folded += checkLaggedParts(t, name, b)
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
		last := b.PhasePart(b.NumPhases()-1, []int{b.PhaseStart(b.NumPhases() - 1)}, nil)
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
	if folded == 0 {
		t.Fatal("no seed arc into another part's rows of the phase before, in any graph")
	}
}

// checkLaggedParts cuts every later phase of b into two parts by position,
// as two devices would, and checks PhasePart with the other part's rows of
// the phase before lagged (runs of three positions, so that a grid's
// parity does not keep every arc within a part): each source's arcs split into seeds and folds
// that together are b's seeds (the same multiset), the folds exactly the
// lagged ones, and Unlagged gives them back as seeds without changing the
// part. It returns the number of arcs folded.
func checkLaggedParts(t *testing.T, name string, b *Block) int {
	t.Helper()
	folded := 0
	for i := 1; i < b.NumPhases(); i++ {
		var halves [2][]int
		for at := b.PhaseStart(i); at < b.PhaseStart(i+1); at++ {
			halves[at/3%2] = append(halves[at/3%2], at)
		}
		for h, pos := range halves {
			lateRow := map[int32]bool{}
			for at := b.PhaseStart(i - 1); at < b.PhaseStart(i); at++ {
				if at/3%2 != h {
					lateRow[b.Rows[at]] = true
				}
			}
			lagged := func(row int32) bool { return lateRow[row] }
			p := b.PhasePart(i, pos, lagged)
			if len(p.Folds) != len(p.Seeds) || len(p.Seeds) != len(pos) {
				t.Fatalf("%s phase %d: %d folds, %d seeds for %d sources", name, i, len(p.Folds), len(p.Seeds), len(pos))
			}
			pk := p.Pack(0, 1, true)
			for k, f := range p.Folds {
				if w := pk.Words[pk.Folds+4*k:]; (MinDerivation{int32(w[0]), int32(w[1]), int32(w[2]), int32(w[3])}) != f {
					t.Fatalf("%s phase %d: fold %d packed as %v, want %+v", name, i, k, w[:4], f)
				}
			}
			if pk.Arcs != pk.Folds+4*len(p.Folds) || pk.Folds != pk.Seeds+4*len(p.Seeds) || len(pk.Words) != pk.Arcs+2*len(p.MinArcs) {
				t.Fatalf("%s phase %d: packed folds at word %d, arcs at %d, of %d words", name, i, pk.Folds, pk.Arcs, len(pk.Words))
			}
			seeds := slices.Clone(p.Seeds)
			u := p.Unlagged()
			for k, at := range pos {
				want := b.MinArcs[b.Seeds[at-b.Cuts[0]].First:][:b.Seeds[at-b.Cuts[0]].Count]
				s, f := p.Seeds[k], p.Folds[k]
				if s.Dst != f.Dst || s.Source != f.Source || f.First != s.First+s.Count {
					t.Fatalf("%s phase %d: source %d's folds %+v do not follow its seeds %+v", name, i, s.Source, f, s)
				}
				for _, a := range p.MinArcs[s.First : s.First+s.Count] {
					if lagged(a.Row) {
						t.Fatalf("%s phase %d: source %d seeds from lagged row %d", name, i, s.Source, a.Row)
					}
				}
				for _, a := range p.MinArcs[f.First : f.First+f.Count] {
					if !lagged(a.Row) {
						t.Fatalf("%s phase %d: source %d folds row %d, which is not lagged", name, i, s.Source, a.Row)
					}
				}
				folded += int(f.Count)
				got := slices.Clone(p.MinArcs[s.First : f.First+f.Count])
				us := u.Seeds[k]
				if !slices.Equal(got, p.MinArcs[us.First:us.First+us.Count]) {
					t.Fatalf("%s phase %d: source %d unlagged seeds are not its seeds and folds", name, i, s.Source)
				}
				cmp := func(x, y MinArc) int {
					if x.Row != y.Row {
						return int(x.Row - y.Row)
					}
					return int(x.Arc - y.Arc)
				}
				slices.SortFunc(got, cmp)
				w := slices.Clone(want)
				slices.SortFunc(w, cmp)
				if !slices.Equal(got, w) {
					t.Fatalf("%s phase %d: source %d's seeds and folds are not the block's seeds", name, i, s.Source)
				}
			}
			if !slices.Equal(p.Seeds, seeds) || u.Folds != nil || p.FoldArcs() != sumCounts(u.Seeds)-sumCounts(p.Seeds) {
				t.Fatalf("%s phase %d: Unlagged changed the part, or FoldArcs miscounts", name, i)
			}
		}
	}
	return folded
}

func sumCounts(ds []MinDerivation) int {
	c := 0
	for _, d := range ds {
		c += int(d.Count)
	}
	return c
}
