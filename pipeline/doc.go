// Package pipeline joins readers, engines and writers: it chooses the engine
// and the algorithm, plans source blocks under a memory budget, runs the
// blocks (compute overlapping with output), turns blocks into Arrow record
// batches through the pairs, matrix and stats sinks, and reports progress.
package pipeline
