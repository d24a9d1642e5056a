// bfs_level.cu: the "bfs-level" algorithm, level-synchronous BFS after
// seeds/002_75570bc8eedf73c5.txt Algorithm 0.2: one thread block per source;
// at level L every vertex at distance L writes L+1 into each out-neighbour
// still farther than L+1, with plain stores, and the block moves to L+1 while
// some store happened. Hop counts are int32; weights are ignored; no
// predecessors (the seed stores none).
//
// Choices:
// - Several threads may store L+1 into the same vertex: the same value, so the
//   race is benign and needs no atomics, as the seed intends. A vertex being
//   written L+1 is never mistaken for a level-L vertex in the same pass.
// - The level loop scans every vertex per level (the seed's foreach p in G);
//   no frontier queue.
#include "common.cuh"

namespace pathctl {
namespace bfslevel {

__device__ void source(const long long* offsets, const int* targets, int n, int s, int* dist) {
  const int inf = DistTraits<int>::inf();
  forOwnVertices(n, [&](int v) { dist[v] = (v == s) ? 0 : inf; });
  __syncthreads();
  int level = 0;
  untilStable([&] {
    // Relax: every vertex at distance level writes level + 1 into its
    // farther out-neighbours.
    int any = 0;
    forOwnVertices(n, [&](int u) {
      if (dist[u] != level) return;
      for (long long e = offsets[u]; e < offsets[u + 1]; e++) {
        const int v = targets[e];
        if (loadVolatile(dist + v) > level + 1) {
          dist[v] = level + 1;
          any = 1;
        }
      }
    });
    level++;
    return any;
  });
}

}  // namespace bfslevel
}  // namespace pathctl

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    bfs_level_i32(const long long* offsets, const int* targets, int n, const int* sources, int numSources,
                  int* dist) {
  using namespace pathctl;
  forEachSource(numSources, [&](int i) { bfslevel::source(offsets, targets, n, sources[i], rowOf(dist, i, n)); });
}
