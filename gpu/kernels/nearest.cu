// nearest.cu: the nearest layout (design.md, "Queries narrower than all
// pairs"): for every vertex, the distance to the nearest of a set of sources
// and which source that is, ties to the smaller source id. One multi-source
// run whose cost does not grow with the number of sources: every source
// starts at distance 0 labelled with itself, and labels spread as in one
// single-source run (the multi-source Dijkstra of cpu/nearest.go, run here as
// label correcting).
//
// Algorithm: label correcting over a frontier, scheduled near-far (Davidson
// et al., "Work-Efficient Parallel GPU Methods for Single-Source Shortest
// Paths", IPDPS 2014), the one-pile form of delta-stepping (Meyer and
// Sanders): a round relaxes the out-arcs of the frontier vertices whose
// distance is at most a bound; frontier vertices above it wait in the
// frontier. When a round leaves no vertex at or below the bound, the bound
// moves to the smallest waiting distance plus delta. The run ends when the
// frontier is empty. Label correcting converges whatever the bound does; the
// bound only keeps the rounds from relaxing labels that are far from final.
//
// Choices:
// - Labels of 32-bit distances (int32, float32) are packed cells: the
//   distance's bits in the high word, the source's vertex id in the low word.
//   Non-negative int32 and float32 values order like their bits read as
//   unsigned, so one 64-bit atomicMin keeps the lexicographically smallest
//   (distance, source) pair: the tie rule comes with the atomic. The empty
//   cell is all ones. A cell that changed, in distance or in source, joins the
//   next frontier: its new label must spread.
// - 64-bit distances (int64, float64) do not fit beside a source in 64 bits.
//   They run in two passes: the same near-far loop over plain distances
//   (atomicMin on the distance alone), then a second fixpoint for the source:
//   source[v] is the smallest source[u] over the tight arcs u -> v
//   (dist[u] + w == dist[v], the same addition the first pass made), a
//   source being its own label. Over the tight arcs the sources reaching v are
//   exactly those at v's distance, so the minimum is the tie rule's.
// - The frontier is two bytes per vertex, cur and next, swapped between
//   rounds (the scheme of label_correcting.cuh): a round reads and clears cur,
//   only the thread owning a vertex touches its cur byte, and next bytes are
//   only ever set to 1. Each round scans every vertex's cur byte (a dense
//   frontier): on graphs of a million vertices that is a microsecond of
//   bandwidth, less than a queue's atomics.
// - The host drives the rounds without waiting for them: a one-thread advance
//   kernel after each round reads the round's flags from the control words
//   (below), moves the bound, and sets done when the frontier is empty; the
//   host launches rounds in batches and reads done between batches. Rounds
//   launched after done return at once.
// - Control words (u64, see Control): the bound and the smallest waiting
//   distance as doubles (scheduling only, never distances: a non-negative
//   double orders like its bits, so the minimum is an integer atomicMin),
//   the flags of the round, done and the round count. Flags are set once per
//   warp (a vote), not once per relaxation.
// - A cutoff (cutBits, the bits of the cutoff in the distance type) stops
//   relaxations past it: those vertices stay unreached. Without one it is the
//   type's infinity.
// - Weights are non-negative: the Go side refuses negative ones before any
//   launch, as the CPU engine does.
#include "common.cuh"

