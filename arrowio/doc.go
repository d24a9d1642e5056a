// Package arrowio moves graphs and results across the Arrow boundary: edge
// readers for Parquet, Arrow IPC (file and stream), CSV/TSV (optionally gzip
// or zstd compressed) and DIMACS .gr; the vertex dictionary between external
// ids and dense int32 ids; the result schemas of the pairs, matrix and stats
// layouts; and writers for IPC file, IPC stream, Parquet and CSV that write to
// a temporary name and rename on success.
//
// arrowio knows Arrow, not CUDA. Errors are prefixed "arrowio: ".
package arrowio
