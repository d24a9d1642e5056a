package arrowio

import (
	"strconv"

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
