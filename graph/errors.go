package graph

import (
	"errors"
	"fmt"
)

// ErrNegativeWeight is wrapped by NegativeWeightError.
var ErrNegativeWeight = errors.New("negative edge weight")

// NegativeWeightError reports a negative weight under an algorithm that
// cannot take one. Callers map From and To back to external ids.
type NegativeWeightError struct {
	Algorithm Algorithm
	From, To  VertexID
	Weight    float64
}

func (e *NegativeWeightError) Error() string {
	return fmt.Sprintf("negative edge weight %v on edge %d -> %d: algorithm %q needs non-negative weights; use the bellman-ford algorithm",
		e.Weight, e.From, e.To, e.Algorithm)
}

func (e *NegativeWeightError) Unwrap() error { return ErrNegativeWeight }

// ErrNegativeCycle is wrapped by NegativeCycleError.
var ErrNegativeCycle = errors.New("negative cycle")

// NegativeCycleError reports a negative cycle reachable from Source, with a
// vertex on the cycle.
type NegativeCycleError struct {
	Source VertexID
	Vertex VertexID
}

func (e *NegativeCycleError) Error() string {
	return fmt.Sprintf("negative cycle through vertex %d (reachable from source %d)", e.Vertex, e.Source)
}

func (e *NegativeCycleError) Unwrap() error { return ErrNegativeCycle }
