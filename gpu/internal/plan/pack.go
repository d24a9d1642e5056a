package plan

// Packed is a part of a Block packed into 8-byte words for one upload: the
// sources, then the rows, of phases [From, To) as int32 arrays two to a
// word, and with Rest the derivations of the leaves (4 words each), the
// minimums (4 words each), the seeds (4 words each) and the arcs (2 words
// each), starting at the word offsets Rows, Derive, Mins, Seeds and Arcs.
// This is the layout kernels/batched.cu reads.
type Packed struct {
	Words                           []int64
	From, To                        int
	Rest                            bool
	Rows, Derive, Mins, Seeds, Arcs int
}

// Pack packs the sources and rows of phases [from, to) of b and, with
// rest, its derivations, minimums, seeds and arcs. b.Rows must not be nil.
func (b *Block) Pack(from, to int, rest bool) Packed {
	lo, hi := b.PhaseStart(from), b.PhaseStart(to)
	size := hi - lo + 2
	if rest {
		size += 4*len(b.Derive) + 4*len(b.Mins) + 4*len(b.Seeds) + 2*len(b.MinArcs)
	}
	p := Packed{From: from, To: to, Rest: rest}
	p.Words = packInt32s(make([]int64, 0, size), b.Sources[lo:hi])
	p.Rows = len(p.Words)
	p.Words = packInt32s(p.Words, b.Rows[lo:hi])
	if !rest {
		return p
	}
	p.Derive = len(p.Words)
	for _, d := range b.Derive {
		p.Words = append(p.Words, int64(d.Dst), int64(d.Src), int64(d.Leaf), d.Arc)
	}
	p.Mins = len(p.Words)
	for _, d := range b.Mins {
		p.Words = append(p.Words, int64(d.Dst), int64(d.Source), int64(d.First), int64(d.Count))
	}
	p.Seeds = len(p.Words)
	for _, d := range b.Seeds {
		p.Words = append(p.Words, int64(d.Dst), int64(d.Source), int64(d.First), int64(d.Count))
	}
	p.Arcs = len(p.Words)
	for _, a := range b.MinArcs {
		p.Words = append(p.Words, int64(a.Row), a.Arc)
	}
	return p
}

// packInt32s appends v to words two to a word, as a device array of int32
// reads them (the low half first); an odd last value takes a whole word.
func packInt32s(words []int64, v []int32) []int64 {
	for i := 0; i < len(v); i += 2 {
		w := int64(uint32(v[i]))
		if i+1 < len(v) {
			w |= int64(uint32(v[i+1])) << 32
		}
		words = append(words, w)
	}
	return words
}
