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
// - A round is one launch over every group of the block, the whole grid
//   sharing out the busy 32-vertex chunks (batched_round_*): a group of 32
//   sources alone would leave most of the device idle. Only the warp that
//   takes a chunk reads and clears its cur words; others only set bits in
//   next. The host launches rounds back to back without waiting and reads
//   one word, the last round that changed anything, every few rounds (a
//   round after convergence finds an empty frontier and costs a scan of
//   the summaries).
// - Distances only drop through an atomic minimum (integers directly,
//   non-negative floats through their bit patterns: atomicMinNonNegative),
//   after a plain read shows that the atomic can win. Weights must be
//   non-negative: the Go side never selects this kernel otherwise.
// - A cutoff (issue 17's --cutoff D) runs the batched_cut* rounds: no
//   relaxation past D is made, and each vertex's arcs, uploaded in rising
//   weight for them, are walked only up to the first that leads past D, so
//   the search and its cost end at the cutoff's radius; the rows derived
//   after the kernel clip at D too (batchedRound says why the result is
//   the full run's clipped at D).
// - Near-far rounds (batched_nf*, plan.Config.NearFarMode; auto on large
//   weighted meshes): instead of the threshold that rises every round, one
//   bound for every group that moves by a bucket width only when nothing
//   at most it is left, with the lanes past it in a far pile that no round
//   reads, and lanes of light words expanded by their own thread
//   (nearFarRound).
#include "common.cuh"

#define PATHCTL_WARPS (PATHCTL_THREADS / 32)

// PATHCTL_BATCHED_ROUNDS bounds the rounds whose work counters[8·round ..]
// records (gpu/batched.go's batchedTraceRounds).
#define PATHCTL_BATCHED_ROUNDS 65536

