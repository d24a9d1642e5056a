// brandes.cu: Brandes's betweenness (Brandes 2001) for a block of sources
// whose distance rows a relaxation kernel left on the device, so that only
// an n-vector of sums leaves it. One thread block per source, as
// everywhere else (forEachSource), in four phases with a barrier between
// them:
//
//  0. Clear the source's counters and its σ row.
//  1. Mark the tight arcs: u → v of weight w with d(u) + w = d(v) (one
//     hop for hop counts) and d(u) finite, one bit per arc of the CSR
//     (the arcs walked in CSR order, a warp's 32 arcs at a time, its
//     ballot the word of bits), and count each vertex's tight in-arcs. Positive weights (the caller
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
//     phase 2 (a word of 32 arcs at a time, then the targets of the set
//     bits), not the distances: one pass over the arcs per source.
//
// brandes_sum_* then adds, for every vertex v, the dependencies of the
// block's sources in source order (a thread per vertex, reads coalesced
// across vertices): δ_s(v) for every source s ≠ v that reaches v, and with
// endpoints 1 more for each of those and, for v a source, the number of
// other vertices it reaches (networkx's _accumulate_endpoints).
//
// brandes_edges adds, for every arc a = u → v, the block's dependencies
// flowing through it in source order: σ_s(u) · (1 + δ_s(v)) / σ_s(v) for
// each source s for which a is tight (its bit of phase 1 set), networkx's
// term of _accumulate_edges. A thread per arc, no atomics: the sum is the
// same, bit for bit, on every run; a warp reads one word of bits per
// source, and the rows only where a bit is set.
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

// MarkWords is how many words of tight bits a warp marks a step (phase 1).
constexpr int MarkWords = 4;

// forTightArcs runs f(a, v) for every tight arc a = u → v of u, reading
// the bits word by word (32 arcs a read) and only the set ones' targets.
template <class F>
__device__ __forceinline__ void forTightArcs(const long long* offsets, const int* targets, const u32* bits, int u,
                                             F f) {
  const long long lo = offsets[u], hi = offsets[u + 1];
  if (lo == hi) return;
  for (long long w = lo >> 5, last = (hi - 1) >> 5; w <= last; w++) {
    u32 word = bits[w];
    if (w == lo >> 5) word &= ~0u << (lo & 31);
    if (w == last && (hi & 31) != 0) word &= ~(~0u << (hi & 31));
    while (word != 0) {
      const long long a = (w << 5) + (__ffs(word) - 1);
      word &= word - 1;
      f(a, targets[a]);
    }
  }
}

