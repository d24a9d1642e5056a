// bfs.cu: the "bfs" algorithm, BFS with atomics and predecessors after
// seeds/002_75570bc8eedf73c5.txt Algorithm 0.1: the label-correcting loop of
// label_correcting.cuh with every weight 1, int32 hop counts.
//
// Entry points:
// - bfs_i32: hop counts only (PlainCells, atomicMin).
// - bfs_pred_i32: PackedCells with a 64-bit atomicMin on (hops, predecessor),
//   so among equal hop counts the smallest predecessor wins, deterministically.
#include "label_correcting.cuh"

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    bfs_i32(const long long* offsets, const int* targets, int n, const int* sources, int numSources, int* dist,
            u8* frontier, int* status) {
  using namespace pathctl;
  Graph<int> g = {offsets, targets, nullptr, nullptr, n, 0};
  forEachSource(numSources, [&](int i) {
    u8* f = rowOf(frontier, i, 2 * n);
    labelcorrecting::PlainCells<int> cells = {rowOf(dist, i, n)};
    labelcorrecting::source<int, true>(g, sources[i], cells, f, f + n, status + i);
  });
}

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    bfs_pred_i32(const long long* offsets, const int* targets, int n, const int* sources, int numSources,
                 u64* cells, int* dist, int* pred, u8* frontier, int* status) {
  using namespace pathctl;
  Graph<int> g = {offsets, targets, nullptr, nullptr, n, 0};
  forEachSource(numSources, [&](int i) {
    u8* f = rowOf(frontier, i, 2 * n);
    labelcorrecting::PackedCells<int, true> c = {rowOf(cells, i, n), rowOf(dist, i, n), rowOf(pred, i, n)};
    labelcorrecting::source<int, true>(g, sources[i], c, f, f + n, status + i);
  });
}