namespace pathctl {
namespace batched {

// warpMin is the minimum of x over the warp's lanes, on every lane.
template <typename T>
__device__ __forceinline__ T warpMin(T x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T y = __shfl_xor_sync(0xffffffffu, x, o);
    x = y < x ? y : x;
  }
  return x;
}

// setMaskBits sets bits in the frontier word of v (words, one per vertex
// of a group) and, where the word was empty, v's summary bit (sums, one bit
// per 32 vertices).
__device__ __forceinline__ void setMaskBits(u32* words, u32* sums, int v, u32 bits) {
  if (atomicOr(words + v, bits) == 0u) atomicOr(sums + (v >> 10), 1u << ((v >> 5) & 31));
}

// NextMarks puts every improvement into the next round's frontier (the
// group's next words and summaries): the plain rounds. warp is called by
// every lane of the warp with the ballot of the lanes that improved the
// distance to v (bal ≠ 0); lane by one lane that improved it, with its own
// bit.
template <typename T>
struct NextMarks {
  u32* next;
  u32* nextSum;
  __device__ __forceinline__ void warp(int v, u32 bal, bool, T, int lane) {
    if (lane == 0) setMaskBits(next, nextSum, v, bal);
  }
  __device__ __forceinline__ void lane(int v, u32 bit, T) { setMaskBits(next, nextSum, v, bit); }
};

// relaxArcs relaxes the arcs of u for the lanes set in m, 4 arcs at a time
// so that a warp has 4 independent loads in flight. vm is the group's
// distances (row width w); marks puts the improved lanes into the
// frontier (NextMarks, NearFarMarks). Distances are read through L2
// (__ldcg): a stale value is never smaller than the current one, so it can
// only cost an atomic, never miss an improvement, and an improvement made
// during the round is marked.
// With Cut, a relaxation to a distance above cut (the cutoff) is not made,
// nor is the head's distance read for it, and the arcs of u, which then
// come in rising weight, are walked only while the lightest lane's
// distance plus the arc's weight is within cut: every later arc is at
// least as heavy.
template <typename T, bool Count, int ILP, bool Cut, class Marks>
__device__ __forceinline__ bool relaxArcs(const Graph<T>& g, int u, u32 m, int w, T* vm, Marks& marks, int lane, T cut,
                                          u64* tally) {
  const bool active = (m >> lane) & 1u;
  const T du = active ? __ldcg(vm + (size_t)u * w + lane) : T(0);
  const long long lo = g.offsets[u], hi = g.offsets[u + 1];
  const T duMin = Cut ? warpMin(active ? du : DistTraits<T>::inf()) : T(0);
  bool any = false;
  for (long long e0 = lo; e0 < hi; e0 += 32) {
    const long long e = e0 + lane;
    int tv = 0;
    T tw = T(0);
    if (e < hi) {
      tv = g.targets[e];
      tw = g.weights[e];
    }
    int cnt = (int)min(32LL, hi - e0);
    bool past = false;
    if (Cut) {
      // The first arc whose weight takes the lightest lane past cut ends
      // the walk (warp-uniform: a ballot over the arcs of the chunk).
      const u32 over = __ballot_sync(0xffffffffu, lane < cnt && duMin + tw > cut);
      if (over != 0u) {
        cnt = __ffs(over) - 1;
        past = true;
      }
    }
    if (Count) tally[0] += cnt;
    for (int j = 0; j < cnt; j += ILP) {
      int v[ILP];
      T nd[ILP], old[ILP];
#pragma unroll
      for (int q = 0; q < ILP; q++) {
        v[q] = __shfl_sync(0xffffffffu, tv, (j + q) & 31);
        nd[q] = du + __shfl_sync(0xffffffffu, tw, (j + q) & 31);
      }
#pragma unroll
      for (int q = 0; q < ILP; q++) {
        old[q] = (active && j + q < cnt && (!Cut || nd[q] <= cut)) ? __ldcg(vm + (size_t)v[q] * w + lane) : T(0);
      }
#pragma unroll
      for (int q = 0; q < ILP; q++) {
        bool improved = false;
        const bool tries = active && j + q < cnt && (!Cut || nd[q] <= cut) && nd[q] < old[q];
        if (tries) improved = atomicMinNonNegative(vm + (size_t)v[q] * w + lane, nd[q]);
        if (Count) tally[1] += __popc(__ballot_sync(0xffffffffu, tries));
        const u32 bal = __ballot_sync(0xffffffffu, improved);
        if (Count) tally[2] += __popc(bal);
        if (bal != 0u) {
          any = true;
          marks.warp(v[q], bal, improved, nd[q], lane);
        }
      }
    }
    if (Cut && past) break;
  }
  return any;
}

// relaxSparse relaxes the arcs of u for the few lanes set in m (k of them,
// 2k ≤ 32): the warp covers k sources × ⌊32/k⌋ arcs per step, lane l taking
// the (l mod k)-th source of m and arc l div k of the step (any k ≤ 32 is
// correct; past 16 a step covers one arc), so each lane does
// useful work where relaxArcs would leave 32 − k lanes idle on every arc.
// Arcs are read by k lanes at once (one broadcast load); a lane that
// improves a distance marks its own bit (marks.lane). Two steps are in
// flight at a time. Returns, warp-uniform, whether anything improved. With Cut, as
// in relaxArcs, nothing is relaxed past cut and the walk of the arcs, in
// rising weight, ends at the first step whose lightest arc takes the
// lightest lane past cut.
template <typename T, bool Count, bool Cut, class Marks>
__device__ __forceinline__ bool relaxSparse(const Graph<T>& g, int u, u32 m, int w, T* vm, Marks& marks, int lane,
                                            T cut, u64* tally) {
  const int k = __popc(m);
  const int per = 32 / k;
  const int slot = lane % k, off = lane / k;
  u32 rest = m;
  for (int i = 0; i < slot; i++) rest &= rest - 1;
  const int src = __ffs(rest) - 1;
  const T mine = ((m >> lane) & 1u) ? __ldcg(vm + (size_t)u * w + lane) : T(0);
  const T du = __shfl_sync(0xffffffffu, mine, src);
  const long long lo = g.offsets[u], hi = g.offsets[u + 1];
  const bool used = off < per;
  const T duMin = Cut ? warpMin(((m >> lane) & 1u) ? mine : DistTraits<T>::inf()) : T(0);
  bool any = false;
  for (long long e0 = lo; e0 < hi; e0 += 2 * per) {
    if (Cut && duMin + g.weights[e0] > cut) break;  // every lane reads the one weight
    long long e[2];
    int v[2];
    T nd[2], old[2];
#pragma unroll
    for (int q = 0; q < 2; q++) {
      e[q] = e0 + q * per + off;
      v[q] = 0;
      nd[q] = T(0);
      if (used && e[q] < hi) {
        v[q] = g.targets[e[q]];
        nd[q] = du + g.weights[e[q]];
      }
    }
#pragma unroll
    for (int q = 0; q < 2; q++) {
      old[q] = (used && e[q] < hi && (!Cut || nd[q] <= cut)) ? __ldcg(vm + (size_t)v[q] * w + src) : T(0);
    }
#pragma unroll
    for (int q = 0; q < 2; q++) {
      const bool tries = used && e[q] < hi && (!Cut || nd[q] <= cut) && nd[q] < old[q];
      bool improved = false;
      if (tries) {
        improved = atomicMinNonNegative(vm + (size_t)v[q] * w + src, nd[q]);
        if (improved) marks.lane(v[q], 1u << src, nd[q]);
      }
      any |= improved;
      if (Count) {
        tally[0] += min((long long)per, max(0LL, hi - (e0 + q * per)));
        tally[1] += __popc(__ballot_sync(0xffffffffu, tries));
        tally[2] += __popc(__ballot_sync(0xffffffffu, improved));
      }
    }
  }
  return __any_sync(0xffffffffu, any);
}

// forBusyWords is the scan every round shares: the warps of the grid
// share out the 32-vertex chunks of all groups (chunk c of the block is
// group c / chunksPerGroup), lane j of a warp checking the summary bit of
// chunk base + j·warps + warp so that neighbouring chunks, which tend to be
// busy together, go to different warps. A warp consumes the words of its
// chunks in in (group grp's n words at in + grp·n; summaries, one bit per
// chunk, at inSum + grp·⌈n/1024⌉), clearing them and the chunk's summary
// bit, and calls body(grp, u, m, w), warp-uniform, for every vertex u with
// a non-zero word m (w: the group's width); chunk() once per busy chunk.
// Before that each lane asks takes(grp, u, m) for its own vertex's
// non-zero word; a word it takes goes to the warp's 32 slots of owned
// (OwnItem, in shared memory; null where takes never does), and whenever
// the slots fill, and at the end, each lane expands one of them alone:
// ownExpand(grp, u, m, w), divergent (no warp collectives). The slots
// gather the light words of many chunks and groups, so that every lane
// of the warp has one, where a chunk of a thin frontier has a few.
// No other thread may write in or inSum during the launch: the words are
// cleared with plain stores.
struct OwnItem {
  int grp, u;
  u32 m;
};

template <class Chunk, class Takes, class OwnExpand, class Body>
__device__ __forceinline__ void forBusyWords(int n, int numSources, u32* in, u32* inSum, Chunk chunk, Takes takes,
                                             OwnExpand ownExpand, OwnItem* owned, Body body) {
  const int sumWords = (n + 1023) >> 10;
  const int chunksPerGroup = (n + 31) >> 5;
  const int groups = (numSources + 31) >> 5;
  const long long total = (long long)groups * chunksPerGroup;
  const int lane = threadIdx.x & 31;
  const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  int held = 0;  // slots of owned in use (warp-uniform)
  auto drain = [&] {
    __syncwarp();
    if (lane < held) {
      const OwnItem it = owned[lane];
      ownExpand(it.grp, it.u, it.m, min(32, numSources - (it.grp << 5)));
    }
    __syncwarp();
    held = 0;
  };
  for (long long base = 0; base < total; base += 32 * warps) {
    const long long c = base + lane * warps + warp;
    bool busy = false;
    if (c < total) {
      const int grp = (int)(c / chunksPerGroup), lc = (int)(c % chunksPerGroup);
      busy = (__ldcg(inSum + (size_t)grp * sumWords + (lc >> 5)) >> (lc & 31)) & 1u;
    }
    u32 lanes = __ballot_sync(0xffffffffu, busy);
    while (lanes != 0u) {
      const int j = __ffs(lanes) - 1;
      lanes &= lanes - 1;
      chunk();
      const long long cj = base + j * warps + warp;
      const int grp = (int)(cj / chunksPerGroup), lc = (int)(cj % chunksPerGroup);
      const int w = min(32, numSources - (grp << 5));
      u32* gin = in + (size_t)grp * n;
      if (lane == 0) atomicAnd(inSum + (size_t)grp * sumWords + (lc >> 5), ~(1u << (lc & 31)));
      const int v = (lc << 5) + lane;
      u32 m = 0u;
      if (v < n) {
        m = __ldcg(gin + v);
        if (m != 0u) gin[v] = 0u;
      }
      const bool mine = m != 0u && takes(grp, v, m);
      const u32 mineLanes = __ballot_sync(0xffffffffu, mine);
      if (mineLanes != 0u) {
        if (held + __popc(mineLanes) > 32) drain();
        if (mine) owned[held + __popc(mineLanes & ((1u << lane) - 1u))] = OwnItem{grp, v, m};
        held += __popc(mineLanes);
      }
      u32 verts = __ballot_sync(0xffffffffu, m != 0u && !mine);
      while (verts != 0u) {
        const int k = __ffs(verts) - 1;
        verts &= verts - 1;
        body(grp, (lc << 5) + k, __shfl_sync(0xffffffffu, m, k), w);
      }
    }
  }
  if (held > 0) drain();
}

// expand relaxes the arcs of u for the lanes set in mk (≠ 0) of a group
// of width w whose distances are gvm: through relaxSparse for at most
// sparse lanes, else relaxArcs. Returns, warp-uniform, whether anything
// improved.
template <typename T, bool Count, int ILP, bool Cut, class Marks>
__device__ __forceinline__ bool expand(const Graph<T>& g, int u, u32 mk, int w, T* gvm, Marks& marks, int lane,
                                       int sparse, T cut, u64* tally) {
  if (Count) {
    tally[3]++;
    tally[4] += __popc(mk);
  }
  if (__popc(mk) <= sparse) return relaxSparse<T, Count, Cut>(g, u, mk, w, gvm, marks, lane, cut, tally);
  return relaxArcs<T, Count, ILP, Cut>(g, u, mk, w, gvm, marks, lane, cut, tally);
}

// addTally adds a round's work to counters[8·round ..] (the counting
// variants; lane 0 of each warp).
__device__ __forceinline__ void addTally(u64* counters, long long round, const u64* tally) {
  if ((threadIdx.x & 31) != 0 || round >= PATHCTL_BATCHED_ROUNDS) return;
  u64* c = counters + 8 * (size_t)round;
#pragma unroll
  for (int i = 0; i < 6; i++)
    if (tally[i] != 0) atomicAdd(c + i, tally[i]);
}

// batched_round_T is one round over every group of the block: the warps of
// the grid share out the 32-vertex chunks of all groups (chunk c of the
// block is group c / chunksPerGroup), lane j of a warp checking the summary
// bit of chunk base + j·warps + warp so that neighbouring chunks, which tend
// to be busy together, go to different warps. A warp consumes the cur words
// of its chunks (clearing them and the chunk's summary bit) and relaxes the
// arcs of every vertex with a non-zero word; every improvement sets a bit in
// next. A lane's vertex whose distance is above the round's threshold is
// not expanded yet but waits in the frontier (its bits go to next). The
// host raises the threshold by a fixed step every round (step·round), a
// soft version of delta-stepping's buckets: on high-diameter graphs,
// expanding vertices roughly in order of distance saves many of the
// re-expansions of plain label correcting (gpu/batched.go says when the Go
// side uses it; the threshold is +Inf otherwise). An expansion of at most
// sparse lanes goes through relaxSparse, a wider one through relaxArcs.
// *lastChange becomes round when anything improved or waited: the host
// stops once a round changed nothing.
//
// With a cutoff (Cut: the batched_cut* kernels; cut, passed as the bits
// of a distance of type T) no relaxation past it is made, so every
// distance above it stays unreachable and the frontier dies out at the
// cutoff's radius. The distances at most cut are exact all the same: with
// non-negative weights every vertex on a shortest path to such a vertex is
// itself within the cutoff. The arcs of every vertex must then come in
// rising weight (the Go side uploads such a copy of the arcs, gpu/
// batched.go's arcsByWeight), so that an expansion stops walking them at
// the first arc that leads past the cutoff. The rows derived from these
// (batched_derive, batched_mins, batched_seedfill) clip at the same
// cutoff, so a block holds exactly what a full run clipped at the cutoff
// holds. Without Cut, cut is not read.
template <typename T, bool Count, int ILP, bool Cut>
__device__ void batchedRound(const Graph<T>& g, int numSources, T* vm, u32* cur, u32* next, u32* curSum,
                             u32* nextSum, int* lastChange, int round, double threshold, int sparse,
                             u64* counters, T cut) {
  const int n = g.n;
  const int sumWords = (n + 1023) >> 10;
  const int lane = threadIdx.x & 31;
  bool any = false;
  // tally: arcs walked by a warp, lane relaxations that reached the
  // atomic, lane improvements, vertex expansions by a warp, lane
  // expansions, busy chunks; added to counters[8·round ..] at the end by
  // the counting variant (batched_count_*, the benchmarks' instrumentation).
  u64 tally[6] = {0, 0, 0, 0, 0, 0};
  forBusyWords(
      n, numSources, cur, curSum, [&] { if (Count) tally[5]++; }, [](int, int, u32) { return false; },
      [](int, int, u32, int) {}, nullptr, [&](int grp, int u, u32 mk, int w) {
        T* gvm = vm + (size_t)(grp << 5) * n;
        NextMarks<T> marks{next + (size_t)grp * n, nextSum + (size_t)grp * sumWords};
        // Lanes whose distance to u is past the threshold wait: their bits
        // go to next unchanged.
        const bool set = (mk >> lane) & 1u;
        const bool late = set && (double)__ldcg(gvm + (size_t)u * w + lane) > threshold;
        const u32 wait = __ballot_sync(0xffffffffu, late);
        if (wait != 0u) {
          any = true;
          if (lane == 0) setMaskBits(marks.next, marks.nextSum, u, wait);
          mk &= ~wait;
        }
        if (mk != 0u) any |= expand<T, Count, ILP, Cut>(g, u, mk, w, gvm, marks, lane, sparse, cut, tally);
      });
  if (any && lane == 0) *(volatile int*)lastChange = round;
  if (Count) addTally(counters, round, tally);
}

// Near-far rounds (batched_nf*): the schedule of nearest.cu (Davidson et
// al.'s near-far, the one-pile form of delta-stepping) for every group of
// the block under one bound. batchedRound's threshold rises by a fixed
// step every round whether or not the frontier below it has settled, and a
// vertex past it is read and put back in every round until the threshold
// reaches it; here the bound moves only when nothing at most the bound is
// left to expand, and a lane past it waits in a far pile that no round
// reads:
// - Frontier storage (gpu/batched.go, batchedFrontierBytes): the control
//   words (NearFarControl), then four mask arrays of numSources/32 groups ×
//   n words (near frontiers M0, M1 and far piles F0, F1; array i at
//   masks + i·maskStride) and their summaries (at sums + i·sumStride), laid
//   out as batchedRound's cur and next.
// - A round reads M[p] (every lane in it is at most the bound: a lane only
//   enters it so) and expands its lanes; an improvement to at most the
//   bound goes to M[1-p], one past it to the far pile F[f].
// - When a round leaves M[1-p] empty, batched_nfadvance moves the bound to
//   the larger of bound + delta and the smallest distance put in the pile
//   (so a split always finds work while the pile holds any), and the next
//   launch splits the pile: it reads F[f] and sends each lane at most the
//   new bound to M[1-p], each past it to F[1-f]; a lane at most the old
//   bound (below) is dropped: it was improved to its distance while the
//   bound was at least that distance, or moved to a near frontier by an
//   earlier split, so it has been expanded at its distance already.
// - Every launch reads one array and writes two others, so the plain
//   stores of forBusyWords race with nothing. The advance kernel (one
//   thread) flips p after every launch and f after a split, and sets done
//   when a round leaves both the near frontier and the pile empty: the
//   label-correcting fixpoint, exact as batchedRound's. Launches after done
//   return at once, so the host queues them in batches.
// - A round's light words, whose lanes times the vertex's arcs are at
//   most own, are gathered 32 at a time from the warp's chunks and each
//   expanded by one lane alone (expandOwn): on a grid most words hold one
//   or two sources and four arcs, which a warp's expansion would serve
//   with a few of its 32 lanes, one vertex after another. The other words
//   go to the warp (expand). own 0: every word to the warp.
// - Cut: as batchedRound's.
struct NearFarControl {
  double bound;  // lanes at most bound expand
  double below;  // the bound before the last split: lanes at most it were expanded
  u64 minFar;    // bits of the smallest distance put in the pile since the last split
  u64 nearWork;  // 1: this launch put lanes into the next near frontier
  u64 pending;   // 1: this launch put lanes into the pile
  u64 piled;     // 1: the pile holds lanes
  u64 split;     // 1: this launch splits the pile
  u64 p, f;      // the near frontier M[p] this launch reads; the pile F[f]
  u64 done;      // 1: converged; later launches return at once
  u64 rounds;    // launches run
};

// NearFarMarks sends an improvement to at most the bound into the next
// near frontier, one past it into the pile (NextMarks says when warp and
// lane are called), and records what it did in flags.
template <typename T>
struct NearFarMarks {
  u32 *near, *nearSum, *far, *farSum;
  double bound;
  NearFarFlags* flags;
  __device__ __forceinline__ void warp(int v, u32 bal, bool improved, T nd, int lane) {
    const bool late = improved && (double)nd > bound;
    const u32 farBits = __ballot_sync(0xffffffffu, late);
    const u32 nearBits = bal & ~farBits;
    if (lane == 0) {
      if (nearBits != 0u) setMaskBits(near, nearSum, v, nearBits);
      if (farBits != 0u) setMaskBits(far, farSum, v, farBits);
    }
    if (nearBits != 0u) flags->nearWork = true;
    if (late) flags->far((double)nd);
  }
  __device__ __forceinline__ void lane(int v, u32 bit, T nd) {
    if ((double)nd > bound) {
      setMaskBits(far, farSum, v, bit);
      flags->far((double)nd);
    } else {
      setMaskBits(near, nearSum, v, bit);
      flags->nearWork = true;
    }
  }
};

// expandOwn relaxes, on this lane alone, the arcs of u for the sources set
// in m (of a group of width w whose distances are gvm), marking each
// improvement through marks.lane; with Cut, over arcs in rising weight,
// up to the first that leads past cut.
template <typename T, bool Count, bool Cut, class Marks>
__device__ __forceinline__ void expandOwn(const Graph<T>& g, int u, u32 m, int w, T* gvm, Marks& marks, T cut,
                                          u64* tally) {
  const long long lo = g.offsets[u], hi = g.offsets[u + 1];
  if (Count) {
    tally[3]++;
    tally[4] += __popc(m);
  }
  for (u32 rest = m; rest != 0u; rest &= rest - 1) {
    const int s = __ffs(rest) - 1;
    const T du = __ldcg(gvm + (size_t)u * w + s);
    for (long long e = lo; e < hi; e++) {
      const T nd = du + g.weights[e];
      if (Cut && nd > cut) break;
      const int v = g.targets[e];
      T* cell = gvm + (size_t)v * w + s;
      if (Count) tally[0]++;
      if (!(nd < __ldcg(cell))) continue;
      if (Count) tally[1]++;
      if (atomicMinNonNegative(cell, nd)) {
        if (Count) tally[2]++;
        marks.lane(v, 1u << s, nd);
      }
    }
  }
}

template <typename T, bool Count, int ILP, bool Cut>
__device__ void nearFarRound(const Graph<T>& g, int numSources, T* vm, u32* masks, u32* sums, long long maskStride,
                             long long sumStride, NearFarControl* ctl, int sparse, int own, u64* counters, T cut) {
  if (loadVolatile(&ctl->done)) return;  // the same for every thread of the launch
  const int n = g.n;
  const int sumWords = (n + 1023) >> 10;
  const int lane = threadIdx.x & 31;
  const bool split = ctl->split != 0;
  const int p = (int)ctl->p, f = (int)ctl->f;
  const double bound = ctl->bound, below = ctl->below;
  const long long round = (long long)ctl->rounds + 1;
  // array i of the masks and of the summaries
  auto words = [&](int i) { return masks + (size_t)i * maskStride; };
  auto sumsOf = [&](int i) { return sums + (size_t)i * sumStride; };
  const int in = split ? 2 + f : p, near = 1 - p, far = split ? 3 - f : 2 + f;
  NearFarFlags flags;
  u64 tally[6] = {0, 0, 0, 0, 0, 0};     // batchedRound's, warp-uniform
  u64 ownTally[6] = {0, 0, 0, 0, 0, 0};  // the same of this lane's expandOwn
  auto marksOf = [&](int grp) {
    return NearFarMarks<T>{words(near) + (size_t)grp * n, sumsOf(near) + (size_t)grp * sumWords,
                           words(far) + (size_t)grp * n, sumsOf(far) + (size_t)grp * sumWords, bound, &flags};
  };
  __shared__ OwnItem owned[PATHCTL_WARPS][32];
  forBusyWords(
      n, numSources, words(in), sumsOf(in), [&] { if (Count) tally[5]++; },
      [&](int, int u, u32 m) {
        return !split && own > 0 && (long long)__popc(m) * (g.offsets[u + 1] - g.offsets[u]) <= own;
      },
      [&](int grp, int u, u32 m, int w) {
        NearFarMarks<T> marks = marksOf(grp);
        expandOwn<T, Count, Cut>(g, u, m, w, vm + (size_t)(grp << 5) * n, marks, cut, ownTally);
      },
      owned[threadIdx.x >> 5], [&](int grp, int u, u32 mk, int w) {
        T* gvm = vm + (size_t)(grp << 5) * n;
        NearFarMarks<T> marks = marksOf(grp);
        if (!split) {
          expand<T, Count, ILP, Cut>(g, u, mk, w, gvm, marks, lane, sparse, cut, tally);
          return;
        }
        const bool set = (mk >> lane) & 1u;
        const double d = set ? (double)__ldcg(gvm + (size_t)u * w + lane) : 0.0;
        const bool toNear = set && d > below && d <= bound, toFar = set && d > bound;
        const u32 nearBits = __ballot_sync(0xffffffffu, toNear), farBits = __ballot_sync(0xffffffffu, toFar);
        if (lane == 0) {
          if (nearBits != 0u) setMaskBits(marks.near, marks.nearSum, u, nearBits);
          if (farBits != 0u) setMaskBits(marks.far, marks.farSum, u, farBits);
        }
        if (nearBits != 0u) flags.nearWork = true;
        if (toFar) flags.far(d);
      });
  flags.report(ctl);
  if (Count) {
#pragma unroll
    for (int i = 0; i < 6; i++) {
      u64 x = ownTally[i];
      for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
      tally[i] += x;
    }
    addTally(counters, round, tally);
  }
}

}  // namespace batched
}  // namespace pathctl

