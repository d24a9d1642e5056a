// ch.cu: PHAST (Delling, Goldberg, Nowatzyk, Werneck, IPDPS 2011) batched
// over a block of k sources, over a contraction hierarchy laid out by
// levels (package hierarchy, NewSweep).
//
// The table D holds, vertex-major, the k sources' tentative distances of
// each position: D[p*k + j] for source j, so that the k threads of a
// position read and write k consecutive words. The host fills D with
// infinity; ch_sources puts each source at 0; the upward phase (the
// shortest paths over arcs to higher ranks, a DP in rising rank where the
// CPU's PHAST runs a Dijkstra) runs, per upward level, ch_up_live, which
// marks the positions where a group of 32 sources has a finite distance,
// then ch_up, which skips the positions and tails whose group is all
// infinite there; the downward phase runs one ch_down per downward level;
// ch_rows gathers the table into the block's rows, source-major by vertex
// id, as every other kernel leaves them, or, for the stats layout,
// ch_stats reduces the table itself. Each level's positions depend only on
// earlier levels of its phase, so a level's threads are independent.
// Distances are int32; a sum at or past infinity is no path, which the
// host rules out by checking the hierarchy's bound.
#include "common.cuh"

namespace pathctl {
namespace ch {

// relax returns the minimum of best and D[tail(a)*k + j] + w(a) over the
// arcs [begin, end), four arcs' loads in flight at a time.
__device__ __forceinline__ int relax(const int* D, u64 k, u64 j, long long begin, long long end, const int* tail,
                                     const int* weight, int best) {
  const int inf = DistTraits<int>::inf();
  long long a = begin;
  for (; a + 4 <= end; a += 4) {
    int d[4];
#pragma unroll
    for (int u = 0; u < 4; u++) d[u] = D[(u64)tail[a + u] * k + j];
#pragma unroll
    for (int u = 0; u < 4; u++) {
      if (d[u] != inf) {
        const long long c = (long long)d[u] + weight[a + u];
        if (c < best) best = (int)c;
      }
    }
  }
  for (; a < end; a++) {
    const int d = D[(u64)tail[a] * k + j];
    if (d != inf) {
      const long long c = (long long)d + weight[a];
      if (c < best) best = (int)c;
    }
  }
  return best;
}

// item places the thread in a downward level's grid (chLevelGrid, ch.go):
// the blocks come in rows of ceil(k / blockDim) blocks, a row's threads
// taking the sources j < k of one position at a time, the rows the
// positions from first in turn, step apart. It reports false for a thread
// past the last source. A thread keeps its source for the whole level, so
// that no item index is divided in the loop: the 64-bit division and
// remainder of each item cost the downward sweep about a quarter of its
// time (measured on the H200; the upward phase, whose items mostly stop
// at a dead byte, did not gain).
__device__ __forceinline__ bool item(int k, int first, u64* j, u64* at, u64* step) {
  const unsigned rowBlocks = ((unsigned)k + blockDim.x - 1) / blockDim.x;
  *j = (u64)(blockIdx.x % rowBlocks) * blockDim.x + threadIdx.x;
  *at = (u64)first + blockIdx.x / rowBlocks;
  *step = gridDim.x / rowBlocks;
  return *j < (u64)k;
}

}  // namespace ch
}  // namespace pathctl

// ch_sources_i32 sets D[pos[sources[j]]*k + j] = 0 for j < k, and marks
// the source's group live at its position (ch_up_i32).
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_sources_i32(int* D, unsigned char* live, int k, const int* pos, const int* sources) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < k) {
    const u64 p = (u64)pos[sources[j]];
    D[p * k + j] = 0;
    live[p * (((u64)k + 31) / 32) + j / 32] = 1;
  }
}

