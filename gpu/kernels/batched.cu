// batched.cu: the project's own kernel behind "auto" for non-negative
// weights: multi-source label correcting over groups of 32 sources (one
// warp-row), after the batched-frontier idea of issue 4. Not a seed
// algorithm: the Go side selects it internally (gpu/batched.go).
//
// Layout, per block of k sources split into G = ceil(k/32) groups:
// - Distances are vertex-major inside a group: group g (sources 32g ..
//   32g+w-1, w = min(32, k-32g)) owns the n·w elements starting at 32g·n,
//   element v·w + lane holding the distance from source 32g+lane to v. The
//   groups tile k·n elements exactly, so the buffer is as large as the
//   row-major result; batched_transpose_* copies it into that layout.
// - A warp relaxes an arc (u, v, wt) for the 32 sources of its group at once:
//   the arc is read once (broadcast), dist[u] and dist[v] are one coalesced
//   128-byte row each, and the lanes whose distance improved are gathered
//   with one ballot.
// - Frontier by bitmask: per group and vertex one 32-bit word says which
//   sources' distance to the vertex changed (cur, read this round; next,
//   written this round). A summary bit per 32 vertices (one word per 1024
//   vertices) lets a round skip idle vertices 1024 at a time, so rounds stay
//   cheap on high-diameter graphs whose frontier is thin.
// - One thread block per group runs the rounds until nothing changes; the
//   block-wide vote __syncthreads_or decides convergence on the device, so
//   the host launches once per block of sources. Warps own 32-vertex chunks
//   (chunk c belongs to warp c mod 8), so only the owner reads and clears a
//   cur word; other warps only set bits in next.
// - Distances only drop through an atomic minimum (integers directly,
//   non-negative floats through their bit patterns: atomicMinNonNegative),
//   after a plain read shows that the atomic can win. Weights must be
//   non-negative: the Go side never selects this kernel otherwise.
#include "common.cuh"

#define PATHCTL_WARPS (PATHCTL_THREADS / 32)

// groupFrontier is the mask storage of one group: cur and next words per
// vertex, and their summaries (bit c&31 of word c>>5 set when chunk c of 32
// vertices has a non-zero word).
struct groupFrontier {
  u32* cur;
  u32* next;
  u32* curSum;
  u32* nextSum;
};

template <typename T>
__device__ __forceinline__ void relaxArcs(const Graph<T>& g, int u, u32 m, int w, T* vm, u32* next, u32* nextSum,
                                          int lane, int* any) {
  const bool active = (m >> lane) & 1u;
  const T du = active ? loadVolatile(vm + (size_t)u * w + lane) : T(0);
  const long long lo = g.offsets[u], hi = g.offsets[u + 1];
  for (long long e0 = lo; e0 < hi; e0 += 32) {
    const long long e = e0 + lane;
    int tv = 0;
    T tw = T(0);
    if (e < hi) {
      tv = g.targets[e];
      tw = g.weights[e];
    }
    const int cnt = (int)min(32LL, hi - e0);
    for (int j = 0; j < cnt; j++) {
      const int v = __shfl_sync(0xffffffffu, tv, j);
      const T wt = __shfl_sync(0xffffffffu, tw, j);
      bool improved = false;
      if (active) {
        const T nd = du + wt;
        T* p = vm + (size_t)v * w + lane;
        if (nd < loadVolatile(p)) improved = atomicMinNonNegative(p, nd);
      }
      const u32 bal = __ballot_sync(0xffffffffu, improved);
      if (bal != 0u && lane == 0) {
        *any = 1;
        if (atomicOr(next + v, bal) == 0u) atomicOr(nextSum + (v >> 10), 1u << ((v >> 5) & 31));
      }
    }
  }
}

