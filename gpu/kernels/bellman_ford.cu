// bellman_ford.cu: the "bellman-ford" algorithm, label-correcting SSSP with
// predecessors after seeds/002_75570bc8eedf73c5.txt Algorithm 0.3: negative
// weights allowed, a negative cycle reachable from the source reported
// through status. The loop and its choices are in label_correcting.cuh.
//
// Entry points per distance type:
// - bellman_ford_T: distances only (PlainCells); for 64-bit types the Go
//   side derives predecessors afterwards with predecessors.cu.
// - bellman_ford_pred_T (int32, float32): PackedCells, the predecessor
//   written with the distance in one 64-bit CAS, as the seed writes t.pred.
#include "label_correcting.cuh"

#define PATHCTL_BELLMAN_FORD(SUFFIX, T)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) bellman_ford_##SUFFIX(             \
      const long long* offsets, const int* targets, const T* weights, int n, const int* sources,   \
      int numSources, T* dist, u8* frontier, int* status) {                                        \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    forEachSource(numSources, [&](int i) {                                                         \
      u8* f = rowOf(frontier, i, 2 * n);                                                           \
      labelcorrecting::PlainCells<T> cells = {rowOf(dist, i, n)};                                  \
      labelcorrecting::source<T, false>(g, sources[i], cells, f, f + n, status + i);               \
    });                                                                                            \
  }

#define PATHCTL_BELLMAN_FORD_PRED(SUFFIX, T)                                                       \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) bellman_ford_pred_##SUFFIX(        \
      const long long* offsets, const int* targets, const T* weights, int n, const int* sources,   \
      int numSources, u64* cells, T* dist, int* pred, u8* frontier, int* status) {                 \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    forEachSource(numSources, [&](int i) {                                                         \
      u8* f = rowOf(frontier, i, 2 * n);                                                           \
      labelcorrecting::PackedCells<T, false> c = {rowOf(cells, i, n), rowOf(dist, i, n),           \
                                                  rowOf(pred, i, n)};                              \
      labelcorrecting::source<T, false>(g, sources[i], c, f, f + n, status + i);                   \
    });                                                                                            \
  }

PATHCTL_BELLMAN_FORD(i32, int)
PATHCTL_BELLMAN_FORD(i64, long long)
PATHCTL_BELLMAN_FORD(f32, float)
PATHCTL_BELLMAN_FORD(f64, double)
PATHCTL_BELLMAN_FORD_PRED(i32, int)
PATHCTL_BELLMAN_FORD_PRED(f32, float)