// ch_up_live_i32 marks the groups live at the positions of the upward
// level [first, last) of order, before ch_up_i32 runs it: thread (i, g)
// sets live[p*groups + g], p = order[i], where a tail of an arc into p is
// live for group g. The live bytes are those of kernels/ch.cu's upward
// phase: whether any of the group's 32 distances at p is finite. A byte so
// set is exact, not a guess: a position that an up-arc leaves from a live
// tail is in that source's upward search space, so its distance is finite
// (weights are finite). A warp reads 32 groups' consecutive bytes, and the
// test of a dead position then costs ch_up_i32 one byte instead of a
// chain of loads per arc.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_up_live_i32(unsigned char* live, int k, int first, int last, const int* order, const long long* arcStart,
                   const int* arcTail) {
  const u64 groups = ((u64)k + 31) / 32;
  const u64 items = (u64)(last - first) * groups;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
    const u64 at = first + i / groups, g = i % groups;
    unsigned char* own = live + (u64)order[at] * groups + g;
    if (*own) continue;  // the source's own group (ch_sources)
    const long long end = arcStart[at + 1];
    for (long long a = arcStart[at]; a < end; a++) {
      if (live[(u64)arcTail[a] * groups + g]) {
        *own = 1;
        break;
      }
    }
  }
}

// ch_up_i32 runs the upward level [first, last) of order for the k
// sources: thread (i, j) lowers D[p*k + j], p = order[i], to the minimum
// over the arcs into p from lower ranks, [arcStart[i], arcStart[i+1]).
// Most of the table is infinite in this phase (a source's upward search
// space is a few thousand vertices), so ch_up_live_i32 has marked the
// positions where any of a group of 32 sources' distances is finite
// (live[p*groups + j/32]): a thread whose byte is 0 stops there, a tail
// whose byte is 0 is not read, and an entry that stays infinite is not
// written.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_up_i32(int* D, const unsigned char* live, int k, int first, int last, const int* order,
              const long long* arcStart, const int* arcTail, const int* arcWeight) {
  const u64 items = (u64)(last - first) * (u64)k;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  const u64 groups = ((u64)k + 31) / 32;
  const int inf = pathctl::DistTraits<int>::inf();
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
    const u64 at = first + i / k;
    const u64 j = i % k;
    const u64 p = (u64)order[at];
    const u64 g = j / 32;
    if (!live[p * groups + g]) continue;
    int best = D[p * k + j];
    const long long end = arcStart[at + 1];
    for (long long a = arcStart[at]; a < end; a++) {
      const u64 tail = (u64)arcTail[a];
      if (!live[tail * groups + g]) continue;
      const int d = D[tail * k + j];
      if (d != inf) {
        const long long c = (long long)d + arcWeight[a];
        if (c < best) best = (int)c;
      }
    }
    if (best != inf) D[p * k + j] = best;
  }
}

// ch_down_i32 sweeps the positions [first, last) of one downward level for
// the k sources (a thread per source and row of blocks, item): thread
// (p, j) lowers D[p*k + j] to the minimum over the down-arcs into p.
// Where the upward phase left p's group dead (live, as ch_up_i32 left it),
// p's entry is the table's infinity and is not read; an entry that stays
// infinite is not written.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_down_i32(int* D, const unsigned char* live, int k, int first, int last, const long long* arcStart,
                const int* arcTail, const int* arcWeight) {
  const u64 groups = ((u64)k + 31) / 32;
  const int inf = pathctl::DistTraits<int>::inf();
  u64 j, p, step;
  if (!pathctl::ch::item(k, first, &j, &p, &step)) return;
  for (; p < (u64)last; p += step) {
    const int own = live[p * groups + j / 32] ? D[p * k + j] : inf;
    const int best = pathctl::ch::relax(D, k, j, arcStart[p], arcStart[p + 1], arcTail, arcWeight, own);
    if (best != inf) D[p * k + j] = best;
  }
}

