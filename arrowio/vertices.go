package arrowio

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Vertices is the vertex dictionary of a graph: dense id i is the i-th
// smallest external id. External ids are integers (any Arrow integer type,
// kept in Ints, with uint64 values above MaxInt64 stored by their bits and
// ordered as unsigned) or strings (utf8, large_utf8 or a dictionary of them,
// kept in Strings and ordered byte-wise).
type Vertices struct {
	// Type is the external id type as the input had it; for a dictionary
	// column, its value type.
	Type    arrow.DataType
	Ints    []int64
	Strings []string
}

// Len is the number of vertices.
func (v *Vertices) Len() int {
	if v.Strings != nil {
		return len(v.Strings)
	}
	return len(v.Ints)
}

// Subset returns the vertices of the dense ids in the order given (the
// columns of a matrix narrowed to some targets), for output: their ids
// are not sorted, so Lookup does not apply to them.
func (v *Vertices) Subset(dense []int32) *Vertices {
	out := &Vertices{Type: v.Type}
	if v.Strings != nil {
		out.Strings = make([]string, len(dense))
		for i, d := range dense {
			out.Strings[i] = v.Strings[d]
		}
		return out
	}
	out.Ints = make([]int64, len(dense))
	for i, d := range dense {
		out.Ints[i] = v.Ints[d]
	}
	return out
}

// IsString reports whether external ids are strings.
func (v *Vertices) IsString() bool { return v.Strings != nil || isStringType(v.Type) }

// Format returns the external id of dense id i as text, for messages and CSV.
func (v *Vertices) Format(i int32) string {
	if v.IsString() {
		return v.Strings[i]
	}
	if v.Type != nil && v.Type.ID() == arrow.UINT64 {
		return strconv.FormatUint(uint64(v.Ints[i]), 10)
	}
	return strconv.FormatInt(v.Ints[i], 10)
}

func isStringType(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// Lookup returns the dense id of an external id given as text (CLI sources,
// Flight requests). Integer ids are parsed in the id type (uint64 ids as
// unsigned); the error names the id when it does not parse or is not a
// vertex. It runs in O(log n), in a few steps for ids numbered nearly
// 0..n-1 (searchIDs).
func (v *Vertices) Lookup(id string) (int32, error) {
	if v.IsString() {
		i, found := slices.BinarySearch(v.Strings, id)
		if !found {
			return -1, fmt.Errorf("arrowio: vertex %q is not in the graph", id)
		}
		return int32(i), nil
	}
	text := strings.TrimSpace(id)
	if v.Type != nil && v.Type.ID() == arrow.UINT64 {
		u, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return -1, fmt.Errorf("arrowio: vertex %q is not a uint64 id", id)
		}
		i, found := slices.BinarySearchFunc(v.Ints, u, func(e int64, t uint64) int { return cmp.Compare(uint64(e), t) })
		if !found {
			return -1, fmt.Errorf("arrowio: vertex %q is not in the graph", id)
		}
		return int32(i), nil
	}
	x, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		typ := "integer"
		if v.Type != nil {
			typ = v.Type.String()
		}
		return -1, fmt.Errorf("arrowio: vertex %q is not a valid %s id", id, typ)
	}
	i, found := searchIDs(v.Ints, x)
	if !found {
		return -1, fmt.Errorf("arrowio: vertex %q is not in the graph", id)
	}
	return int32(i), nil
}

// searchIDs returns the index of x in ids, which are sorted and distinct,
// and whether it is there. It probes where x would sit if the ids between
// the bounds were evenly spaced (interpolation), at most searchProbes
// times, then searches the bounds left in halves. After each probe at g,
// distinct integers climbing by at least one an index bound x's place to
// within |ids[g] - x| places of g: for ids numbered nearly 0..n-1 (a few
// gaps, the usual numbering) the first probe lands within a cache line of
// x, where a plain binary search takes 20 mostly cache-missing steps over
// a million ids. The halving keeps the worst case at O(log n).
func searchIDs(ids []int64, x int64) (int, bool) {
	lo, hi := 0, len(ids)-1 // x's index, if any, is in [lo, hi]
	for range searchProbes {
		if lo > hi || x < ids[lo] || x > ids[hi] {
			return 0, false
		}
		span := float64(ids[hi]) - float64(ids[lo])
		g := lo
		if span > 0 {
			g += int(float64(hi-lo) * ((float64(x) - float64(ids[lo])) / span))
		}
		g = min(max(g, lo), hi)
		y := ids[g]
		switch {
		case y == x:
			return g, true
		case y > x:
			hi = g - 1
			// Differences in uint64: y - x may not fit in an int64.
			if d := uint64(y) - uint64(x); d < uint64(g-lo) {
				lo = g - int(d)
			}
		default:
			lo = g + 1
			if d := uint64(x) - uint64(y); d < uint64(hi-g) {
				hi = g + int(d)
			}
		}
	}
	if lo > hi {
		return 0, false
	}
	i, found := slices.BinarySearch(ids[lo:hi+1], x)
	return lo + i, found
}

// searchProbes is how many interpolation probes searchIDs makes before it
// searches in halves: enough for nearly consecutive ids, few enough that
// ids spaced nothing like evenly cost little more than the halving.
const searchProbes = 3
