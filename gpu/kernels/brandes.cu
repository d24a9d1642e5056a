// brandes.cu: Brandes's betweenness (Brandes 2001) for a block of sources
// whose distance rows a relaxation kernel left on the device, so that only
// an n-vector of sums leaves it. One thread block per source, as
// everywhere else (forEachSource), in four phases with a barrier between
// them:
//
//  0. Clear the source's counters, its σ row and its row of tight bits.
//  1. Mark the tight arcs: u → v of weight w with d(u) + w = d(v) (one
//     hop for hop counts) and d(u) finite, one bit per arc of the CSR, and
//     count each vertex's tight in-arcs. Positive weights (the caller
//     refuses zero ones) make the tight arcs a DAG in which every
//     predecessor of v is closer than v.
//  2. The forward pass over that DAG in the order of Kahn's algorithm,
//     level by level: the source alone is level 0, and a vertex joins the
//     next level when the last of its tight in-arcs has been walked. σ(v),
//     the number of shortest paths from the source, is the sum of σ(u) over
//     its tight in-arcs (atomic adds in float64: exact while the counts stay
//     below 2^53, the same bits on every run then). The levels are
//     appended to the source's order row, their starts to its level row.
//  3. The backward pass, from the last level down to level 1: δ(v) =
//     σ(v) · Σ over tight arcs v → w of (1 + δ(w)) / σ(w), every such w lying
//     on a later level, so final. Only the tight bits are read here and in
//     phase 2, not the distances: one pass over the distances per source.
//
// brandes_sum_* then adds, for every vertex v, the dependencies of the
// block's sources in source order (a thread per vertex, reads coalesced
// across vertices): δ_s(v) for every source s ≠ v that reaches v, and with
// endpoints 1 more for each of those and, for v a source, the number of
// other vertices it reaches (networkx's _accumulate_endpoints).
//
// The sums are added in another order than the CPU engine's, so they may
// differ from it in the last bits.
#include "common.cuh"

