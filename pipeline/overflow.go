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
// The integer rule is graph.IntSumsFit's; graph.ChooseDistType already
// picks int64 where int32 would not hold the sums, so only an int32 asked
// for (--dist-type) or an int64 that cannot hold them is refused here.

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
// type bopt asks for (or graph.ChooseDistType chooses).
func checkDistanceRange(t *arrowio.EdgeTable, bopt *graph.BuildOptions) error {
	e := &t.Edges
	n := e.NumVertices
	if n < 2 || !e.Weighted() {
		return nil
	}
	dt := bopt.DistType
	if dt == 0 {
		dt = graph.ChooseDistType(e)
	}
	switch {
	case e.IntWeights != nil && !dt.IsFloat():
		arc, maxAbs := graph.HeaviestIntArc(e)
		if arc < 0 {
			return nil
		}
		if dt == graph.DistInt32 && !graph.IntSumsFit(n, maxAbs, math.MaxInt32) {
			return overflowError(t, arc, e.IntWeights[arc], n, "int32", "use --dist-type int64")
		}
		if dt == graph.DistInt64 && !graph.IntSumsFit(n, maxAbs, math.MaxInt64) {
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

// heaviestFloatArc is graph.HeaviestIntArc for the float weight at(i).
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
