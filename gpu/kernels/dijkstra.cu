// dijkstra.cu: the "dijkstra" algorithm of seeds/000_2d17e3b94fc93de9.txt
// (GPU APSP, one thread block per source).
//
// Each block owns one source at a time (blockIdx strides over the sources of
// the batch). Threads stride over the vertices. A round has two phases split
// by __syncthreads: (1) every vertex whose distance changed in the previous
// round relaxes its out-arcs with atomicMin into predist; (2) every vertex
// folds predist into dist and marks itself changed. The round repeats while
// some vertex changed (the seed's shared flag, taken as a block vote).
//
// Choices:
// - "skip unmodified vertices" is a byte per vertex (changed), written and
//   read only by the thread that owns the vertex, so it needs no atomics.
// - Before an atomicMin the relax reads predist[v] and skips the atomic when
//   it cannot lower it, which removes most atomics once distances settle.
// - Weights must be non-negative (the Go side refuses negative ones), so the
//   float atomics are integer atomics on the bit patterns.
// - Predecessors are not tracked here; predecessors.cu derives them after.
#include "common.cuh"

namespace pathctl {
namespace dijkstra {

template <typename T>
__device__ void source(const Graph<T>& g, int s, T* dist, T* predist, u8* changed) {
  const T inf = DistTraits<T>::inf();
  forOwnVertices(g.n, [&](int v) {
    T d = (v == s) ? T(0) : inf;
    dist[v] = d;
    predist[v] = d;
    changed[v] = (v == s);
  });
  __syncthreads();
  untilStable([&] {
    // Relax: the out-arcs of every vertex that changed, into predist.
    forOwnVertices(g.n, [&](int u) {
      if (!changed[u]) return;
      changed[u] = 0;
      const T du = dist[u];
      for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
        const int v = g.targets[e];
        const T nd = du + g.weights[e];
        if (nd < loadVolatile(predist + v)) atomicMinNonNegative(predist + v, nd);
      }
    });
    __syncthreads();
    // Fold: predist into dist, marking what changed.
    int any = 0;
    forOwnVertices(g.n, [&](int u) {
      const T p = predist[u];
      if (p < dist[u]) {
        dist[u] = p;
        changed[u] = 1;
        any = 1;
      }
    });
    return any;
  });
}

}  // namespace dijkstra
}  // namespace pathctl

#define PATHCTL_DIJKSTRA(SUFFIX, T)                                                              \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                  \
      dijkstra_##SUFFIX(const long long* offsets, const int* targets, const T* weights, int n,   \
                        const int* sources, int numSources, T* dist, T* predist, u8* changed) {  \
    using namespace pathctl;                                                                     \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                     \
    forEachSource(numSources, [&](int i) {                                                       \
      dijkstra::source<T>(g, sources[i], rowOf(dist, i, n), rowOf(predist, i, n),                \
                          rowOf(changed, i, n));                                                 \
    });                                                                                          \
  }

PATHCTL_DIJKSTRA(i32, int)
PATHCTL_DIJKSTRA(i64, long long)
PATHCTL_DIJKSTRA(f32, float)
PATHCTL_DIJKSTRA(f64, double)