// batched_round_T is one round; batched_cutround_T the same under the
// cutoff cutBits, over arcs in rising weight within each vertex's
// (batchedRound). Each entry point is
// spelled out: gpu/kernels_gen.go's generator expands one level of macros.
#define PATHCTL_BATCHED(SUFFIX, T)                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_round_##SUFFIX(            \
      const long long* offsets, const int* targets, const T* weights, int n, int numSources, T* vm, \
      u32* cur, u32* next, u32* curSum, u32* nextSum, int* lastChange, int round, double threshold, \
      int sparse, u64* counters, u64 cutBits) {                                                    \
    pathctl::Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                              \
    pathctl::batched::batchedRound<T, false, 4, false>(g, numSources, vm, cur, next, curSum, nextSum,\
                                                 lastChange, round, threshold, sparse, counters,   \
                                                 pathctl::distFromBits<T>(cutBits));               \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_cutround_##SUFFIX(         \
      const long long* offsets, const int* targets, const T* weights, int n, int numSources, T* vm, \
      u32* cur, u32* next, u32* curSum, u32* nextSum, int* lastChange, int round, double threshold, \
      int sparse, u64* counters, u64 cutBits) {                                                    \
    pathctl::Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                              \
    pathctl::batched::batchedRound<T, false, 4, true>(g, numSources, vm, cur, next, curSum, nextSum,\
                                                 lastChange, round, threshold, sparse, counters,   \
                                                 pathctl::distFromBits<T>(cutBits));               \
  }