namespace pathctl {
namespace nearest {

// Control is the layout of the control words; the Go side writes them
// (gpu/nearest.go, resetControl) before each pass; nearestControlWords
// there is its size in u64 words.
struct Control {
  double bound;        // distances at most bound relax this round
  u64 minFar;          // bits of the smallest distance above bound seen this round
  u64 nearWork;        // 1: a label at most bound changed this round
  u64 pending;         // 1: the next frontier is not empty
  u64 done;            // 1: the frontier is empty; later rounds return at once
  u64 rounds;          // rounds run (for the Go side's report)
};

template <typename T> __device__ __forceinline__ T fromBits(u64 bits);
template <> __device__ __forceinline__ int fromBits<int>(u64 bits) { return (int)(u32)bits; }
template <> __device__ __forceinline__ long long fromBits<long long>(u64 bits) { return (long long)bits; }
template <> __device__ __forceinline__ float fromBits<float>(u64 bits) { return __int_as_float((int)(u32)bits); }
template <> __device__ __forceinline__ double fromBits<double>(u64 bits) {
  return __longlong_as_double((long long)bits);
}

// Bits of non-negative 32-bit distances, in the packed cell's high word.
__device__ __forceinline__ u32 distBits(int d) { return (u32)d; }
__device__ __forceinline__ u32 distBits(float d) { return __float_as_uint(d); }
template <typename T> __device__ __forceinline__ T fromDistBits(u32 b);
template <> __device__ __forceinline__ int fromDistBits<int>(u32 b) { return (int)b; }
template <> __device__ __forceinline__ float fromDistBits<float>(u32 b) { return __uint_as_float(b); }

#define PATHCTL_NEAREST_EMPTY 0xffffffffffffffffull
#define PATHCTL_NEAREST_NO_SOURCE 0x7fffffff

// sumOf is d + w, or inf where an integer sum wraps (it cannot on a graph
// whose distance type was chosen for it; the check keeps labels monotone on
// any input).
template <typename T>
__device__ __forceinline__ T sumOf(T d, T w) {
  const T s = d + w;
  return s < d ? DistTraits<T>::inf() : s;
}

// PackedCells are the labels of 32-bit distances: (distance bits, source).
template <typename T>
struct PackedCells {
  u64* cells;
  struct Label {
    T d;
    u32 src;
  };
  __device__ __forceinline__ Label load(int v) const {
    const u64 c = loadVolatile(cells + v);
    return Label{fromDistBits<T>((u32)(c >> 32)), (u32)c};
  }
  // relax offers (nd, src) to v and reports whether v's label changed.
  __device__ __forceinline__ bool relax(int v, T nd, u32 src) {
    const u64 next = ((u64)distBits(nd) << 32) | src;
    if (next >= loadVolatile(cells + v)) return false;
    return atomicMin(cells + v, next) > next;
  }
};

// PlainCells are the labels of 64-bit distances in the first pass: the
// distance alone.
template <typename T>
struct PlainCells {
  T* dist;
  struct Label {
    T d;
    u32 src;  // unused: the second pass finds the sources
  };
  __device__ __forceinline__ Label load(int v) const { return Label{loadVolatile(dist + v), 0}; }
  __device__ __forceinline__ bool relax(int v, T nd, u32) {
    return nd < loadVolatile(dist + v) && atomicMinNonNegative(dist + v, nd);
  }
};

// ownVertex is the vertex of this thread in a round: the rounds launch one
// thread per vertex, so that every thread of a warp reaches the vote. The
// other kernels stride over their items from it by gridStride, in 64 bits
// so that no index wraps near 2^31.
__device__ __forceinline__ long long ownVertex() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long gridStride() { return (long long)gridDim.x * blockDim.x; }

// relaxRound is one near-far round over the frontier cur, building next.
template <typename T, class Cells>
__device__ __forceinline__ void relaxRound(const Graph<T>& g, T cut, Cells cells, u8* cur, u8* next, Control* ctl) {
  if (loadVolatile(&ctl->done)) return;  // the same for every thread of the launch
  const double bound = ctl->bound;
  NearFarFlags f;
  const long long u = ownVertex();
  if (u < g.n && cur[u]) {
    cur[u] = 0;
    const auto lu = cells.load(u);
    if ((double)lu.d > bound) {
      next[u] = 1;  // waits for the bound to reach it
      f.far((double)lu.d);
    } else {
      for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
        const T nd = sumOf(lu.d, g.weights[e]);
        if (nd > cut || nd == DistTraits<T>::inf()) continue;
        const int v = g.targets[e];
        if (!cells.relax(v, nd, lu.src)) continue;
        next[v] = 1;
        if ((double)nd <= bound) {
          f.nearWork = true;
          f.pending = true;
        } else {
          f.far((double)nd);
        }
      }
    }
  }
  f.report(ctl);
}

// sourceRound is one round of the second pass of 64-bit distances: the
// sources that changed in the last round offer themselves over their tight
// out-arcs.
template <typename T>
__device__ __forceinline__ void sourceRound(const Graph<T>& g, const T* dist, int* src, u8* cur, u8* next,
                                            Control* ctl) {
  if (loadVolatile(&ctl->done)) return;
  NearFarFlags f;
  const long long u = ownVertex();
  if (u < g.n && cur[u]) {
    cur[u] = 0;
    const int s = loadVolatile(src + u);
    const T du = dist[u];
    for (long long e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
      const int v = g.targets[e];
      const T dv = dist[v];
      if (dv == DistTraits<T>::inf() || sumOf(du, g.weights[e]) != dv || s >= loadVolatile(src + v)) continue;
      if (atomicMin(src + v, s) > s) {
        next[v] = 1;
        f.nearWork = true;
        f.pending = true;
      }
    }
  }
  f.report(ctl);
}

}  // namespace nearest
}  // namespace pathctl

using pathctl::nearest::Control;

// nearest_init_packed empties every cell and both frontiers.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    nearest_init_packed(int n, u64* cells, u8* cur, u8* next) {
  for (long long v = pathctl::nearest::ownVertex(); v < n; v += pathctl::nearest::gridStride()) {
    cells[v] = PATHCTL_NEAREST_EMPTY;
    cur[v] = 0;
    next[v] = 0;
  }
}