namespace pathctl {
namespace brandes {

// tight reports whether an arc from a vertex at du of weight w reaches one
// at dv on a shortest path (du finite). Integer sums are taken unsigned in
// 64 bits, where two non-negative int32 or int64 values cannot wrap onto
// dv; doubles compare the sum exactly, as the CPU engine and networkx do.
template <typename T, bool Hops>
__device__ __forceinline__ bool tight(T du, T w, T dv) {
  if (Hops) return (long long)du + 1 == (long long)dv;
  return (u64)du + (u64)w == (u64)dv;
}
template <>
__device__ __forceinline__ bool tight<double, false>(double du, double w, double dv) {
  return du + w == dv;
}

__device__ __forceinline__ bool bitOf(const u32* bits, long long a) { return (bits[a >> 5] >> (a & 31)) & 1u; }

// source runs phases 0 to 3 for source s over its rows.
template <typename T, bool Hops>
__device__ void source(const Graph<T>& g, int s, const T* d, u32* bits, long long words, int* cnt,
                       double* sigma, double* delta, int* order, int* levels, int* reached) {
  __shared__ int tail;
  __shared__ int numLevels;
  const T inf = DistTraits<T>::inf();
  const int n = g.n;
  // 0. Clear.
  for (long long j = threadIdx.x; j < words; j += blockDim.x) bits[j] = 0;
  forOwnVertices(n, [&](int v) {
    cnt[v] = 0;
    sigma[v] = 0;
  });
  __syncthreads();
  // 1. Mark the tight arcs and count them.
  forOwnVertices(n, [&](int u) {
    const T du = d[u];
    if (du == inf) return;
    for (long long a = g.offsets[u], end = g.offsets[u + 1]; a < end; a++) {
      const int v = g.targets[a];
      if (tight<T, Hops>(du, Hops ? (T)1 : g.weights[a], d[v])) {
        atomicOr(&bits[a >> 5], 1u << (a & 31));
        atomicAdd(&cnt[v], 1);
      }
    }
  });
  if (threadIdx.x == 0) {
    order[0] = s;
    levels[0] = 0;
    sigma[s] = 1;
    tail = 1;
    numLevels = 1;
  }
  __syncthreads();
  // 2. Forward, level by level.
  for (int lo = 0, hi = tail; lo < hi;) {
    for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) {
      const int u = order[j];
      const double su = sigma[u];
      for (long long a = g.offsets[u], end = g.offsets[u + 1]; a < end; a++) {
        if (!bitOf(bits, a)) continue;
        const int v = g.targets[a];
        atomicAdd(&sigma[v], su);
        if (atomicSub(&cnt[v], 1) == 1) order[atomicAdd(&tail, 1)] = v;
      }
    }
    __syncthreads();
    lo = hi;
    hi = tail;
    if (threadIdx.x == 0 && lo < hi) levels[numLevels++] = lo;
    __syncthreads();
  }
  // 3. Backward, from the last level to level 1.
  const int total = tail;
  for (int l = numLevels - 1; l >= 1; l--) {
    const int lo = levels[l], hi = l + 1 < numLevels ? levels[l + 1] : total;
    for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) {
      const int v = order[j];
      double sum = 0;
      for (long long a = g.offsets[v], end = g.offsets[v + 1]; a < end; a++) {
        if (!bitOf(bits, a)) continue;
        const int w = g.targets[a];
        sum += (1 + delta[w]) / sigma[w];
      }
      delta[v] = sigma[v] * sum;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *reached = total;
}

// sum adds the block's dependencies on vertex v (see the file's comment).
template <typename T>
__device__ void sum(const T* dist, int n, const int* sources, int numSources, const double* delta,
                    const int* reached, int endpoints, double* out) {
  const T inf = DistTraits<T>::inf();
  for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    double acc = 0;
    for (int i = 0; i < numSources; i++) {
      const size_t at = (size_t)i * (size_t)n + v;
      if (sources[i] == v) {
        if (endpoints) acc += (double)(reached[i] - 1);
      } else if (dist[at] != inf) {
        acc += delta[at] + (endpoints ? 1.0 : 0.0);
      }
    }
    out[v] = acc;
  }
}

}  // namespace brandes
}  // namespace pathctl

#define PATHCTL_BRANDES(NAME, T, HOPS)                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                       \
      NAME(const long long* offsets, const int* targets, const T* weights, int n, const int* sources, \
           int numSources, const T* dist, u32* bits, long long words, int* cnt, double* sigma,        \
           double* delta, int* order, int* levels, int* reached) {                                   \
    using namespace pathctl;                                                                          \
    const Graph<T> g{offsets, targets, weights, nullptr, n, 0};                                      \
    forEachSource(numSources, [&](int i) {                                                            \
      const size_t row = (size_t)i * (size_t)n;                                                       \
      brandes::source<T, HOPS>(g, sources[i], dist + row, bits + (size_t)i * (size_t)words, words,    \
                               cnt + row, sigma + row, delta + row, order + row, levels + row,        \
                               reached + i);                                                          \
    });                                                                                               \
  }

#define PATHCTL_BRANDES_SUM(SUFFIX, T)                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                      \
      brandes_sum_##SUFFIX(const T* dist, int n, const int* sources, int numSources,                 \
                           const double* delta, const int* reached, int endpoints, double* out) {    \
    pathctl::brandes::sum<T>(dist, n, sources, numSources, delta, reached, endpoints, out);           \
  }

PATHCTL_BRANDES(brandes_i32, int, false)
PATHCTL_BRANDES(brandes_i64, long long, false)
PATHCTL_BRANDES(brandes_f64, double, false)
PATHCTL_BRANDES(brandes_hops, int, true)
PATHCTL_BRANDES_SUM(i32, int)
PATHCTL_BRANDES_SUM(i64, long long)
PATHCTL_BRANDES_SUM(f64, double)
