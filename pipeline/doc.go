// Package pipeline joins readers, engines and writers: it chooses the engine
// and the algorithm, plans source blocks under a memory budget, runs the
// blocks (compute overlapping with output), turns blocks into Arrow record
// batches through the pairs, matrix and stats sinks, and reports progress.
//
// Where things live: Run in run.go; the producer schedules that compute the
// blocks (one at a time, started ahead, or from device-resident blocks) in
// schedule.go; block planning and memory budgets in blocks.go; the
// --verbose time lines in timings.go; the engine choice in engines.go; the
// GPU engine's adapter to the engine seam (graph/seam.go) in gpu.go.
package pipeline
