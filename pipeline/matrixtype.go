package pipeline

// The value type of a matrix result (Options.MatrixType). The engine
// computes in the distance type (graph.ChooseDistType: int32 for integer
// weights and hop counts, exact and what the kernels are built for); a
// matrix may carry its values in another type, converted as its records
// are built (arrowio.ResultBuilder.SetMatrixType). The Python package's
// distance_matrix asks for MatrixFloat: numpy has no nulls, and scipy
// marks unreachable pairs with inf.
//
// A conversion must keep every distance exact, which is decided before
// anything is computed from a bound of the finite distances
// (distanceBound): n-1 arcs of the heaviest weight (hops: n-1), at most
// the cutoff where one is given and no weight is negative. Float32 holds
// integers exactly up to 2^24, float64 up to 2^53.

import (
	"fmt"
	"math"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// MatrixTypeError is a matrix type that is no type, or cannot hold every
// distance of the request exactly; it is an ErrInvalid.
type MatrixTypeError struct {
	Type   string // as asked for
	Reason string // why not, and what to use instead
}

func (e *MatrixTypeError) Error() string { return fmt.Sprintf("matrix type %s: %s", e.Type, e.Reason) }

// Unwrap makes the error an ErrInvalid.
func (e *MatrixTypeError) Unwrap() error { return ErrInvalid }

// MatrixFloat is the matrix type "float": float32 where every finite
// distance is exact in float32 (float32 distances, or integer distances
// whose bound is at most 2^24), else float64.
const MatrixFloat = "float"

// Integers that float32 and float64 hold exactly: up to 2^24 and 2^53.
const (
	exactFloat32 = 1 << 24
	exactFloat64 = 1 << 53
)

// checkMatrixType refuses a matrix type that is not "", MatrixFloat or a
// distance type's name.
func checkMatrixType(s string) error {
	if s == "" || s == MatrixFloat {
		return nil
	}
	if _, err := graph.ParseDistType(s); err != nil {
		return &MatrixTypeError{Type: s, Reason: "want float, int32, int64, float32 or float64"}
	}
	return nil
}

// matrixType is the type of the values of opt's result: for the matrix
// layout the one Options.MatrixType asks for (MatrixFloat resolved by the
// bound), else the distance type. A type that cannot hold every distance
// exactly is an ErrInvalid that says which can.
func (g *Graph) matrixType(opt Options) (graph.DistType, error) {
	dist := g.resultType(opt.Algorithm)
	if opt.Layout != arrowio.LayoutMatrix || opt.MatrixType == "" {
		return dist, nil
	}
	bound := g.distanceBound(opt)
	if opt.MatrixType == MatrixFloat {
		switch {
		case dist.IsFloat():
			return dist, nil
		case bound <= exactFloat32:
			return graph.DistFloat32, nil
		}
		return graph.DistFloat64, nil
	}
	t, err := graph.ParseDistType(opt.MatrixType)
	if err != nil {
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: err.Error()}
	}
	if t == dist {
		return t, nil
	}
	why := fmt.Sprintf("the distances reach up to %.0f (%s)", bound, g.boundWhy(opt))
	switch {
	case dist.IsFloat() && !t.IsFloat():
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: fmt.Sprintf("%s cannot hold %s distances; use float32 or float64", t, dist)}
	case dist == graph.DistFloat64 && t == graph.DistFloat32:
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: "float32 would round the float64 distances; use float64"}
	case dist.IsFloat():
		return t, nil // float32 into float64
	case t == graph.DistInt32 && bound >= math.MaxInt32:
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: fmt.Sprintf("int32 cannot hold this graph's distances: %s; use int64 or float64", why)}
	case t == graph.DistFloat32 && bound > exactFloat32:
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: fmt.Sprintf("float32 holds integers exactly up to 2^24 = %d, and %s; use float64", exactFloat32, why)}
	case t == graph.DistFloat64 && bound > exactFloat64:
		return 0, &MatrixTypeError{Type: opt.MatrixType, Reason: fmt.Sprintf("float64 holds integers exactly up to 2^53, and %s; use int64", why)}
	}
	return t, nil
}

// distanceBound bounds |d| over the finite distances of opt's run: a
// shortest path has at most n-1 arcs, each at most the heaviest |w| (1
// for hop counts); with a cutoff and no negative weight no finite
// distance is above the cutoff.
func (g *Graph) distanceBound(opt Options) float64 {
	n := g.NumVertices()
	heaviest := 1.0
	if !countsHops(g, opt.Algorithm) {
		heaviest = max(math.Abs(g.CSR.MinWeight), math.Abs(g.CSR.MaxWeight))
	}
	bound := float64(max(n-1, 0)) * heaviest
	if opt.HasCutoff && (countsHops(g, opt.Algorithm) || g.CSR.MinWeight >= 0) {
		bound = min(bound, math.Floor(opt.Cutoff))
	}
	return bound
}

// boundWhy says where distanceBound's figure comes from.
func (g *Graph) boundWhy(opt Options) string {
	n := max(g.NumVertices()-1, 0)
	if countsHops(g, opt.Algorithm) {
		return fmt.Sprintf("%d hops", n)
	}
	return fmt.Sprintf("%d arcs of weight up to %g", n, max(math.Abs(g.CSR.MinWeight), math.Abs(g.CSR.MaxWeight)))
}

// countsHops reports whether a run of a on g counts hops (resultType's
// int32 hop counts).
func countsHops(g *Graph, a graph.Algorithm) bool {
	return a.CountsHops() || (a == graph.Auto && !g.CSR.Weighted)
}
