// Package graph holds the shapes every engine shares: the compressed sparse
// row graph (CSR) with dense int32 vertex ids and int64 edge offsets, the
// distance type rules of design.md, the distance block an engine fills for a
// block of sources, the algorithm names, and the typed errors an engine
// returns (negative weights, negative cycles).
//
// It also names the engine seam (seam.go): Engine, Runner and every optional
// interface an engine may implement for the pipeline, each with who
// implements it and when the pipeline uses it.
//
// The package knows plain slices only: no Arrow, no CUDA.
package graph
