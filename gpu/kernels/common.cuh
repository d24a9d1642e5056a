// common.cuh: what every pathctl kernel shares.
//
// - Graph: the CSR as the Go side uploads it (int64 offsets, int32 targets,
//   weights of the distance type) plus, for the edge kernel, the source of
//   every arc.
// - DistTraits<T>: the "unreachable" value of each distance type, equal to
//   graph.Infinity on the Go side (MaxInt32, MaxInt64, +Inf); distFromBits
//   and clipAbove read and apply a cutoff passed as a distance's bits.
// - Atomic minimum on distances. Integers use the hardware atomicMin (int64
//   through `long long`, sm_35+). Non-negative floats order like their bit
//   patterns read as signed integers, so they use the integer atomicMin too;
//   where a distance may be negative (bellman-ford) floats use a CAS loop.
// - Packed (distance, predecessor) cells for 32-bit distances: the distance
//   is mapped to an order-preserving unsigned key in the high word and the
//   predecessor fills the low word, so one 64-bit atomic writes both.
//
// - The loop every per-source kernel shares (Gunrock's "an algorithm is a
//   relax step and a loop to convergence"): forEachSource gives each thread
//   block its sources (seed 000's layout: blockIdx strides over the sources
//   of the block, threadIdx over the vertices or arcs), and untilStable
//   repeats a round, the algorithm's relax and fold functors, until no
//   thread of the block changed anything. Rows of the per-source buffers are
//   n elements long, row i belonging to sources[i]. The block-wide "changed"
//   flag of the seeds is the hardware vote __syncthreads_or, which also
//   avoids the seeds' reset race on a shared flag.
//
// Names: the kernels are extern "C" at file scope (the Go side looks them
// up by name, gpu/kernels_gen.go); everything else is in namespace pathctl,
// and each .cu file's own helpers in a namespace named after the file, since
// build.sh compiles every .cu as one translation unit.
#pragma once

// PATHCTL_THREADS is the block size of every kernel (__launch_bounds__) and
// of every launch: the Go side's threadsPerBlock is generated from this line.
#define PATHCTL_THREADS 256

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

namespace pathctl {

template <typename T>
struct Graph {
  const long long* offsets;  // n+1 arc offsets
  const int* targets;        // m arc targets
  const T* weights;          // m weights; unused by hop-count kernels
  const int* arcSources;     // m arc sources (edge kernel only), else null
  int n;
  long long m;
};

template <typename T> struct DistTraits;
template <> struct DistTraits<int> {
  static __device__ __forceinline__ int inf() { return 0x7fffffff; }
};
template <> struct DistTraits<long long> {
  static __device__ __forceinline__ long long inf() { return 0x7fffffffffffffffLL; }
};
template <> struct DistTraits<float> {
  static __device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }
};
template <> struct DistTraits<double> {
  static __device__ __forceinline__ double inf() { return __longlong_as_double(0x7ff0000000000000LL); }
};

// distFromBits reads a distance of type T from the bits the Go side passes
// in a 64-bit word (the low word for 32-bit types): how a cutoff travels.
template <typename T> __device__ __forceinline__ T distFromBits(u64 bits);
template <> __device__ __forceinline__ int distFromBits<int>(u64 bits) { return (int)(u32)bits; }
template <> __device__ __forceinline__ long long distFromBits<long long>(u64 bits) { return (long long)bits; }
template <> __device__ __forceinline__ float distFromBits<float>(u64 bits) { return __int_as_float((int)(u32)bits); }
template <> __device__ __forceinline__ double distFromBits<double>(u64 bits) {
  return __longlong_as_double((long long)bits);
}

// clipAbove is d, or unreachable where d is above cut (a cutoff; the type's
// infinity clips nothing).
template <typename T>
__device__ __forceinline__ T clipAbove(T d, T cut) {
  return d > cut ? DistTraits<T>::inf() : d;
}

template <typename T>
__device__ __forceinline__ T loadVolatile(const T* p) {
  return *(const volatile T*)p;
}

// atomicMinNonNegative lowers *p to v and reports whether it did; both must be
// non-negative (or +Inf) for the float forms.
__device__ __forceinline__ bool atomicMinNonNegative(int* p, int v) { return atomicMin(p, v) > v; }
__device__ __forceinline__ bool atomicMinNonNegative(long long* p, long long v) {
  return atomicMin(p, v) > v;
}
__device__ __forceinline__ bool atomicMinNonNegative(float* p, float v) {
  return __int_as_float(atomicMin((int*)p, __float_as_int(v))) > v;
}
__device__ __forceinline__ bool atomicMinNonNegative(double* p, double v) {
  return __longlong_as_double(atomicMin((long long*)p, __double_as_longlong(v))) > v;
}

