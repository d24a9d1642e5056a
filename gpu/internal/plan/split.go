package plan

import "slices"

// Parts of one block's plan run on several devices (the GPU runner's
// shared hub rows): each phase's sources cut among the devices, the rows of
// earlier phases copied to every device between phases, and the
// minimums and leaves derived on each device at the end.

// PhasePart returns the block of phase i's kernel sources at positions pos
// of Sources (each within the phase), in one phase (its own slices, so
// that each device's part is its own): their rows as b's;
// past the first phase, each source starts from its seeds over the rows of
// b's earlier phases (SeedFirst, Seeds and their MinArcs), which must be
// final before it runs. Nothing is derived.
//
// With lagged (not nil), a source's arcs into the rows lagged reports
// true for are its Folds instead, after its seeds' arcs in MinArcs: those
// rows need only land while the part runs (another device's rows of the
// phase before, which it sends meanwhile). Unlagged makes them seeds
// again.
func (b *Block) PhasePart(i int, pos []int, lagged func(row int32) bool) *Block {
	p := &Block{Sources: make([]int32, 0, len(pos)), Rows: make([]int32, 0, len(pos))}
	rows := b.Rows
	for _, at := range pos {
		p.Sources = append(p.Sources, b.Sources[at])
		if rows == nil {
			p.Rows = append(p.Rows, int32(at))
		} else {
			p.Rows = append(p.Rows, rows[at])
		}
	}
	if i == 0 || len(b.Cuts) == 0 {
		return p
	}
	p.SeedFirst = true
	var late []MinArc
	for _, at := range pos {
		s := b.Seeds[at-b.Cuts[0]]
		first := int32(len(p.MinArcs))
		late = late[:0]
		for _, a := range b.MinArcs[s.First : s.First+s.Count] {
			if lagged != nil && lagged(a.Row) {
				late = append(late, a)
			} else {
				p.MinArcs = append(p.MinArcs, a)
			}
		}
		s.First, s.Count = first, int32(len(p.MinArcs))-first
		p.Seeds = append(p.Seeds, s)
		if lagged != nil {
			f := s
			f.First, f.Count = int32(len(p.MinArcs)), int32(len(late))
			p.MinArcs = append(p.MinArcs, late...)
			p.Folds = append(p.Folds, f)
		}
	}
	return p
}

// Unlagged returns the phase part p with its folds made seeds again (a
// copy: the same arcs, each source's seeds and folds adjacent in
// MinArcs), for a device that starts the part once the lagged rows
// landed.
func (p *Block) Unlagged() *Block {
	if len(p.Folds) == 0 {
		return p
	}
	q := *p
	q.Seeds, q.Folds = slices.Clone(p.Seeds), nil
	for i, f := range p.Folds {
		q.Seeds[i].Count += f.Count
	}
	return &q
}

// FoldArcs is the number of arcs in p's folds.
func (p *Block) FoldArcs() int {
	c := 0
	for _, f := range p.Folds {
		c += int(f.Count)
	}
	return c
}

// Derivations returns the block of b's minimums and leaves alone, with
// no kernel source: run once every phase's rows are final. It holds
// copies, so that each device's is its own.
func (b *Block) Derivations() *Block {
	return &Block{
		Sources: []int32{}, Rows: []int32{},
		Derive: slices.Clone(b.Derive), Passes: b.Passes,
		Mins: slices.Clone(b.Mins), MinArcs: slices.Clone(b.MinArcs),
	}
}