PATHCTL_BATCHED(i32, int)
PATHCTL_BATCHED(i64, long long)
PATHCTL_BATCHED(f32, float)
PATHCTL_BATCHED(f64, double)

// batched_nfround_T is one near-far round or split (nearFarRound);
// batched_nfcutround_T the same under the cutoff cutBits, over arcs in
// rising weight within each vertex's. batched_nfadvance follows each.
#define PATHCTL_BATCHED_NF(SUFFIX, T)                                                              \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_nfround_##SUFFIX(          \
      const long long* offsets, const int* targets, const T* weights, int n, int numSources, T* vm, \
      u32* masks, u32* sums, long long maskStride, long long sumStride, u64* control, int sparse,   \
      int own, u64* counters, u64 cutBits) {                                                       \
    pathctl::Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                              \
    pathctl::batched::nearFarRound<T, false, 4, false>(g, numSources, vm, masks, sums, maskStride, \
        sumStride, (pathctl::batched::NearFarControl*)control, sparse, own, counters,              \
        pathctl::distFromBits<T>(cutBits));                                                        \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_nfcutround_##SUFFIX(       \
      const long long* offsets, const int* targets, const T* weights, int n, int numSources, T* vm, \
      u32* masks, u32* sums, long long maskStride, long long sumStride, u64* control, int sparse,   \
      int own, u64* counters, u64 cutBits) {                                                       \
    pathctl::Graph<T> g = {offsets, targets, weights, nullptr, n, 0};                              \
    pathctl::batched::nearFarRound<T, false, 4, true>(g, numSources, vm, masks, sums, maskStride,  \
        sumStride, (pathctl::batched::NearFarControl*)control, sparse, own, counters,              \
        pathctl::distFromBits<T>(cutBits));                                                        \
  }

