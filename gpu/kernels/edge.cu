// edge.cu: the "edge" algorithm, edge-parallel relaxation after
// seeds/003_3e4cb4863590f3fb.txt (APSP) and seeds/004_c685ad8af4d8ff26.txt
// (SSSP): one thread block per source, threads stride over the arcs, every arc
// (u, v, w) does atomicMin(dist[v], dist[u] + w), and the block repeats while
// some atomicMin lowered a distance.
//
// Choices:
// - The seeds relax each edge in both directions, which is right for an
//   undirected graph only. The CSR already holds both arcs of an undirected
//   edge, so every arc is relaxed forwards once: the same work on undirected
//   graphs, and correct on directed ones.
// - Arcs are read in CSR order with a separate array of arc sources (uploaded
//   for this algorithm only), so neighbouring threads read neighbouring arcs.
// - An arc whose source is still unreachable, or that cannot lower its target
//   (checked with a plain read first), costs no atomic.
// - Weights are non-negative (the Go side refuses negative ones).
// - Predecessors are not tracked here; predecessors.cu derives them after.
#include "common.cuh"

namespace pathctl {
namespace edge {

template <typename T>
__device__ void source(const Graph<T>& g, int s, T* dist) {
  const T inf = DistTraits<T>::inf();
  forOwnVertices(g.n, [&](int v) { dist[v] = (v == s) ? T(0) : inf; });
  __syncthreads();
  untilStable([&] {
    // Relax every arc once, threads striding over the arcs.
    int any = 0;
    for (long long e = threadIdx.x; e < g.m; e += blockDim.x) {
      const T du = loadVolatile(dist + g.arcSources[e]);
      if (du == inf) continue;
      const int v = g.targets[e];
      const T nd = du + g.weights[e];
      if (nd < loadVolatile(dist + v) && atomicMinNonNegative(dist + v, nd)) any = 1;
    }
    return any;
  });
}

}  // namespace edge
}  // namespace pathctl

#define PATHCTL_EDGE(SUFFIX, T)                                                                    \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      edge_##SUFFIX(const int* arcSources, const int* targets, const T* weights, long long m,      \
                    int n, const int* sources, int numSources, T* dist) {                          \
    using namespace pathctl;                                                                       \
    Graph<T> g = {nullptr, targets, weights, arcSources, n, m};                                    \
    forEachSource(numSources, [&](int i) { edge::source<T>(g, sources[i], rowOf(dist, i, n)); });  \
  }

PATHCTL_EDGE(i32, int)
PATHCTL_EDGE(i64, long long)
PATHCTL_EDGE(f32, float)
PATHCTL_EDGE(f64, double)
