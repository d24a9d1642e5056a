package pipeline

import "github.com/pathctl/pathctl/graph"

// The names of graph that a front end (the CLI, the Flight service) uses,
// so that it depends on pipeline alone: the algorithms, the distance types,
// and the errors of negative weights and cycles that front ends map to
// their own statuses.
type (
	// Algorithm is graph.Algorithm: a name of design.md's algorithm table.
	Algorithm = graph.Algorithm
	// DistType is graph.DistType: the type of the distances of a result.
	DistType = graph.DistType
)

// The algorithms a front end names without parsing them.
const (
	Auto     = graph.Auto
	BFS      = graph.BFS
	BFSLevel = graph.BFSLevel
	CH       = graph.CH
)

var (
	// ErrNegativeWeight is wrapped by the error of a negative weight that
	// the chosen algorithm cannot take (graph.ErrNegativeWeight).
	ErrNegativeWeight = graph.ErrNegativeWeight
	// ErrNegativeCycle is wrapped by the error of a negative cycle that
	// Bellman-Ford found (graph.ErrNegativeCycle).
	ErrNegativeCycle = graph.ErrNegativeCycle
)

// ParseAlgorithm reads an algorithm name (graph.ParseAlgorithm).
func ParseAlgorithm(s string) (Algorithm, error) { return graph.ParseAlgorithm(s) }

// ParseDistType reads a distance type name (graph.ParseDistType).
func ParseDistType(s string) (DistType, error) { return graph.ParseDistType(s) }