// nearest_seed_packed labels every source (0, itself) and puts it in the
// frontier; a source given twice is labelled twice, to the same effect.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    nearest_seed_packed(const int* sources, int numSources, u64* cells, u8* cur) {
  for (long long i = pathctl::nearest::ownVertex(); i < numSources; i += pathctl::nearest::gridStride()) {
    const int s = sources[i];
    atomicMin(cells + s, (u64)(u32)s);  // distance 0 has bits 0 in both types
    cur[s] = 1;
  }
}

// nearest_advance moves the bound after a round (one thread): the same
// bound while labels at most it changed, else the smallest waiting distance
// plus delta, and done once the frontier is empty. It clears the round's
// flags for the next.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) nearest_advance(u64* control, double delta) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  Control* ctl = (Control*)control;
  if (ctl->done) return;
  ctl->rounds++;
  if (!ctl->pending) {
    ctl->done = 1;
  } else if (!ctl->nearWork) {
    const double far = __longlong_as_double((long long)ctl->minFar);
    ctl->bound = fmax(far + delta, ctl->bound + delta);
  }
  ctl->nearWork = 0;
  ctl->pending = 0;
  ctl->minFar = 0x7ff0000000000000ull;
}

// nearest_sources_finish turns the second pass's "no source" into -1.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) nearest_sources_finish(int n, int* src) {
  for (long long v = pathctl::nearest::ownVertex(); v < n; v += pathctl::nearest::gridStride()) {
    if (src[v] == PATHCTL_NEAREST_NO_SOURCE) src[v] = -1;
  }
}

// The 32-bit distance types: packed cells, one pass, then the cells split
// into the distance and source rows (Infinity and -1 where unreached).
#define PATHCTL_NEAREST_PACKED(SUFFIX, T)                                                          \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_round_##SUFFIX(const long long* offsets, const int* targets, const T* weights, int n, \
                             u64 cutBits, u64* cells, u8* cur, u8* next, u64* control) {           \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    nearest::relaxRound<T>(g, nearest::fromBits<T>(cutBits), nearest::PackedCells<T>{cells}, cur, next, \
                      (Control*)control);                                                          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_finish_##SUFFIX(int n, const u64* cells, T* dist, int* src) {                        \
    using namespace pathctl;                                                                       \
    for (long long v = pathctl::nearest::ownVertex(); v < n; v += pathctl::nearest::gridStride()) { \
      const u64 c = cells[v];                                                                      \
      dist[v] = c == PATHCTL_NEAREST_EMPTY ? DistTraits<T>::inf()                                  \
                                           : nearest::fromDistBits<T>((u32)(c >> 32));             \
      src[v] = c == PATHCTL_NEAREST_EMPTY ? -1 : (int)(u32)c;                                      \
    }                                                                                              \
  }

PATHCTL_NEAREST_PACKED(i32, int)
PATHCTL_NEAREST_PACKED(f32, float)

// The 64-bit distance types: distances first (plain cells), then the
// sources over the tight arcs.
#define PATHCTL_NEAREST_WIDE(SUFFIX, T)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_init_##SUFFIX(int n, T* dist, int* src, u8* cur, u8* next) {                         \
    using namespace pathctl;                                                                       \
    for (long long v = pathctl::nearest::ownVertex(); v < n; v += pathctl::nearest::gridStride()) { \
      dist[v] = DistTraits<T>::inf();                                                              \
      src[v] = PATHCTL_NEAREST_NO_SOURCE;                                                          \
      cur[v] = 0;                                                                                  \
      next[v] = 0;                                                                                 \
    }                                                                                              \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_seed_##SUFFIX(const int* sources, int numSources, T* dist, int* src, u8* cur) {      \
    for (long long i = pathctl::nearest::ownVertex(); i < numSources; i += pathctl::nearest::gridStride()) { \
      const int s = sources[i];                                                                    \
      dist[s] = (T)0;                                                                              \
      atomicMin(src + s, s);                                                                       \
      cur[s] = 1;                                                                                  \
    }                                                                                              \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_round_##SUFFIX(const long long* offsets, const int* targets, const T* weights, int n, \
                             u64 cutBits, T* dist, u8* cur, u8* next, u64* control) {              \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    nearest::relaxRound<T>(g, nearest::fromBits<T>(cutBits), nearest::PlainCells<T>{dist}, cur, next, \
                      (Control*)control);                                                          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                    \
      nearest_source_round_##SUFFIX(const long long* offsets, const int* targets, const T* weights, \
                                    int n, const T* dist, int* src, u8* cur, u8* next, u64* control) { \
    using namespace pathctl;                                                                       \
    Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                                       \
    nearest::sourceRound<T>(g, dist, src, cur, next, (Control*)control);                           \
  }

PATHCTL_NEAREST_WIDE(i64, long long)
PATHCTL_NEAREST_WIDE(f64, double)