PATHCTL_BATCHED_NF(i32, int)
PATHCTL_BATCHED_NF(i64, long long)
PATHCTL_BATCHED_NF(f32, float)
PATHCTL_BATCHED_NF(f64, double)

// batched_nfstart resets the near-far control words before a phase (or a
// slice of its groups): the bound at bound (+Inf: no far pile, plain label
// correcting), nothing below it expanded, M0 the near frontier (the seeds'),
// F0 the pile.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_nfstart(u64* control, double bound) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  pathctl::batched::NearFarControl* ctl = (pathctl::batched::NearFarControl*)control;
  ctl->bound = bound;
  ctl->below = -__longlong_as_double(0x7ff0000000000000LL);  // -Inf
  ctl->minFar = 0x7ff0000000000000ull;                        // +Inf
  ctl->nearWork = ctl->pending = ctl->piled = ctl->split = 0;
  ctl->p = ctl->f = 0;
  ctl->done = 0;
  ctl->rounds = 0;
}

// batched_nfadvance follows every near-far launch (one thread; nearFarRound
// says what the words mean): it flips the near frontier, and the pile after
// a split; while the launch put lanes into the near frontier the next is a
// round, else, while the pile holds lanes, a split at the bound
// max(bound + delta, the smallest distance piled), else the run is done.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_nfadvance(u64* control, double delta) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  pathctl::batched::NearFarControl* ctl = (pathctl::batched::NearFarControl*)control;
  if (ctl->done) return;
  ctl->rounds++;
  if (ctl->split) {
    ctl->f ^= 1;
    ctl->piled = ctl->pending;
  } else if (ctl->pending) {
    ctl->piled = 1;
  }
  ctl->p ^= 1;
  ctl->split = 0;
  if (!ctl->nearWork) {
    if (ctl->piled) {
      ctl->split = 1;
      ctl->below = ctl->bound;
      ctl->bound = fmax(ctl->bound + delta, __longlong_as_double((long long)ctl->minFar));
      ctl->minFar = 0x7ff0000000000000ull;
      ctl->piled = 0;
    } else {
      ctl->done = 1;
    }
  }
  ctl->nearWork = 0;
  ctl->pending = 0;
}

