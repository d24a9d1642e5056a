package plan

import (
	"slices"
	"testing"
	"unsafe"
)

// TestPackInt32s checks the packing of the batched plan's int32 arrays into
// the 8-byte words of its upload: read back as little-endian int32s, the
// words give the values in order, an odd count padded with a zero.
func TestPackInt32s(t *testing.T) {
	t.Parallel()
	for _, v := range [][]int32{{}, {7}, {1, -2}, {5, 6, 7}, {-1, 2147483647, -2147483648, 0}} {
		words := packInt32s([]int64{42}, v)
		if len(words) != 1+(len(v)+1)/2 || words[0] != 42 {
			t.Fatalf("%v: %d words, first %d", v, len(words), words[0])
		}
		if len(v) == 0 {
			continue
		}
		got := unsafe.Slice((*int32)(unsafe.Pointer(&words[1])), 2*(len(words)-1))
		if !slices.Equal(got[:len(v)], v) || (len(v)%2 == 1 && got[len(v)] != 0) {
			t.Fatalf("packed %v as %v", v, got)
		}
	}
}

// TestPackLayout reads a packed plan of R-MAT's block of every source back
// at the offsets Pack reports, as the device does, and checks that every
// part decodes to the plan's own values: the first phase alone, the later
// phases with the rest, and every phase at once.
func TestPackLayout(t *testing.T) {
	t.Parallel()
	g := planGraphs(t)["rmat"]
	all := make([]int32, g.NumVertices)
	for i := range all {
		all[i] = int32(i)
	}
	b, err := Plan(g, all, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b.NumPhases() < 2 || len(b.Derive) == 0 || len(b.Mins) == 0 || len(b.Seeds) == 0 {
		t.Fatalf("the plan lacks a part to check: %d phases, %d leaves, %d minimums, %d seeds",
			b.NumPhases(), len(b.Derive), len(b.Mins), len(b.Seeds))
	}
	int32s := func(w []int64, at, count int) []int32 {
		if count == 0 {
			return []int32{}
		}
		return unsafe.Slice((*int32)(unsafe.Pointer(&w[at])), count)
	}
	for _, span := range [][2]int{{0, 1}, {1, b.NumPhases()}, {0, b.NumPhases()}} {
		from, to := span[0], span[1]
		rest := to == b.NumPhases()
		p := b.Pack(from, to, rest)
		lo, hi := b.PhaseStart(from), b.PhaseStart(to)
		if p.From != from || p.To != to || p.Rest != rest {
			t.Fatalf("Pack(%d, %d, %v) reports %d, %d, %v", from, to, rest, p.From, p.To, p.Rest)
		}
		if got := int32s(p.Words, 0, hi-lo); !slices.Equal(got, b.Sources[lo:hi]) {
			t.Fatalf("phases [%d, %d): sources differ", from, to)
		}
		if got := int32s(p.Words, p.Rows, hi-lo); !slices.Equal(got, b.Rows[lo:hi]) {
			t.Fatalf("phases [%d, %d): rows differ", from, to)
		}
		if !rest {
			if len(p.Words) != p.Rows+(hi-lo+1)/2 {
				t.Fatalf("first phase alone: %d words", len(p.Words))
			}
			continue
		}
		for i, d := range b.Derive {
			w := p.Words[p.Derive+4*i:]
			if (Derivation{int32(w[0]), int32(w[1]), int32(w[2]), w[3]}) != d {
				t.Fatalf("derivation %d packed as %v, want %+v", i, w[:4], d)
			}
		}
		for name, list := range map[string]struct {
			at    int
			items []MinDerivation
		}{"minimum": {p.Mins, b.Mins}, "seed": {p.Seeds, b.Seeds}} {
			for i, d := range list.items {
				w := p.Words[list.at+4*i:]
				if (MinDerivation{int32(w[0]), int32(w[1]), int32(w[2]), int32(w[3])}) != d {
					t.Fatalf("%s %d packed as %v, want %+v", name, i, w[:4], d)
				}
			}
		}
		for i, a := range b.MinArcs {
			if w := p.Words[p.Arcs+2*i:]; (MinArc{int32(w[0]), w[1]}) != a {
				t.Fatalf("arc %d packed as %v, want %+v", i, w[:2], a)
			}
		}
		if len(p.Words) != p.Arcs+2*len(b.MinArcs) {
			t.Fatalf("%d words, want %d", len(p.Words), p.Arcs+2*len(b.MinArcs))
		}
	}
}
