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
func (b *Block) PhasePart(i int, pos []int) *Block {
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
	for _, at := range pos {
		s := b.Seeds[at-b.Cuts[0]]
		first := int32(len(p.MinArcs))
		p.MinArcs = append(p.MinArcs, b.MinArcs[s.First:s.First+s.Count]...)
		s.First = first
		p.Seeds = append(p.Seeds, s)
	}
	return p
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
