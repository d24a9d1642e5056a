// select.cu: the k nearest of every source, selected on the device
// (design.md, "Queries narrower than all pairs"), so that only sources × k
// (vertex, distance) cells cross back to the host instead of full rows.
//
// From the [numSources × n] distance rows a relaxation kernel left on the
// device, one thread block per source selects, among the row's columns
// (narrow::column: the targets, or every vertex) other than the source,
// whose distance is neither the type's infinity nor above cut, the k
// nearest by (distance, vertex), and writes them nearest first into row i
// of outVertex [numSources × k] and outDist [numSources × k]; cells beyond
// the candidates get vertex -1 and the type's infinity (what the host's
// selection, pipeline/narrow.go, writes).
//
// Method: a radix selection over orderedKey(distance), 8 bits a pass.
//   1. One pass counts the candidates and finds the smallest and largest
//      key. With at most k candidates, every one is taken (step 3 alone).
//   2. The key's bits above the highest bit where the smallest and largest
//      differ are shared by every candidate; from there, each pass builds a
//      256-bin histogram of the next 8 bits among the candidates that match
//      the bits known so far, and picks the bin holding the k-th smallest.
//      It stops early when that bin is needed whole.
//   3. Every candidate below the threshold (or, after an early stop, within
//      the last bin) is taken; then, when the threshold key was resolved to
//      its last bit and only some of the candidates equal to it fit, the
//      first of them in column order are taken: the columns are in vertex
//      order (the caller sorts the targets), so those are the smallest
//      vertices, as ties are broken by vertex order.
//   4. The k (or fewer) taken are ordered by (distance, vertex) in shared
//      memory by counting, each thread one cell.
// The row is read 3 times, and once more per 8 bits of the keys that the
// selection must resolve (at most 8 for 64-bit distances); no pass needs
// more than a few shared words per thread. __match_any_sync needs sm_70,
// the oldest architecture build.sh targets.
#include "narrow.cuh"

