package graph

import (
	"fmt"
	"strings"
)

// Algorithm names a shortest-path algorithm, as the CLI, Flight and Python
// spell it (design.md, "Algorithms").
type Algorithm string

// The algorithms. Every engine implements all of them but CH, which only
// the CPU engine runs so far (the pipeline routes it there). Auto is
// resolved by each engine's Prepare, to one of the others or to a faster
// kernel of the engine's own (cpu/auto.go, gpu/auto.go); it does not pick
// CH yet.
const (
	Dijkstra    Algorithm = "dijkstra"     // per-source label correcting with a changed flag and predist
	Delta       Algorithm = "delta"        // delta-stepping: light edges inside a bucket, heavy edges once
	Edge        Algorithm = "edge"         // edge-parallel relaxation until no change
	BFS         Algorithm = "bfs"          // atomic hop-count relaxation with predecessors
	BFSLevel    Algorithm = "bfs-level"    // level-synchronous BFS, no atomics, no predecessors
	BellmanFord Algorithm = "bellman-ford" // label correcting with predecessors; negative weights allowed
	CH          Algorithm = "ch"           // contraction hierarchy (package hierarchy), PHAST sweeps; no predecessors
	Auto        Algorithm = "auto"         // the fastest correct choice for the graph
)

// Algorithms lists every selectable name, Auto last.
var Algorithms = []Algorithm{Dijkstra, Delta, Edge, BFS, BFSLevel, BellmanFord, CH, Auto}

// ParseAlgorithm accepts the names of Algorithms.
func ParseAlgorithm(s string) (Algorithm, error) {
	for _, a := range Algorithms {
		if string(a) == s {
			return a, nil
		}
	}
	names := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		names[i] = string(a)
	}
	return "", fmt.Errorf("graph: unknown algorithm %q (want one of %s)", s, strings.Join(names, ", "))
}

// CountsHops reports whether a ignores weights and counts edges.
func (a Algorithm) CountsHops() bool { return a == BFS || a == BFSLevel }

// AcceptsNegative reports whether a is correct on negative weights.
func (a Algorithm) AcceptsNegative() bool { return a == BellmanFord }

// HasPredecessors reports whether a can report predecessors. bfs-level
// follows its seed and stores none; ch's sweeps keep none (yet).
func (a Algorithm) HasPredecessors() bool { return a != BFSLevel && a != CH }

// Request is what an engine is asked to compute for every block of a run.
type Request struct {
	// Algorithm may be Auto: the engine's Prepare resolves it to a kernel
	// of its own choosing (cpu/auto.go, gpu/auto.go), which the runner's
	// Describe names. Any other name runs that algorithm's kernel.
	Algorithm Algorithm
	// WithPredecessors asks for Block.Pred.
	WithPredecessors bool
	// Delta is the bucket width of delta-stepping; 0 lets the engine choose.
	Delta float64
	// Threads bounds CPU parallelism; 0 means all cores.
	Threads int
	// Targets, when not nil, are the only columns asked for: the blocks
	// of the run carry Block.Targets, and row i, column j holds the
	// distance from Sources[i] to Targets[j] (design.md, "Queries
	// narrower than all pairs"). A runner that is not a NarrowRunner
	// ignores it, and the pipeline gathers the columns on the host.
	Targets []VertexID
	// Cutoff, when HasCutoff, makes every distance above it unreachable
	// (Infinity in the block, no predecessor). Kernels that settle
	// vertices in distance order stop relaxing past it.
	Cutoff    float64
	HasCutoff bool
	// StopAt, when not nil (Targets then nil), asks for full rows of
	// which only the cells of these vertices must be final, with their
	// predecessors (and so those of every vertex on the shortest paths
	// to them): a runner may stop a source's search once they are, the
	// other cells then holding what the search had reached. The pipeline
	// sets it for the paths to some targets, which it walks back along
	// the full predecessor rows before it narrows them on the host. A
	// runner that does not stop early ignores it.
	StopAt []VertexID
	// RoundFloat32 says that the float64 rows are a float32 result (float32
	// weights computed in float64, pipeline's rounding.go): an engine that
	// selects the k nearest itself (NearestSelector) chooses them on the
	// cells rounded to the nearest float32, after the cutoff compared the
	// float64 distance.
	RoundFloat32 bool
}

// Narrowed reports whether req asks for less than every distance: some
// targets, or a cutoff.
func (req Request) Narrowed() bool { return req.Targets != nil || req.HasCutoff }
