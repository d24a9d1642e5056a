// Package kerneltable reads the CUDA sources of gpu/kernels and writes the
// gpu package's table of kernel entry points (gpu/kernels_gen.go): every
// `extern "C" __global__` function with its parameters, and the block size
// PATHCTL_THREADS of common.cuh. It needs no CUDA compiler, so the table can
// be regenerated, and checked against the sources, anywhere.
//
// The sources define most entry points through function-like macros, one
// invocation per distance type (PATHCTL_DIJKSTRA(i32, int)). Parse expands
// those invocations with the subset of the preprocessor the sources use:
// parameters replaced as whole tokens and `##` pasting; it does not expand
// macros inside macros, which the entry points' names and parameters do not
// need.
package kerneltable