// batched_fill_E sets count elements of p to value (infinity before a run).
#define PATHCTL_BATCHED_FILL(SUFFIX, E)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_fill_##SUFFIX(             \
      E* p, long long count, E value) {                                                            \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;                \
         i += (long long)gridDim.x * blockDim.x)                                                   \
      p[i] = value;                                                                                \
  }

PATHCTL_BATCHED_FILL(b32, unsigned int)
PATHCTL_BATCHED_FILL(b64, unsigned long long)

// batched_seed_E puts every source of the block at distance 0 (all-zero
// bits in every type) and into the first round's frontier.
#define PATHCTL_BATCHED_SEED(SUFFIX, E)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_seed_##SUFFIX(             \
      const int* sources, int numSources, int n, E* vm, u32* cur, u32* curSum) {                   \
    const int i = blockIdx.x * blockDim.x + threadIdx.x;                                           \
    if (i >= numSources) return;                                                                   \
    const int grp = i >> 5, lane = i & 31, s = sources[i];                                         \
    const int w = min(32, numSources - (grp << 5));                                                \
    vm[(size_t)(grp << 5) * n + (size_t)s * w + lane] = 0;                                         \
    atomicOr(cur + (size_t)grp * n + s, 1u << lane);                                               \
    atomicOr(curSum + (size_t)grp * ((n + 1023) >> 10) + (s >> 10), 1u << ((s >> 5) & 31));        \
  }