template <typename T>
__device__ void batchedGroup(const Graph<T>& g, const int* sources, int w, T* vm, groupFrontier f) {
  const T inf = DistTraits<T>::inf();
  const int n = g.n;
  const int sumWords = (n + 1023) >> 10;
  for (size_t i = threadIdx.x; i < (size_t)n * w; i += blockDim.x) vm[i] = inf;
  for (int v = threadIdx.x; v < n; v += blockDim.x) {
    f.cur[v] = 0u;
    f.next[v] = 0u;
  }
  for (int i = threadIdx.x; i < sumWords; i += blockDim.x) {
    f.curSum[i] = 0u;
    f.nextSum[i] = 0u;
  }
  __syncthreads();
  if (threadIdx.x < w) {
    const int s = sources[threadIdx.x];
    vm[(size_t)s * w + threadIdx.x] = T(0);
    atomicOr(f.cur + s, 1u << threadIdx.x);
    atomicOr(f.curSum + (s >> 10), 1u << ((s >> 5) & 31));
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  // Chunk c = 32·word + bit belongs to warp c mod 8, i.e. to bits b with
  // b mod 8 == warp of every summary word.
  const u32 own = 0x01010101u << warp;
  for (;;) {
    int any = 0;
    for (int base = 0; base < sumWords; base += 32) {
      const int idx = base + lane;
      u32 sw = (idx < sumWords) ? (f.curSum[idx] & own) : 0u;
      if (sw != 0u) atomicAnd(f.curSum + idx, ~sw);
      u32 lanes = __ballot_sync(0xffffffffu, sw != 0u);
      while (lanes != 0u) {
        const int j = __ffs(lanes) - 1;
        lanes &= lanes - 1;
        u32 bits = __shfl_sync(0xffffffffu, sw, j);
        while (bits != 0u) {
          const int b = __ffs(bits) - 1;
          bits &= bits - 1;
          const int c = ((base + j) << 5) + b;
          const int v = (c << 5) + lane;
          u32 m = 0u;
          if (v < n) {
            m = f.cur[v];
            if (m != 0u) f.cur[v] = 0u;
          }
          u32 verts = __ballot_sync(0xffffffffu, m != 0u);
          while (verts != 0u) {
            const int k = __ffs(verts) - 1;
            verts &= verts - 1;
            const u32 mk = __shfl_sync(0xffffffffu, m, k);
            relaxArcs(g, (c << 5) + k, mk, w, vm, f.next, f.nextSum, lane, &any);
          }
        }
      }
    }
    if (!__syncthreads_or(any)) break;
    u32* t = f.cur;
    f.cur = f.next;
    f.next = t;
    t = f.curSum;
    f.curSum = f.nextSum;
    f.nextSum = t;
  }
}

// batched_T runs every group of the block, one thread block per group.
// frontier holds, per group, 2·n mask words then 2·ceil(n/1024) summary
// words.
#define PATHCTL_BATCHED(SUFFIX, T)                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_##SUFFIX(                 \
      const long long* offsets, const int* targets, const T* weights, int n, const int* sources,  \
      int numSources, T* vm, u32* frontier) {                                                      \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    const int groups = (numSources + 31) >> 5;                                                     \
    const size_t per = 2 * (size_t)n + 2 * (size_t)((n + 1023) >> 10);                             \
    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {                                   \
      __syncthreads();                                                                             \
      const int w = min(32, numSources - (grp << 5));                                              \
      u32* base = frontier + per * grp;                                                            \
      const int sumWords = (n + 1023) >> 10;                                                       \
      groupFrontier f = {base, base + n, base + 2 * (size_t)n, base + 2 * (size_t)n + sumWords};  \
      batchedGroup<T>(g, sources + (grp << 5), w, vm + (size_t)(grp << 5) * n, f);                 \
    }                                                                                              \
  }

PATHCTL_BATCHED(i32, int)
PATHCTL_BATCHED(i64, long long)
PATHCTL_BATCHED(f32, float)
PATHCTL_BATCHED(f64, double)

// batched_transpose_E copies the group-major distances of batched_* into
// the row-major block (row i = source i, n elements), through 32×32 tiles
// in shared memory so that both the reads and the writes are coalesced.
// Tile t covers vertices 32·(t mod tilesV) .. and the group t / tilesV.
#define PATHCTL_BATCHED_TRANSPOSE(SUFFIX, E)                                                       \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_transpose_##SUFFIX(       \
      const E* vm, int n, int numSources, E* dist) {                                               \
    __shared__ E tile[32][33];                                                                     \
    const int tilesV = (n + 31) >> 5;                                                              \
    const long long tiles = (long long)tilesV * ((numSources + 31) >> 5);                          \
    const int x = threadIdx.x & 31, y = threadIdx.x >> 5;                                          \
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {                                    \
      const int grp = (int)(t / tilesV);                                                           \
      const int v0 = (int)(t % tilesV) << 5;                                                       \
      const int w = min(32, numSources - (grp << 5));                                              \
      const E* src = vm + (size_t)(grp << 5) * n;                                                  \
      __syncthreads();                                                                             \
      for (int r = y; r < 32; r += PATHCTL_WARPS) {                                                \
        const int v = v0 + r;                                                                      \
        if (v < n && x < w) tile[r][x] = src[(size_t)v * w + x];                                   \
      }                                                                                            \
      __syncthreads();                                                                             \
      for (int r = y; r < w; r += PATHCTL_WARPS) {                                                 \
        const int v = v0 + x;                                                                      \
        if (v < n) dist[(size_t)((grp << 5) + r) * n + v] = tile[x][r];                            \
      }                                                                                            \
    }                                                                                              \
  }

PATHCTL_BATCHED_TRANSPOSE(b32, unsigned int)
PATHCTL_BATCHED_TRANSPOSE(b64, unsigned long long)