namespace pathctl {
namespace nearsel {

// maxK is the largest k the kernel selects (gpu/gather.go's
// MaxDeviceNearest must equal it).
constexpr int maxK = 64;
constexpr int bins = 256;
static_assert(PATHCTL_THREADS == bins, "select.cu: one histogram bin per thread");

template <typename T>
__device__ __forceinline__ bool candidate(T d, T inf, T cut, int v, int s) {
  return d != inf && !(d > cut) && v != s;
}

// blockSum returns the sum of x over the thread block (every thread gets
// it); scratch holds a word per warp.
__device__ __forceinline__ u32 blockSum(u32 x, u32* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  __syncthreads();
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  u32 t = 0;
  for (int w = 0; w < PATHCTL_THREADS / 32; w++) t += scratch[w];
  return t;
}

template <typename T>
__device__ void source(const T* dist, int numCols, const int* targets, T cut, int s, int k,
                       int* outVertex, T* outDist) {
  __shared__ u32 hist[bins];
  __shared__ u32 scratch[PATHCTL_THREADS / 32];
  __shared__ unsigned long long minS[PATHCTL_THREADS / 32], maxS[PATHCTL_THREADS / 32];
  __shared__ u64 candKey[maxK];
  __shared__ int candVertex[maxK];
  __shared__ T candDist[maxK];
  __shared__ u64 prefixS;
  __shared__ u32 rankS;
  __shared__ int doneS;
  __shared__ u32 takenS;
  const T inf = DistTraits<T>::inf();
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;

  // 1. Count the candidates, with the smallest and largest key.
  u32 count = 0;
  u64 lo = ~0ull, hi = 0;
  for (int j = t; j < numCols; j += blockDim.x) {
    const int v = narrow::column(targets, j);
    const T d = dist[v];
    if (!candidate(d, inf, cut, v, s)) continue;
    const u64 key = narrow::orderedKey(d);
    count++;
    lo = min(lo, key);
    hi = max(hi, key);
  }
  for (int o = 16; o > 0; o >>= 1) {
    lo = min(lo, (u64)__shfl_xor_sync(0xffffffffu, lo, o));
    hi = max(hi, (u64)__shfl_xor_sync(0xffffffffu, hi, o));
  }
  if (lane == 0) minS[warp] = lo, maxS[warp] = hi;
  const u32 total = blockSum(count, scratch);  // its barriers publish minS, maxS
  for (int w = 0; w < PATHCTL_THREADS / 32; w++) lo = min(lo, (u64)minS[w]), hi = max(hi, (u64)maxS[w]);
  const int want = (int)min((u32)k, total);

  // 2. The threshold: every candidate whose key is below `below` is taken,
  // and of those whose key is `below` itself, the first `need` in column
  // order. No key is ~0 (infinity is no candidate), so ~0 takes them all.
  u64 below = ~0ull;
  u32 need = 0;
  if (total > (u32)k && lo == hi) {
    below = lo, need = (u32)k;
  } else if (total > (u32)k) {
    int shift = ((63 - __clzll(lo ^ hi)) / 8) * 8;
    if (t == 0) {
      prefixS = shift + 8 >= 64 ? 0 : (lo >> (shift + 8)) << (shift + 8);
      rankS = (u32)k;
      doneS = 0;
    }
    for (; shift >= 0; shift -= 8) {
      __syncthreads();
      hist[t] = 0;
      __syncthreads();
      const u64 prefix = prefixS;
      // The lanes of a warp that fall in one bin add to it once (a row's
      // keys crowd into few bins: one shared counter would serialise).
      for (int j0 = 0; j0 < numCols; j0 += blockDim.x) {
        const int j = j0 + t;
        u32 digit = bins;  // none
        if (j < numCols) {
          const int v = narrow::column(targets, j);
          const T d = dist[v];
          if (candidate(d, inf, cut, v, s)) {
            const u64 key = narrow::orderedKey(d);
            if (shift + 8 >= 64 || (key >> (shift + 8)) == (prefix >> (shift + 8))) digit = (u32)(key >> shift) & (bins - 1);
          }
        }
        const u32 peers = __match_any_sync(0xffffffffu, digit);
        if (digit < (u32)bins && lane == __ffs(peers) - 1) atomicAdd(&hist[digit], (u32)__popc(peers));
      }
      __syncthreads();
      // Inclusive scan of the bins, thread t holding bin t.
      const u32 c = hist[t];
      u32 x = c;
      for (int o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
      }
      if (lane == 31) scratch[warp] = x;
      __syncthreads();
      for (int w = 0; w < warp; w++) x += scratch[w];
      const u32 rank = rankS;
      const u32 before = x - c;
      __syncthreads();
      if (before < rank && rank <= x) {  // exactly one bin holds the rank-th
        prefixS = prefix | ((u64)t << shift);
        rankS = rank - before;
        doneS = rank - before == c;  // the bin is needed whole
      }
      __syncthreads();
      if (doneS) break;
    }
    if (doneS) {
      below = prefixS + (1ull << shift);  // at most the largest key + 1
    } else {
      below = prefixS, need = rankS;  // resolved to the last bit
    }
  }

  // 3. Take the candidates below the threshold (fewer than k), then the
  // first `need` equal to it in column order.
  if (t == 0) takenS = 0;
  __syncthreads();
  for (int j = t; j < numCols; j += blockDim.x) {
    const int v = narrow::column(targets, j);
    const T d = dist[v];
    if (!candidate(d, inf, cut, v, s)) continue;
    const u64 key = narrow::orderedKey(d);
    if (key < below) {
      const u32 at = atomicAdd(&takenS, 1u);
      if (at < (u32)k) candKey[at] = key, candVertex[at] = v, candDist[at] = d;
    }
  }
  __syncthreads();
  if (need > 0) {
    const u32 base = takenS;
    u32 got = 0;
    for (int j0 = 0; j0 < numCols && got < need; j0 += blockDim.x) {
      const int j = j0 + t;
      bool match = false;
      int v = 0;
      T d = inf;
      if (j < numCols) {
        v = narrow::column(targets, j);
        d = dist[v];
        match = candidate(d, inf, cut, v, s) && narrow::orderedKey(d) == below;
      }
      const u32 ballot = __ballot_sync(0xffffffffu, match);
      __syncthreads();
      if (lane == 0) scratch[warp] = __popc(ballot);
      __syncthreads();
      u32 at = got + __popc(ballot & ((1u << lane) - 1));
      u32 chunk = 0;
      for (int w = 0; w < PATHCTL_THREADS / 32; w++) {
        if (w < warp) at += scratch[w];
        chunk += scratch[w];
      }
      if (match && at < need && base + at < (u32)k) {
        candKey[base + at] = below, candVertex[base + at] = v, candDist[base + at] = d;
      }
      got += chunk;
    }
    __syncthreads();
    if (t == 0) takenS = base + need;
  }
  __syncthreads();

  // 4. Order the taken by (distance, vertex) and write the row.
  const int taken = (int)min(takenS, (u32)want);  // want: k, or fewer candidates
  if (t < k) {
    if (t < taken) {
      const u64 key = candKey[t];
      const int v = candVertex[t];
      int rank = 0;
      for (int q = 0; q < taken; q++) {
        const u64 kq = candKey[q];
        const int vq = candVertex[q];
        rank += kq < key || (kq == key && (vq < v || (vq == v && q < t)));
      }
      outVertex[rank] = v;
      outDist[rank] = candDist[t];
    } else {
      outVertex[t] = -1;
      outDist[t] = inf;
    }
  }
}

}  // namespace nearsel
}  // namespace pathctl

#define PATHCTL_SELECT(SUFFIX, T)                                                                   \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                     \
      select_nearest_##SUFFIX(const T* dist, int n, const int* sources, int numSources,             \
                              const int* targets, int numTargets, u64 cutBits, int k,               \
                              int* outVertex, T* outDist) {                                         \
    using namespace pathctl;                                                                        \
    const T cut = narrow::fromBits<T>(cutBits);                                                     \
    forEachSource(numSources, [&](int i) {                                                          \
      nearsel::source<T>(rowOf(dist, i, n), numTargets, targets, cut, sources[i], k,                \
                         outVertex + (size_t)i * k, outDist + (size_t)i * k);                       \
    });                                                                                             \
  }

PATHCTL_SELECT(i32, int)
PATHCTL_SELECT(i64, long long)
PATHCTL_SELECT(f32, float)
PATHCTL_SELECT(f64, double)
