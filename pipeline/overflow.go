package pipeline

// Distances that overflow. Engines add an arc's weight to a tentative
// distance without a check (the GPU kernels plainly, the CPU engine
// saturating at Infinity), so a path length beyond the distance type would
// be dropped as unreachable, saturated, or wrapped to a negative number.
// Instead, a graph whose distances might leave the type is refused when it
// is loaded, whatever the engine, naming its heaviest arc:
//
//   - a relaxation adds one arc to a path of at most n-1 arcs, so every sum
//     an engine forms is bounded by n·max|w| (self-loops aside, which are
//     dropped); integer distances need n·max|w| <= the type's maximum,
//     whose value itself stands for "unreachable" and is never a distance;
//   - float distances need n·max|w| <= half the type's largest finite
//     value: +Inf is "unreachable" on every engine (the GPU kernels take a
//     sum of +Inf as no path), so a sum may not round up to it; the factor
//     2 leaves room for rounding.
//
// Where the distance type was chosen (not --dist-type) and int32 holds the
// path lengths, (n-1)·max|w|, but not the sums, n·max|w|, the graph gets
// int64 distances instead of a refusal.

import (
	"errors"
	"fmt"
	"math"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// ErrDistanceOverflow is wrapped by LoadGraph's error for a graph whose
// path lengths the distance type cannot hold.
var ErrDistanceOverflow = errors.New("path lengths overflow the distance type")

// checkDistanceRange refuses t when its distances could leave the distance
// type bopt asks for (or would choose), and widens a chosen int32 to int64
// where only the latter holds every sum.
func checkDistanceRange(t *arrowio.EdgeTable, bopt *graph.BuildOptions) error {
	e := &t.Edges
	n := e.NumVertices
	if n < 2 || !e.Weighted() {
		return nil
	}
	dt := bopt.DistType
	chosen := dt == 0
	if chosen {
		dt = graph.ChooseDistType(e)
	}
	switch {
	case e.IntWeights != nil && !dt.IsFloat():
		arc, maxAbs := heaviestIntArc(e)
		if arc < 0 {
			return nil
		}
		if dt == graph.DistInt32 && maxAbs > math.MaxInt32/uint64(n) {
			if !chosen && graph.ChooseDistType(e) != graph.DistInt32 {
				return nil // graph.Build says int32 cannot hold the path lengths
			}
			if !chosen {
				return overflowError(t, arc, e.IntWeights[arc], n, "int32", "use --dist-type int64")
			}
			dt, bopt.DistType = graph.DistInt64, graph.DistInt64
		}
		if dt == graph.DistInt64 && maxAbs > math.MaxInt64/uint64(n) {
			return overflowError(t, arc, e.IntWeights[arc], n, "int64", "scale the weights down (or pass --unweighted for hop counts)")
		}
	case e.Float32Weights != nil && dt == graph.DistFloat32:
		arc, maxAbs := heaviestFloatArc(e, func(i int) float64 { return float64(e.Float32Weights[i]) })
		if arc >= 0 && maxAbs > math.MaxFloat32/2/float64(n) {
			return overflowError(t, arc, e.Float32Weights[arc], n, "float32", "use --dist-type float64, or scale the weights down")
		}
	case e.Float32Weights != nil && dt == graph.DistFloat64:
		arc, maxAbs := heaviestFloatArc(e, func(i int) float64 { return float64(e.Float32Weights[i]) })
		if arc >= 0 && maxAbs > math.MaxFloat64/2/float64(n) {
			return overflowError(t, arc, e.Float32Weights[arc], n, "float64", "scale the weights down (or pass --unweighted for hop counts)")
		}
	case e.Float64Weights != nil && dt.IsFloat():
		limit := math.MaxFloat64
		if dt == graph.DistFloat32 {
			limit = math.MaxFloat32
		}
		arc, maxAbs := heaviestFloatArc(e, func(i int) float64 { return e.Float64Weights[i] })
		if arc >= 0 && maxAbs > limit/2/float64(n) {
			return overflowError(t, arc, e.Float64Weights[arc], n, dt.String(), "scale the weights down (or pass --unweighted for hop counts)")
		}
	}
	return nil
}

// heaviestIntArc is the row of the largest |w| among arcs that are not
// self-loops (-1 when every arc is one), and that |w|.
func heaviestIntArc(e *graph.Edges) (int, uint64) {
	arc, maxAbs := -1, uint64(0)
	for i, w := range e.IntWeights {
		a := uint64(w)
		if w < 0 {
			a = -a
		}
		if (arc < 0 || a > maxAbs) && e.Src[i] != e.Dst[i] {
			arc, maxAbs = i, a
		}
	}
	return arc, maxAbs
}

// heaviestFloatArc is heaviestIntArc for the float weight at(i).
func heaviestFloatArc(e *graph.Edges, at func(int) float64) (int, float64) {
	arc, maxAbs := -1, 0.0
	for i := range e.Src {
		if a := math.Abs(at(i)); (arc < 0 || a > maxAbs) && e.Src[i] != e.Dst[i] {
			arc, maxAbs = i, a
		}
	}
	return arc, maxAbs
}

func overflowError[W int64 | float32 | float64](t *arrowio.EdgeTable, arc int, w W, n int, typ, hint string) error {
	name := func(v graph.VertexID) string {
		if t.Vertices != nil && int(v) < t.Vertices.Len() {
			return t.Vertices.Format(v)
		}
		return fmt.Sprint(v)
	}
	return fmt.Errorf("%s: edge %s -> %s weighs %v: with %d vertices, path sums reach up to %d·|w| = %g, beyond the range of %s distances (%w); %s",
		t.Name, name(t.Edges.Src[arc]), name(t.Edges.Dst[arc]), w, n, n, float64(n)*math.Abs(float64(w)), typ, ErrDistanceOverflow, hint)
}
