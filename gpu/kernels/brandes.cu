// brandes.cu: Brandes's betweenness (Brandes 2001) for a block of sources
// whose distance rows a relaxation kernel left on the device, so that only
// a vector of sums leaves it. One thread block per source, as everywhere
// else (forEachSource), in four phases with a barrier between them:
//
//  0. Clear the source's counters and its σ row.
//  1. Mark the tight arcs: u → v of weight w with d(u) + w = d(v) (one
//     hop for hop counts) and d(u) finite, one bit per arc of the CSR
//     (the arcs walked in CSR order, a warp's 32 arcs at a time, its
//     ballot the word of bits), and count each vertex's tight in-arcs.
//     Positive weights (the caller refuses zero ones) make the tight arcs
//     a DAG in which every predecessor of v is closer than v.
//  2. The forward pass over that DAG in the order of Kahn's algorithm,
//     level by level: the source alone is level 0, and a vertex joins the
//     next level when the last of its tight in-arcs has been walked. σ(v),
//     the number of shortest paths from the source, is the sum of σ(u) over
//     its tight in-arcs (atomic adds in float64: exact while the counts stay
//     below 2^53, the same bits on every run then). The levels are
//     appended to the source's order row, their starts to its level row.
//  3. The backward pass, from the last level down: δ(v) = σ(v) · Σ over
//     tight arcs v → w of (1 + δ(w)) / σ(w), every such w lying on a later
//     level, so final. Only the tight bits are read here and in phase 2 (a
//     word of 32 arcs at a time, then the targets of the set bits), not the
//     distances: one pass over the arcs per source.
//
// The scratch rows of phases 0 to 3 (bits, counters, σ, δ, order, levels)
// belong to a thread block, its slot, not to a source: a thread block
// reuses them for each of its sources in turn, so that a block of sources
// costs the device its distance rows alone and blocks can be as large as
// the stats layout's (the batched kernel derives more of a larger block's
// rows). Each slot also keeps its sums, added in phase 3 by the one thread
// that owns each term (the vertices' in a sweep after it), so with no
// atomics:
//  - per vertex (accV): δ_s(v) for every v ≠ s the source reaches, and with
//    endpoints 1 more for each of those and, for v = s, the number of other
//    vertices s reaches (networkx's _accumulate_endpoints);
//  - per arc (accE): σ_s(u) · (1 + δ_s(v)) / σ_s(v) for every tight arc
//    u → v, the source's own arcs included (networkx's _accumulate_edges).
// A slot's sources are the block's sources i ≡ slot (mod slots), taken in
// order, and there are no more slots than the device keeps resident, so
// that none waits for another to finish. brandes_reduce adds the slots' sums in slot order (a thread per value,
// reads coalesced), so the sum is the same, bit for bit, on every run with
// the same slots and blocks. It is added in another order
// than the CPU engine's, so it may differ from it in the last bits.
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
                       int* order, int* levels, double* accV, double* accE, bool endpoints) {
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
  // 3. Backward, from the last level down: to level 1 for the vertices'
  // sums, to the source's own level for the arcs' (δ(s) itself is never
  // read).
  const int total = tail;
  const double one = endpoints ? 1.0 : 0.0;
  for (int l = numLevels - 1; l >= (accE != nullptr ? 0 : 1); l--) {
    const int lo = levels[l], hi = l + 1 < numLevels ? levels[l + 1] : total;
    for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) {
      const int v = order[j];
      const double sv = sigma[v];
      double sum = 0;
      forTightArcs(g.offsets, g.targets, bits, v, [&](long long a, int w) {
        const double term = (1 + delta[w]) / sigma[w];
        sum += term;
        if (accE != nullptr) accE[a] += sv * term;
      });
      if (l > 0) delta[v] = sv * sum;
    }
    __syncthreads();
  }
  // The vertices' sums, in a sweep over the vertices (reads and writes
  // coalesced, where adding in the backward pass would cost a random
  // read and write per vertex): σ(v) ≠ 0 marks the vertices reached.
  if (accV != nullptr) {
    forOwnVertices(n, [&](int v) {
      if (v != s && sigma[v] != 0) accV[v] += delta[v] + one;
    });
    if (threadIdx.x == 0 && endpoints) accV[s] += (double)(total - 1);
  }
}

// reduce adds the slots' sums of each value in slot order into out and
// clears them for the next block (see the file's comment).
__device__ void reduce(double* acc, int slots, long long len, double* out) {
  for (long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x; x < len; x += (long long)gridDim.x * blockDim.x) {
    double sum = 0;
    for (int c = 0; c < slots; c++) {
      const size_t at = (size_t)c * (size_t)len + (size_t)x;
      sum += acc[at];
      acc[at] = 0;
    }
    out[x] = sum;
  }
}

// slotBytes is the bytes of one slot's scratch rows, in the order that
// source's arguments take them: σ and δ (n doubles each), the counters, the
// order and the levels' starts (n ints each), the tight bits (a word per 32
// arcs); rounded up to 16 bytes, so that every slot's doubles are aligned.
// gpu/betweenness.go's brandesSlotBytes is the same sum.
__device__ __forceinline__ size_t slotBytes(int n, long long m) {
  const size_t bytes = 16 * (size_t)n + 12 * (size_t)n + 4 * (size_t)((m + 31) / 32);
  return (bytes + 15) & ~(size_t)15;
}

}  // namespace brandes
}  // namespace pathctl

// A thread block is slot blockIdx.x: its scratch rows (scratch, slotBytes
// each) and sums (accV of n values, accE of m; either may be null) are its
// slot's.
#define PATHCTL_BRANDES(NAME, T, HOPS)                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                      \
      NAME(const long long* offsets, const int* targets, const T* weights, const int* arcSources, int n, \
           long long m, const int* sources, int numSources, const T* dist, unsigned char* scratch,    \
           double* accV, double* accE, int endpoints) {                                              \
    using namespace pathctl;                                                                         \
    const Graph<T> g{offsets, targets, weights, arcSources, n, m};                                   \
    const size_t slot = blockIdx.x, un = (size_t)n;                                                  \
    unsigned char* own = scratch + slot * brandes::slotBytes(n, m);                                  \
    double* sigma = (double*)own;                                                                    \
    double* delta = sigma + un;                                                                      \
    int* cnt = (int*)(delta + un);                                                                   \
    int* order = cnt + un;                                                                           \
    int* levels = order + un;                                                                        \
    u32* bits = (u32*)(levels + un);                                                                 \
    double* slotV = accV != nullptr ? accV + slot * un : nullptr;                                    \
    double* slotE = accE != nullptr ? accE + slot * (size_t)m : nullptr;                             \
    forEachSource(numSources, [&](int i) {                                                           \
      brandes::source<T, HOPS>(g, sources[i], dist + (size_t)i * un, bits, cnt, sigma, delta, order,  \
                               levels, slotV, slotE, endpoints != 0);                                 \
    });                                                                                              \
  }

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    brandes_reduce(double* acc, int slots, long long len, double* out) {
  pathctl::brandes::reduce(acc, slots, len, out);
}

PATHCTL_BRANDES(brandes_i32, int, false)
PATHCTL_BRANDES(brandes_i64, long long, false)
PATHCTL_BRANDES(brandes_f64, double, false)
PATHCTL_BRANDES(brandes_hops, int, true)