PATHCTL_BATCHED_SEED(b32, unsigned int)
PATHCTL_BATCHED_SEED(b64, unsigned long long)

namespace pathctl {
namespace batched {

// forGroupTiles walks the 32×32 tiles of a group-major block (tile t: group
// t / tilesV, vertices 32·(t mod tilesV) onwards) over the grid's thread
// blocks: fill(grp, v0, w) writes the shared tile, then, after a barrier,
// drain(grp, v0, w) reads it; a barrier before the next fill keeps the
// tile until every thread has drained it.
template <typename Fill, typename Drain>
__device__ __forceinline__ void forGroupTiles(int n, int numSources, Fill fill, Drain drain) {
  const int tilesV = (n + 31) >> 5;
  const long long tiles = (long long)tilesV * ((numSources + 31) >> 5);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int grp = (int)(t / tilesV);
    const int v0 = (int)(t % tilesV) << 5;
    const int w = min(32, numSources - (grp << 5));
    __syncthreads();
    fill(grp, v0, w);
    __syncthreads();
    drain(grp, v0, w);
  }
}

// batched_transpose_E copies the group-major distances of batched_* into
// the row-major block (row i = source i, n elements; rows[i] where rows is
// set), through 32×32 tiles in shared memory so that both the reads and the
// writes are coalesced.
template <typename E>
__device__ void batchedTranspose(const E* vm, int n, int numSources, const int* rows, E* dist) {
  __shared__ E tile[32][33];
  const int x = threadIdx.x & 31, y = threadIdx.x >> 5;
  forGroupTiles(
      n, numSources,
      [&](int grp, int v0, int w) {
        const E* src = vm + (size_t)(grp << 5) * n;
        for (int r = y; r < 32; r += PATHCTL_WARPS) {
          const int v = v0 + r;
          if (v < n && x < w) tile[r][x] = src[(size_t)v * w + x];
        }
      },
      [&](int grp, int v0, int w) {
        for (int r = y; r < w; r += PATHCTL_WARPS) {
          const int v = v0 + x;
          const int i = (grp << 5) + r;
          if (v < n) dist[(size_t)(rows != nullptr ? rows[i] : i) * n + v] = tile[x][r];
        }
      });
}

}  // namespace batched
}  // namespace pathctl

#define PATHCTL_BATCHED_TRANSPOSE(SUFFIX, E)                                                       \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_transpose_##SUFFIX(        \
      const E* vm, int n, int numSources, const int* rows, E* dist) {                              \
    pathctl::batched::batchedTranspose<E>(vm, n, numSources, rows, dist);                          \
  }

namespace pathctl {
namespace batched {

// forRowElements runs body(item, t) for this thread's elements e = item × n
// + t < count × n of a grid-stride loop, in its order, stepping the item
// and t by the stride's quotient and remainder by n: one 64-bit division
// a thread instead of two an element.
template <class Body>
__device__ __forceinline__ void forRowElements(long long count, int n, Body body) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long q = stride / n;
  const int rem = (int)(stride - q * n);
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long item = e / n;
  int t = (int)(e - item * n);
  while (item < count) {
    body(item, t);
    item += q;
    t += rem;
    if (t >= n) {
      t -= n;
      item++;
    }
  }
}

// derive fills the rows of count leaf derivations of batched_derive_T.
template <typename T>
__device__ void derive(T* dist, int n, const long long* items, long long count, const T* weights, T cut) {
  forRowElements(count, n, [&](long long item, int t) {
    const long long* it = items + 4 * item;
    const T d = dist[(size_t)it[1] * n + t];
    T out = d;
    if (t == (int)it[2]) {
      out = (T)0;
    } else if (d != DistTraits<T>::inf()) {
      out = clipAbove<T>(d + weights[it[3]], cut);
    }
    dist[(size_t)it[0] * n + t] = out;
  });
}

}  // namespace batched
}  // namespace pathctl

// batched_derive_T fills the rows of leaves left out of the kernel
// (gpu/batched.go, batchedLeaves): items holds count derivations of four
// words (destination row, source row, the leaf, the index of its arc); row
// dst becomes, for every vertex t, 0 at t = leaf, unreachable where the
// parent's row is, else the parent's distance plus the arc's weight. A
// derivation in place (dst = src) reads and writes each element once. A
// distance above cutBits (the cutoff's bits; infinity without one) becomes
// unreachable.
#define PATHCTL_BATCHED_DERIVE(SUFFIX, T)                                                          \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_derive_##SUFFIX(           \
      T* dist, int n, const long long* items, long long count, const T* weights, u64 cutBits) {    \
    pathctl::batched::derive<T>(dist, n, items, count, weights, pathctl::distFromBits<T>(cutBits)); \
  }

PATHCTL_BATCHED_DERIVE(i32, int)
PATHCTL_BATCHED_DERIVE(i64, long long)
PATHCTL_BATCHED_DERIVE(f32, float)
PATHCTL_BATCHED_DERIVE(f64, double)