// ch_rows_i32 writes row j of the block, rows[j*n + v] = D[pos[v]*k + j],
// for every source j < k and vertex v < n, through tiles of 32 vertices ×
// 32 sources in shared memory so that both the reads (32 sources of a
// position) and the writes (32 vertices of a row) are whole segments.
// Each thread block takes tiles in turn: blockIdx.x, then every gridDim.x.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_rows_i32(const int* D, int k, int n, const int* pos, int* rows) {
  __shared__ int tile[32][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const u64 tilesV = ((u64)n + 31) / 32, tilesJ = ((u64)k + 31) / 32;
  for (u64 t = blockIdx.x; t < tilesV * tilesJ; t += gridDim.x) {
    const u64 v0 = (t % tilesV) * 32, j0 = (t / tilesV) * 32;
    for (int r = warp; r < 32; r += warps) {
      const u64 v = v0 + r, j = j0 + lane;
      if (v < (u64)n && j < (u64)k) tile[r][lane] = D[(u64)pos[v] * k + j];
    }
    __syncthreads();
    for (int r = warp; r < 32; r += warps) {
      const u64 j = j0 + r, v = v0 + lane;
      if (v < (u64)n && j < (u64)k) rows[j * n + v] = tile[lane][r];
    }
    __syncthreads();
  }
}

// ch_stats_i32 reduces the stats layout's words (kernels/stats.cu) of the
// block's k sources straight from the table, without its rows: thread
// (c, j) takes source j over the positions [c*n/chunks, (c+1)*n/chunks),
// the k threads of a position reading its k consecutive words, and leaves
// four partial words at partial[4*(c*k + j)] (reachable, eccentricity,
// sum, harmonic), over the positions other than the source's own whose
// distance is finite. ch_stats_sum_i32 adds each source's chunks in chunk
// order, so that a run always gives the same bits. Distances are never
// negative here (the hierarchy's weights are not); 1/d comes from a table
// below 1024 and from __drcp_rn above, both the correctly rounded
// reciprocal, as the division 1.0/d is.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_stats_i32(const int* D, int k, int n, const int* pos, const int* sources, int chunks, u64* partial) {
  __shared__ double recips[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) recips[i] = i == 0 ? 0.0 : 1.0 / (double)i;
  __syncthreads();
  const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)chunks * (u64)k) return;
  const u64 j = t % k, c = t / k;
  const u64 first = c * (u64)n / chunks, last = (c + 1) * (u64)n / chunks;
  const u64 self = (u64)pos[sources[j]];
  const int inf = pathctl::DistTraits<int>::inf();
  long long reach = 0;
  int ecc = 0;
  u64 sum = 0;
  double harm = 0;
  auto add = [&](u64 p, int d) {
    if (d == inf || p == self) return;
    if (d > ecc) ecc = d;
    reach++;
    sum += (u64)(long long)d;
    if (d != 0) harm += d < 1024 ? recips[d] : __drcp_rn((double)d);
  };
  u64 p = first;
  for (; p + 4 <= last; p += 4) {
    int d[4];
#pragma unroll
    for (int u = 0; u < 4; u++) d[u] = D[(p + u) * k + j];
#pragma unroll
    for (int u = 0; u < 4; u++) add(p + u, d[u]);
  }
  for (; p < last; p++) add(p, D[p * k + j]);
  u64* out = partial + 4 * t;
  out[0] = (u64)reach;
  out[1] = (u64)ecc;
  out[2] = sum;
  out[3] = (u64)__double_as_longlong(harm);
}

// ch_stats_sum_i32 writes out[4*j .. 4*j+3] for each source j < k, as
// kernels/stats.cu does, from ch_stats_i32's chunks of that source.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_stats_sum_i32(const u64* partial, int k, int chunks, u64* out) {
  const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= (u64)k) return;
  long long reach = 0;
  int ecc = 0;
  u64 sum = 0;
  double harm = 0;
  for (u64 c = 0; c < (u64)chunks; c++) {
    const u64* w = partial + 4 * (c * k + j);
    reach += (long long)w[0];
    ecc = max(ecc, (int)w[1]);
    sum += w[2];
    harm += __longlong_as_double((long long)w[3]);
  }
  out[4 * j + 0] = (u64)reach;
  out[4 * j + 1] = (u64)__double_as_longlong((double)ecc);
  out[4 * j + 2] = sum;
  out[4 * j + 3] = (u64)__double_as_longlong(harm);
}