// source runs phases 0 to 3 for source s over its rows; arcSources is
// every arc's tail, so that phase 1 walks the arcs in order, a warp a
// word of bits (its ballot), instead of a vertex's arcs a thread.
template <typename T, bool Hops>
__device__ void source(const Graph<T>& g, int s, const T* d, u32* bits, int* cnt, double* sigma, double* delta,
                       int* order, int* levels, int* reached) {
  __shared__ int tail;
  __shared__ int numLevels;
  const T inf = DistTraits<T>::inf();
  const int n = g.n;
  const unsigned lane = threadIdx.x & 31;
  // 0. Clear.
  forOwnVertices(n, [&](int v) {
    cnt[v] = 0;
    sigma[v] = 0;
  });
  __syncthreads();
  // 1. Mark the tight arcs and count them, MarkWords words of 32 arcs a
  // warp a step: every load of the step is issued before the first
  // compare, so that a warp has that many random reads in flight. The
  // bounds are the same on every lane of a warp, so that all of them
  // reach the ballots.
  for (long long base = (long long)(threadIdx.x - lane) * MarkWords; base < g.m; base += (long long)blockDim.x * MarkWords) {
    int tails[MarkWords], heads[MarkWords];
    T du[MarkWords], dv[MarkWords], w[MarkWords];
#pragma unroll
    for (int q = 0; q < MarkWords; q++) {
      const long long a = base + 32 * q + lane;
      tails[q] = a < g.m ? g.arcSources[a] : -1;
      heads[q] = a < g.m ? g.targets[a] : 0;
      w[q] = Hops || a >= g.m ? (T)1 : g.weights[a];
    }
#pragma unroll
    for (int q = 0; q < MarkWords; q++) {
      du[q] = tails[q] >= 0 ? d[tails[q]] : inf;
      dv[q] = d[heads[q]];
    }
#pragma unroll
    for (int q = 0; q < MarkWords; q++) {
      const bool isTight = du[q] != inf && tight<T, Hops>(du[q], w[q], dv[q]);
      if (isTight) atomicAdd(&cnt[heads[q]], 1);
      const u32 word = __ballot_sync(0xffffffffu, isTight);
      if (lane == 0 && base + 32 * q < g.m) bits[(base >> 5) + q] = word;
    }
  }
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
      forTightArcs(g.offsets, g.targets, bits, u, [&](long long, int v) {
        atomicAdd(&sigma[v], su);
        if (atomicSub(&cnt[v], 1) == 1) order[atomicAdd(&tail, 1)] = v;
      });
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
      forTightArcs(g.offsets, g.targets, bits, v, [&](long long, int w) { sum += (1 + delta[w]) / sigma[w]; });
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

// edges sums the block's dependencies on arc a (see the file's comment).
__device__ void edges(const int* targets, const int* arcTails, int n, long long m, int numSources, const u32* bits,
                      const double* sigma, const double* delta, double* out) {
  const size_t words = (size_t)((m + 31) / 32);
  for (long long a = (long long)blockIdx.x * blockDim.x + threadIdx.x; a < m; a += (long long)gridDim.x * blockDim.x) {
    const int u = arcTails[a], v = targets[a];
    const u32 bit = 1u << (a & 31);
    double acc = 0;
    for (int i = 0; i < numSources; i++) {
      if ((bits[(size_t)i * words + (size_t)(a >> 5)] & bit) == 0) continue;
      const size_t row = (size_t)i * (size_t)n;
      acc += sigma[row + u] * ((1 + delta[row + v]) / sigma[row + v]);
    }
    out[a] = acc;
  }
}

}  // namespace brandes
}  // namespace pathctl

#define PATHCTL_BRANDES(NAME, T, HOPS)                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                      \
      NAME(const long long* offsets, const int* targets, const T* weights, const int* arcSources, int n, \
           long long m, const int* sources, int numSources, const T* dist, u32* bits, int* cnt,        \
           double* sigma, double* delta, int* order, int* levels, int* reached) {                      \
    using namespace pathctl;                                                                         \
    const Graph<T> g{offsets, targets, weights, arcSources, n, m};                                   \
    const size_t words = (size_t)((m + 31) / 32);                                                    \
    forEachSource(numSources, [&](int i) {                                                           \
      const size_t row = (size_t)i * (size_t)n;                                                      \
      brandes::source<T, HOPS>(g, sources[i], dist + row, bits + (size_t)i * words, cnt + row,       \
                               sigma + row, delta + row, order + row, levels + row, reached + i);    \
    });                                                                                              \
  }

#define PATHCTL_BRANDES_SUM(SUFFIX, T)                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                      \
      brandes_sum_##SUFFIX(const T* dist, int n, const int* sources, int numSources,                 \
                           const double* delta, const int* reached, int endpoints, double* out) {    \
    pathctl::brandes::sum<T>(dist, n, sources, numSources, delta, reached, endpoints, out);           \
  }

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    brandes_edges(const int* targets, const int* arcTails, int n, long long m, int numSources, const u32* bits,
                  const double* sigma, const double* delta, double* out) {
  pathctl::brandes::edges(targets, arcTails, n, m, numSources, bits, sigma, delta, out);
}

PATHCTL_BRANDES(brandes_i32, int, false)
PATHCTL_BRANDES(brandes_i64, long long, false)
PATHCTL_BRANDES(brandes_f64, double, false)
PATHCTL_BRANDES(brandes_hops, int, true)
PATHCTL_BRANDES_SUM(i32, int)
PATHCTL_BRANDES_SUM(i64, long long)
PATHCTL_BRANDES_SUM(f64, double)
