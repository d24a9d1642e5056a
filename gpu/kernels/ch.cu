// ch.cu: PHAST's downward sweep (Delling, Goldberg, Nowatzyk, Werneck,
// IPDPS 2011) batched over a block of k sources, over a contraction
// hierarchy laid out by levels (package hierarchy, Sweep).
//
// The table D holds, vertex-major, the k sources' tentative distances of
// each position: D[p*k + j] for source j, so that the k threads of a
// position read and write k consecutive words. The host fills D with
// infinity and ch_seed writes the upward search spaces into it; then one
// ch_level per level relaxes every down-arc into the level's positions,
// whose tails lie in earlier levels (already final); ch_rows gathers the
// table into the block's rows, source-major by vertex id, as every other
// kernel leaves them. Distances are int32; a sum at or past infinity is no
// path, which the host rules out by checking the hierarchy's bound.
#include "common.cuh"

namespace pathctl {
namespace ch {

__device__ __forceinline__ u64 item() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }

}  // namespace ch
}  // namespace pathctl

// ch_seed_i32 lowers D[at[i]] to d[i] for i < count (the upward search
// spaces; one entry per source and vertex, so no two threads meet).
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_seed_i32(int* D, const long long* at, const int* d, long long count) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = pathctl::ch::item(); i < (u64)count; i += stride) {
    const long long a = at[i];
    if (d[i] < D[a]) D[a] = d[i];
  }
}

// ch_level_i32 sweeps the positions [first, last) of one level for the k
// sources: thread (p, j) takes the minimum over the down-arcs a into p of
// D[tail(a)*k + j] + w(a).
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_level_i32(int* D, int k, int first, int last, const long long* arcStart, const int* arcTail,
                 const int* arcWeight) {
  const u64 items = (u64)(last - first) * (u64)k;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  const int inf = pathctl::DistTraits<int>::inf();
  for (u64 i = pathctl::ch::item(); i < items; i += stride) {
    const u64 p = first + i / k;
    const u64 j = i % k;
    int best = D[p * k + j];
    const long long end = arcStart[p + 1];
    for (long long a = arcStart[p]; a < end; a++) {
      const int d = D[(u64)arcTail[a] * k + j];
      if (d != inf) {
        const long long c = (long long)d + arcWeight[a];
        if (c < best) best = (int)c;
      }
    }
    D[p * k + j] = best;
  }
}

// ch_rows_i32 writes row j of the block, rows[j*n + v] = D[pos[v]*k + j],
// for every source j < k and vertex v < n.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    ch_rows_i32(const int* D, int k, int n, const int* pos, int* rows) {
  const u64 items = (u64)k * (u64)n;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = pathctl::ch::item(); i < items; i += stride) {
    const u64 j = i / n;
    const u64 v = i % n;
    rows[i] = D[(u64)pos[v] * k + j];
  }
}
