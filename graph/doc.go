// Package graph holds the shapes every engine shares: the compressed sparse
// row graph (CSR) with dense int32 vertex ids and int64 edge offsets, the
// distance type rules of design.md, the distance block an engine fills for a
// block of sources, the algorithm names, and the typed errors an engine
// returns (negative weights, negative cycles).
//
// The package knows plain slices only: no Arrow, no CUDA.
package graph
