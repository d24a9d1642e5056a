// label_correcting.cuh: the relaxation loop of seeds/002_75570bc8eedf73c5.txt
// Algorithms 0.1 (bfs) and 0.3 (bellman-ford): "atomic if (t.dist > p.dist +
// w) { t.dist = p.dist + w; t.pred = p; changed = true }" until nothing
// changes. bfs is the same loop with every weight 1.
//
// Choices:
// - Instead of every vertex in every round (the seed's foreach p in G), a
//   round relaxes the vertices whose distance changed in the previous round:
//   two frontier bytes per vertex (cur, next) that swap between rounds.
// - Distances are stored in cells. PlainCells hold the distance only (an
//   atomic minimum; a CAS loop for floats, which may be negative here).
//   PackedCells hold (order key of a 32-bit distance, predecessor) in 64 bits,
//   so the distance and its predecessor change in one atomic step as the seed
//   asks.
// - PackedCells for bellman-ford replace a cell only when the distance gets
//   strictly smaller (a CAS loop): a predecessor then always has a smaller
//   label at the time it is written, which keeps the predecessor graph a tree
//   even on zero-weight cycles. For bfs (weights 1, no zero cycles) they use a
//   plain 64-bit atomicMin, which among equal hop counts keeps the smallest
//   predecessor: the result is deterministic (every in-neighbour on a
//   shortest path offers itself once it holds its final count, so the
//   minimum is over the same set whatever the timing).
// - Each cell type checks with a plain read whether an atomic can change the
//   cell before it issues one.
// - Negative cycles: the source relaxes in round 1 and a vertex whose
//   shortest path has k arcs is final after round k, so without a negative
//   cycle nothing changes in round n. A change in round n marks the source's
//   status 1 and stops; the Go side then names a vertex on the cycle.
#pragma once
#include "common.cuh"

namespace pathctl {
namespace labelcorrecting {

template <typename T>
struct PlainCells {
  T* dist;
  __device__ __forceinline__ void init(int v, T d) { dist[v] = d; }
  __device__ __forceinline__ T load(int v) const { return loadVolatile(dist + v); }
  __device__ __forceinline__ bool relax(int v, T nd, int) {
    return nd < load(v) && atomicMinSigned(dist + v, nd);
  }
  __device__ __forceinline__ void finish(int) {}
};

template <typename T, bool Lexicographic>
struct PackedCells {
  u64* cells;
  T* dist;
  int* pred;
  __device__ __forceinline__ void init(int v, T d) { cells[v] = packCell(orderKey(d), PATHCTL_NO_PRED); }
  __device__ __forceinline__ T load(int v) const {
    return fromOrderKey<T>((u32)(loadVolatile(cells + v) >> 32));
  }
  __device__ __forceinline__ bool relax(int v, T nd, int u) {
    const u32 key = orderKey(nd);
    const u64 next = packCell(key, (u32)u);
    if (Lexicographic) {
      // Equal distances still go to the atomic: a smaller predecessor wins.
      if (next >= loadVolatile(cells + v)) return false;
      return (u32)(atomicMin(cells + v, next) >> 32) > key;
    }
    u64 old = loadVolatile(cells + v);
    while ((u32)(old >> 32) > key) {
      const u64 prev = atomicCAS(cells + v, old, next);
      if (prev == old) return true;
      old = prev;
    }
    return false;
  }
  __device__ __forceinline__ void finish(int v) {
    const u64 c = cells[v];
    dist[v] = fromOrderKey<T>((u32)(c >> 32));
    const u32 p = (u32)c;
    pred[v] = (p == PATHCTL_NO_PRED) ? -1 : (int)p;
  }
};

// source runs the loop for source s. UnitWeights ignores g.weights and
// counts hops. status receives 1 on a negative cycle.
template <typename T, bool UnitWeights, class Cells>
__device__ void source(const Graph<T>& g, int s, Cells cells, u8* cur, u8* next, int* status) {
  const T inf = DistTraits<T>::inf();
  forOwnVertices(g.n, [&](int v) {
    cells.init(v, (v == s) ? T(0) : inf);
    cur[v] = (v == s);
    next[v] = 0;
  });
  __syncthreads();
  long long round = 0;
  const bool cycle = untilStable(
      [&] {
        round++;
        // Relax: the out-arcs of the vertices that changed in the last
        // round.
        int any = 0;
        forOwnVertices(g.n, [&](int u) {
          if (!cur[u]) return;
          cur[u] = 0;
          const T du = cells.load(u);
          for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
            const int v = g.targets[e];
            const T nd = du + (UnitWeights ? T(1) : g.weights[e]);
            if (cells.relax(v, nd, u)) {
              next[v] = 1;
              any = 1;
            }
          }
        });
        u8* t = cur;
        cur = next;
        next = t;
        return any;
      },
      // Something changed in round n: a negative cycle.
      [&] { return round >= g.n; });
  if (threadIdx.x == 0) *status = cycle ? 1 : 0;
  forOwnVertices(g.n, [&](int v) { cells.finish(v); });
}

}  // namespace labelcorrecting
}  // namespace pathctl
