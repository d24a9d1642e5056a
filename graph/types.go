package graph

import (
	"fmt"
	"math"
)

// VertexID is a dense vertex id in [0, NumVertices).
type VertexID = int32

// EdgeOffset indexes the CSR edge arrays.
type EdgeOffset = int64

// MaxVertices is the largest vertex count a graph may have: dense ids are int32.
const MaxVertices = math.MaxInt32

// DistType is the element type of distances (and of CSR weights).
type DistType uint8

// The distance types. The zero value is invalid.
const (
	DistInt32 DistType = iota + 1
	DistInt64
	DistFloat32
	DistFloat64
)

// String returns the Arrow name of the type ("int32", "float64", ...).
func (t DistType) String() string {
	switch t {
	case DistInt32:
		return "int32"
	case DistInt64:
		return "int64"
	case DistFloat32:
		return "float32"
	case DistFloat64:
		return "float64"
	}
	return fmt.Sprintf("DistType(%d)", uint8(t))
}

// ParseDistType parses the names String returns.
func ParseDistType(s string) (DistType, error) {
	for _, t := range []DistType{DistInt32, DistInt64, DistFloat32, DistFloat64} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("graph: unknown distance type %q (want int32, int64, float32 or float64)", s)
}

// Size is the width of one distance in bytes.
func (t DistType) Size() int {
	switch t {
	case DistInt32, DistFloat32:
		return 4
	case DistInt64, DistFloat64:
		return 8
	}
	return 0
}

// IsFloat reports whether t is a floating-point type.
func (t DistType) IsFloat() bool { return t == DistFloat32 || t == DistFloat64 }

// Number is the set of Go types distances and weights take.
type Number interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// Infinity returns the "unreachable" distance of D: +Inf for floats and the
// largest value for integers. No reachable distance equals it (the distance
// type is chosen so that every simple path's length is strictly below it).
func Infinity[D Number]() D {
	var d D
	switch any(d).(type) {
	case int32:
		return D(math.MaxInt32)
	case int64:
		x := int64(math.MaxInt64)
		return D(x)
	case float32:
		return D(math.Inf(1))
	default:
		return D(math.Inf(1))
	}
}

// TypeOf returns the DistType of D.
func TypeOf[D Number]() DistType {
	var d D
	switch any(d).(type) {
	case int32:
		return DistInt32
	case int64:
		return DistInt64
	case float32:
		return DistFloat32
	default:
		return DistFloat64
	}
}

// AddSaturating returns d+w, or Infinity when d is Infinity. Integer sums that
// would overflow also return Infinity; they cannot occur on a valid graph but
// keep relaxations monotone on any input.
func AddSaturating[D Number](d, w D) D {
	inf := Infinity[D]()
	if d == inf {
		return inf
	}
	s := d + w
	switch any(d).(type) {
	case int32, int64:
		if w > 0 && s < d {
			return inf
		}
	}
	return s
}

// Distinct is ids without repeats, in the order of their first
// occurrence; nil stays nil.
func Distinct(ids []VertexID) []VertexID {
	if ids == nil {
		return nil
	}
	seen := make(map[VertexID]bool, len(ids))
	out := make([]VertexID, 0, len(ids))
	for _, v := range ids {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