// atomicMinSigned lowers *p to v for values of any sign.
__device__ __forceinline__ bool atomicMinSigned(int* p, int v) { return atomicMin(p, v) > v; }
__device__ __forceinline__ bool atomicMinSigned(long long* p, long long v) { return atomicMin(p, v) > v; }
__device__ __forceinline__ bool atomicMinSigned(float* p, float v) {
  int* a = (int*)p;
  int old = loadVolatile(a);
  while (__int_as_float(old) > v) {
    int prev = atomicCAS(a, old, __float_as_int(v));
    if (prev == old) return true;
    old = prev;
  }
  return false;
}
__device__ __forceinline__ bool atomicMinSigned(double* p, double v) {
  unsigned long long* a = (unsigned long long*)p;
  unsigned long long old = loadVolatile(a);
  while (__longlong_as_double((long long)old) > v) {
    unsigned long long prev = atomicCAS(a, old, (unsigned long long)__double_as_longlong(v));
    if (prev == old) return true;
    old = prev;
  }
  return false;
}

// Order-preserving keys of 32-bit distances: a < b iff key(a) < key(b).
__device__ __forceinline__ u32 orderKey(int d) { return (u32)d ^ 0x80000000u; }
__device__ __forceinline__ u32 orderKey(float d) {
  u32 b = __float_as_uint(d);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
template <typename T> __device__ __forceinline__ T fromOrderKey(u32 k);
template <> __device__ __forceinline__ int fromOrderKey<int>(u32 k) { return (int)(k ^ 0x80000000u); }
template <> __device__ __forceinline__ float fromOrderKey<float>(u32 k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// kNoPred is the predecessor of the source and of unreachable vertices in a
// packed cell; the Go side sees -1.
#define PATHCTL_NO_PRED 0xffffffffu

__device__ __forceinline__ u64 packCell(u32 key, u32 pred) { return ((u64)key << 32) | pred; }

// rowOf returns row i of a per-source buffer of n elements per row.
template <typename T>
__device__ __forceinline__ T* rowOf(T* base, int i, int n) {
  return base + (size_t)i * (size_t)n;
}

// forOwnVertices runs f(v) for the vertices v < n of this thread (threadIdx
// strides over them): the shape of every init, fold and finish loop.
template <class F>
__device__ __forceinline__ void forOwnVertices(int n, F f) {
  for (int v = threadIdx.x; v < n; v += blockDim.x) f(v);
}

// untilStable runs round() until it returns 0 on every thread of the block,
// or until stop(), asked after each round that changed something, holds;
// it reports whether stop ended it. round is one round of the algorithm,
// its relax (and fold) functors over this thread's share of the work, and
// returns whether this thread changed anything; the vote is also the
// barrier between rounds.
template <class Round, class Stop>
__device__ __forceinline__ bool untilStable(Round round, Stop stop) {
  for (;;) {
    if (!__syncthreads_or(round())) return false;
    if (stop()) return true;
  }
}

template <class Round>
__device__ __forceinline__ void untilStable(Round round) {
  untilStable(round, [] { return false; });
}

// forEachSource runs perSource(i) for the sources i < numSources of the
// batch that this thread block owns, with a barrier before each, so that a
// source's rows are not reused while threads still read the previous one.
template <class PerSource>
__device__ __forceinline__ void forEachSource(int numSources, PerSource perSource) {
  for (int i = blockIdx.x; i < numSources; i += gridDim.x) {
    __syncthreads();
    perSource(i);
  }
}

// NearFarFlags gathers what a thread saw in one round of a near-far
// schedule (nearest.cu, and batched.cu's near-far rounds): whether a label
// at most the bound changed (nearWork), whether something waits (pending),
// and the smallest waiting distance (minFar, as a double: scheduling only,
// never a distance). report votes them once per warp into the control
// words of Ctl (fields nearWork, pending, minFar: u64; minFar the bits of a
// non-negative double, which orders like its bits, so that the minimum is
// an integer atomicMin). Every lane of the warp must reach report.
struct NearFarFlags {
  bool nearWork = false;
  bool pending = false;
  double minFar = __longlong_as_double(0x7ff0000000000000LL);  // +Inf

  __device__ __forceinline__ void far(double d) {
    pending = true;
    minFar = fmin(minFar, d);
  }
  template <class Ctl>
  __device__ __forceinline__ void report(Ctl* ctl) {
    const unsigned all = 0xffffffffu;
    const bool nearAny = __any_sync(all, nearWork);
    const bool pendAny = __any_sync(all, pending);
    double m = minFar;
    for (int o = 16; o > 0; o >>= 1) m = fmin(m, __shfl_xor_sync(all, m, o));
    if ((threadIdx.x & 31) != 0) return;
    if (nearAny) ctl->nearWork = 1;
    if (pendAny) ctl->pending = 1;
    const u64 bits = (u64)__double_as_longlong(m);
    if (bits < loadVolatile(&ctl->minFar)) atomicMin(&ctl->minFar, bits);
  }
};

}  // namespace pathctl
