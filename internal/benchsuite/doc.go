// Package benchsuite is the benchmark behind `pathctl bench`: one harness
// whose kernel (a pipeline.Prepared query's Run), verifier
// (pipeline.Verify and pipeline.RowCheck) and bandwidth probe
// (pipeline.MeasureDownload) are parameters, a suite of seeded graphs, a
// disk test and the report as markdown or JSON. bench/bench_gpu.py drives
// it through `pathctl bench --json` and adds the peers (scipy, networkx,
// NetworKit).
//
// For every graph × engine × algorithm it times the Run of one prepared
// query (pipeline.Prepare) over every source (or a seeded sample,
// extrapolated and flagged) in the stats layout, discarding the records
// but counting them, and checks the run against the serial oracle of
// internal/ref on a few sampled sources in two ways: the rows of the
// timed run itself (a pipeline.RowCheck: reachable,
// eccentricity, sum, closeness and harmonic, or the distances of a matrix
// run), and every distance of a separate pipeline.Verify of those sources.
// A mismatch fails the run, so a fast wrong answer cannot reach the table.
// Beside the runs it measures what bounds them: the device-to-host
// bandwidth, which gives each graph's floor (n² distances copied to the
// host), and, for one graph, the speed of writing its matrix to an
// uncompressed Arrow IPC file against a plain sequential write of the same
// bytes in the same directory, both fsynced.
//
// Errors are prefixed "bench: "; those in the parameters are a
// *ParamsError, those in an input edge file an *InputError.
package benchsuite
