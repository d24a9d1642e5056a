// delta.cu: the "delta" algorithm, delta-stepping after
// seeds/001_b664db479d795e64.txt (GPU APSP, one thread block per source).
//
// Vertices live in buckets of width delta by their tentative distance. For
// the current bucket the block relaxes the light arcs (w <= delta) of its
// pending vertices into predist and folds predist into dist, again and again
// until no vertex of the bucket changes (the seed's inner "while B(id) is not
// empty"); every vertex taken from the bucket joins Req. Then the heavy arcs
// (w > delta) of Req are relaxed once, folded, and the block moves on.
//
// Choices:
// - Bucket membership is not stored: a vertex is in bucket id when it is
//   pending (its distance changed since it last relaxed) and floor(dist/delta)
//   <= id. pending and req are a byte per vertex each, owned by one thread.
// - The next bucket is the smallest bucket of any pending vertex (a block
//   reduction through a shared minimum) instead of the seed's id+1, so empty
//   buckets cost nothing; the block stops when nothing is pending.
// - delta arrives as a double chosen by the Go side (Request.Delta, or a
//   multiple of the mean weight over the mean out-degree, see runner.go's
//   chooseDelta for the measurements); bucket numbers are computed in
//   double and are only used for scheduling, never for the distances.
// - Weights are non-negative (the Go side refuses negative ones).
#include "common.cuh"

namespace pathctl {
namespace delta {

template <typename T>
__device__ __forceinline__ long long bucketOf(T d, double delta) {
  return (long long)((double)d / delta);
}

// relaxArcs relaxes the light (w <= delta) or the heavy arcs of u into
// predist.
template <typename T>
__device__ __forceinline__ void relaxArcs(const Graph<T>& g, int u, T du, T* predist, double delta,
                                          bool light) {
  for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
    const T w = g.weights[e];
    if (((double)w <= delta) != light) continue;
    const int v = g.targets[e];
    const T nd = du + w;
    if (nd < loadVolatile(predist + v)) atomicMinNonNegative(predist + v, nd);
  }
}

template <typename T>
__device__ void source(const Graph<T>& g, int s, double delta, T* dist, T* predist, u8* pending, u8* req) {
  __shared__ long long nextBucket;
  const T inf = DistTraits<T>::inf();
  forOwnVertices(g.n, [&](int v) {
    T d = (v == s) ? T(0) : inf;
    dist[v] = d;
    predist[v] = d;
    pending[v] = (v == s);
    req[v] = 0;
  });
  __syncthreads();
  long long id = 0;
  for (;;) {
    // Light arcs of the current bucket until it stays empty.
    untilStable([&] {
      // Relax: the light arcs of the bucket's pending vertices.
      forOwnVertices(g.n, [&](int u) {
        if (!pending[u] || bucketOf(dist[u], delta) > id) return;
        pending[u] = 0;
        req[u] = 1;
        relaxArcs(g, u, dist[u], predist, delta, true);
      });
      __syncthreads();
      // Fold: predist into dist; again while the bucket gained vertices.
      int again = 0;
      forOwnVertices(g.n, [&](int u) {
        const T p = predist[u];
        if (p < dist[u]) {
          dist[u] = p;
          pending[u] = 1;
          if (bucketOf(p, delta) <= id) again = 1;
        }
      });
      return again;
    });
    // Heavy arcs of every vertex settled in this bucket, once.
    forOwnVertices(g.n, [&](int u) {
      if (!req[u]) return;
      req[u] = 0;
      relaxArcs(g, u, dist[u], predist, delta, false);
    });
    if (threadIdx.x == 0) nextBucket = 0x7fffffffffffffffLL;
    __syncthreads();
    long long mine = 0x7fffffffffffffffLL;
    forOwnVertices(g.n, [&](int u) {
      const T p = predist[u];
      if (p < dist[u]) {
        dist[u] = p;
        pending[u] = 1;
      }
      if (pending[u]) mine = min(mine, bucketOf(dist[u], delta));
    });
    if (mine != 0x7fffffffffffffffLL) atomicMin(&nextBucket, mine);
    __syncthreads();
    id = nextBucket;
    __syncthreads();
    if (id == 0x7fffffffffffffffLL) break;
  }
}

}  // namespace delta
}  // namespace pathctl

#define PATHCTL_DELTA(SUFFIX, T)                                                                   \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      delta_##SUFFIX(const long long* offsets, const int* targets, const T* weights, int n,        \
                     const int* sources, int numSources, double delta, T* dist, T* predist,        \
                     u8* flags) {                                                                  \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    forEachSource(numSources, [&](int i) {                                                         \
      u8* f = rowOf(flags, i, 2 * n);                                                              \
      delta::source<T>(g, sources[i], delta, rowOf(dist, i, n), rowOf(predist, i, n), f, f + n);   \
    });                                                                                            \
  }

PATHCTL_DELTA(i32, int)
PATHCTL_DELTA(i64, long long)
PATHCTL_DELTA(f32, float)
PATHCTL_DELTA(f64, double)
