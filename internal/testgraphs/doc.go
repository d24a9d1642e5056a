// Package testgraphs is the one shared table of small graphs with known
// answers that the engines, the readers, the pipeline and the CLI test
// against.
//
// Every answer in the table was written by hand and checked by reasoning,
// not produced by running the code under test. External vertex ids are kept
// as text (decimal integers, or strings when Case.StringIDs is set) so that
// readers and writers can be tested on the same cases; the helpers map them
// to dense ids in design.md's vertex order (ascending numeric or byte-wise
// order) and build graph.Edges, the CSR and the expected distance matrices.
package testgraphs