namespace pathctl {
namespace batched {

// Wide is the type in which the minimums and the seeds add a weight to a
// distance: 64-bit for integers, so that the sum cannot wrap before the
// minimum, and the type itself for floats, which the Go side plans these
// for only where every sum is exact (plan.ExactSumsOf).
template <typename T> struct Wide { typedef long long type; };
template <> struct Wide<float> { typedef float type; };
template <> struct Wide<double> { typedef double type; };

// mins fills the rows of count minimums of batched_mins_T.
template <typename T>
__device__ void mins(T* dist, int n, const long long* items, long long count, const long long* arcs,
                     const T* weights, T cut) {
  typedef typename Wide<T>::type W;
  const T inf = DistTraits<T>::inf();
  forRowElements(count, n, [&](long long item, int t) {
    const long long* it = items + 4 * item;
    W best = (W)inf;
    for (long long j = it[2], end = it[2] + it[3]; j < end; j++) {
      const T d = dist[(size_t)arcs[2 * j] * n + t];
      if (d != inf) best = min(best, (W)d + (W)weights[arcs[2 * j + 1]]);
    }
    dist[(size_t)it[0] * n + t] = t == (int)it[1] ? (T)0 : clipAbove<T>((T)min(best, (W)inf), cut);
  });
}

}  // namespace batched
}  // namespace pathctl

// batched_mins_T fills the rows of sources left out of the kernel because
// every vertex their arcs reach has a row of its own in the block
// (gpu/batched.go, batchedMins): with non-negative weights every path from
// s leaves through one of its arcs, so d(s, t) = min over arcs (s, p, w) of
// w + d(p, t) for t ≠ s. items holds count entries of four words
// (destination row, the source s, the first of its arcs in arcs, their
// number); arcs holds two words per arc (the row of p, the index of the
// arc's weight). The sum is taken in Wide<T>: 64 bits for integers, so
// w + d(p, t) cannot wrap before the minimum, and the float type itself,
// exact where the Go side plans minimums over floats; unreachable stays
// unreachable, and so does a minimum above cutBits (the cutoff's bits;
// infinity without one).
#define PATHCTL_BATCHED_MINS(SUFFIX, T)                                                            \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_mins_##SUFFIX(             \
      T* dist, int n, const long long* items, long long count, const long long* arcs,              \
      const T* weights, u64 cutBits) {                                                             \
    pathctl::batched::mins<T>(dist, n, items, count, arcs, weights, pathctl::distFromBits<T>(cutBits)); \
  }

PATHCTL_BATCHED_MINS(i32, int)
PATHCTL_BATCHED_MINS(i64, long long)
PATHCTL_BATCHED_MINS(f32, float)
PATHCTL_BATCHED_MINS(f64, double)

// batched_seedfill_T starts the working distances of a later phase of the
// kernel from rows the earlier phases computed (gpu/batched.go, batchedSeeds):
// source i of the phase (group i / 32, lane i mod 32) starts at vertex v
// from min over its arcs (s, p, w) into the earlier phases of w + d(p, v), the
// length of a real path, or unreachable without such arcs; items holds
// four words per source (unused, the source, the first of its arcs in arcs,
// their number), arcs two words per arc (the row of p, the index of the
// arc's weight). Every arc out of a vertex other than s then already
// satisfies d(v) ≤ d(u) + w, so the phase starts from s alone and only
// expands where a path beats the seeds. A 32×32 tile in shared memory lets
// the row reads run along v and the group-major writes along the lanes.
// With a cutoff (cut; infinity without one) a seed above it starts
// unreachable: wherever the round may relax an arc (u, v, w) with u ≠ s,
// d(u) + w at most the cutoff, the seed of v is already at most d(u) + w,
// so the phase still converges to the full run's distances clipped at the
// cutoff.
namespace pathctl {
namespace batched {

template <typename T>
__device__ void batchedSeedfill(const T* dist, int n, int numSources, const long long* items, const long long* arcs,
                                const T* weights, T* vm, T cut) {
  typedef typename Wide<T>::type W;
  __shared__ T tile[32][33];
  const T inf = pathctl::DistTraits<T>::inf();
  const int x = threadIdx.x & 31, y = threadIdx.x >> 5;
  forGroupTiles(
      n, numSources,
      [&](int grp, int v0, int w) {
        for (int r = y; r < w; r += PATHCTL_WARPS) {
          const long long* it = items + 4 * (size_t)((grp << 5) + r);
          const int v = v0 + x;
          W best = (W)inf;
          if (v < n) {
            for (long long j = it[2], end = it[2] + it[3]; j < end; j++) {
              const T d = dist[(size_t)arcs[2 * j] * n + v];
              if (d != inf) best = min(best, (W)d + (W)weights[arcs[2 * j + 1]]);
            }
          }
          tile[r][x] = clipAbove<T>((T)min(best, (W)inf), cut);
        }
      },
      [&](int grp, int v0, int w) {
        T* out = vm + (size_t)(grp << 5) * n;
        for (int r = y; r < 32; r += PATHCTL_WARPS) {
          const int v = v0 + r;
          if (v < n && x < w) out[(size_t)v * w + x] = tile[x][r];
        }
      });
}

}  // namespace batched
}  // namespace pathctl

#define PATHCTL_BATCHED_SEEDFILL(SUFFIX, T)                                                        \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) batched_seedfill_##SUFFIX(         \
      const T* dist, int n, int numSources, const long long* items, const long long* arcs,         \
      const T* weights, T* vm, u64 cutBits) {                                                      \
    pathctl::batched::batchedSeedfill<T>(dist, n, numSources, items, arcs, weights, vm,            \
                                         pathctl::distFromBits<T>(cutBits));                       \
  }

PATHCTL_BATCHED_SEEDFILL(i32, int)
PATHCTL_BATCHED_SEEDFILL(i64, long long)
PATHCTL_BATCHED_SEEDFILL(f32, float)
PATHCTL_BATCHED_SEEDFILL(f64, double)

PATHCTL_BATCHED_TRANSPOSE(b32, unsigned int)
PATHCTL_BATCHED_TRANSPOSE(b64, unsigned long long)
