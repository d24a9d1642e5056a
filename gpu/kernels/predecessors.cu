// predecessors.cu: predecessors from final distances, for the algorithms
// whose seeds track none (dijkstra, delta, edge) and for bellman-ford on
// 64-bit distances. One thread block per source.
//
// An arc (u, v, w) is tight when dist[u] + w == dist[v] (the same addition
// the relaxation kernels did, so exact for floats too). The block runs a
// level-synchronous BFS from the source over tight arcs only: at level L each
// tight arc from a level-L vertex to an unlabelled vertex does atomicMin on
// pred[v]; then the unlabelled vertices that got a predecessor take level
// L+1. Every reachable vertex has a tight path from the source, so every one
// gets a predecessor; the BFS makes the predecessors a tree even where
// zero-weight cycles make tight arcs cyclic; and the smallest candidate wins,
// so the result does not depend on timing.
//
// level is an int32 row per source (the Go side lends the predist buffer).
#include "common.cuh"

namespace pathctl {
namespace predecessors {

template <typename T>
__device__ void source(const Graph<T>& g, int s, const T* dist, int* level, int* pred) {
  const int noPred = 0x7fffffff;
  for (int v = threadIdx.x; v < g.n; v += blockDim.x) {
    level[v] = (v == s) ? 0 : -1;
    pred[v] = noPred;
  }
  __syncthreads();
  for (int L = 0;; L++) {
    int any = 0;
    for (int u = threadIdx.x; u < g.n; u += blockDim.x) {
      if (level[u] != L) continue;
      const T du = dist[u];
      for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
        const int v = g.targets[e];
        if (level[v] != -1) continue;
        const T nd = du + g.weights[e];
        if (nd == dist[v]) {
          atomicMin(pred + v, u);
          any = 1;
        }
      }
    }
    if (!__syncthreads_or(any)) break;
    for (int v = threadIdx.x; v < g.n; v += blockDim.x) {
      if (level[v] == -1 && pred[v] != noPred) level[v] = L + 1;
    }
    __syncthreads();
  }
  for (int v = threadIdx.x; v < g.n; v += blockDim.x) {
    if (pred[v] == noPred) pred[v] = -1;
  }
}

}  // namespace predecessors
}  // namespace pathctl

#define PATHCTL_PREDECESSORS(SUFFIX, T)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) predecessors_##SUFFIX(             \
      const long long* offsets, const int* targets, const T* weights, int n, const int* sources,   \
      int numSources, const T* dist, int* level, int* pred) {                                      \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    forEachSource(numSources, [&](int i) {                                                         \
      predecessors::source<T>(g, sources[i], rowOf(dist, i, n), rowOf(level, i, n),                \
                              rowOf(pred, i, n));                                                  \
    });                                                                                            \
  }

PATHCTL_PREDECESSORS(i32, int)
PATHCTL_PREDECESSORS(i64, long long)
PATHCTL_PREDECESSORS(f32, float)
PATHCTL_PREDECESSORS(f64, double)
