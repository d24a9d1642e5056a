// stats.cu: the stats layout's per-source reductions (design.md, "Outputs"),
// over distance rows that a relaxation kernel left on the device, so that
// only four 8-byte words per source cross back to the host instead of a row
// of n distances. One thread block per source, as everywhere else.
//
// Over R, the vertices other than the source whose distance is not the
// type's infinity, each block computes:
//   out[4i+0] reachable |R| (int64)
//   out[4i+1] eccentricity max d, as a double (0 when R is empty)
//   out[4i+2] sum: for integer distances an int64 summed as unsigned
//             (wrapping like Go's int64, so exact whatever the order),
//             double for floats
//   out[4i+3] harmonic: sum of 1/d over d != 0, in double
// Closeness is derived on the host from reachable and sum, with the same
// expression graph.ComputeStats uses.
//
// stats_narrow_* reduces a narrowed query's rows the same way (design.md,
// "Queries narrower than all pairs"): over the targets' columns only (every
// vertex's without targets; a target that repeats counts each time, as
// graph.ComputeStats counts a block's columns), leaving out the source's own
// columns and every distance above the cutoff (cut is the type's infinity
// without one). Closeness's denominator, the targets other than the source,
// is the host's.
//
// Each thread accumulates the vertices it strides over, in order, and the
// block combines the 256 partial results in a fixed tree: the float sums do
// not follow the CPU's vertex order, so they may differ from it in the last
// bits, but a run always gives the same bits.
#include "narrow.cuh"

namespace pathctl {
namespace stats {

template <typename T> struct StatsSum { typedef u64 type; };
template <> struct StatsSum<float> { typedef double type; };
template <> struct StatsSum<double> { typedef double type; };

__device__ __forceinline__ u64 statsBits(u64 v) { return v; }
__device__ __forceinline__ u64 statsBits(double v) { return (u64)__double_as_longlong(v); }

// Recips is how many reciprocals 1/d, d < size, the integer kernels keep in
// shared memory for the harmonic sum: the same division made once a thread
// block, so the sums keep their bits, instead of once a distance, where the
// double division held the kernel. Floats keep the division.
template <typename T> struct Recips { static constexpr int size = 1024; };
template <> struct Recips<float> { static constexpr int size = 1; };
template <> struct Recips<double> { static constexpr int size = 1; };

// fillRecips fills the table of Recips<T> (entry 0 unused); forEachSource's
// barrier comes before the first read.
template <typename T>
__device__ __forceinline__ void fillRecips(double* table) {
  for (int i = threadIdx.x; i < Recips<T>::size; i += blockDim.x) table[i] = i == 0 ? 0.0 : 1.0 / (double)i;
}

// recip is 1/d for a distance d ≠ 0 (negative where weights are), from
// the table where it holds it.
template <typename T>
__device__ __forceinline__ double recip(T d, const double* table) {
  if (Recips<T>::size > 1 && d > 0 && d < (T)Recips<T>::size) return table[(int)d];
  return 1.0 / (double)d;
}

// Unroll is how many columns a thread reads before it adds them in, so that
// as many loads are in flight; it takes them in the order of a plain stride.
constexpr int Unroll = 4;

// source reduces the row dist of source s over its numCols columns
// (narrow::column), distances above cut left out; recips is the table of
// fillRecips.
template <typename T>
__device__ void source(const T* dist, int numCols, const int* targets, T cut, int s, const double* recips,
                       u64* out) {
  typedef typename StatsSum<T>::type S;
  __shared__ long long reachS[PATHCTL_THREADS];
  __shared__ T eccS[PATHCTL_THREADS];
  __shared__ S sumS[PATHCTL_THREADS];
  __shared__ double harmS[PATHCTL_THREADS];
  const T inf = DistTraits<T>::inf();
  long long reach = 0;
  T ecc = 0;
  S sum = 0;
  double harm = 0;
  auto add = [&](int v, T d) {
    if (d == inf || d > cut || v == s) return;
    if (reach == 0 || d > ecc) ecc = d;
    reach++;
    sum += (S)d;
    if (d != 0) harm += recip<T>(d, recips);
  };
  const int step = blockDim.x;
  int j = threadIdx.x;
  for (; j + (Unroll - 1) * step < numCols; j += Unroll * step) {
    int v[Unroll];
    T d[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; k++) {
      v[k] = narrow::column(targets, j + k * step);
      d[k] = dist[v[k]];
    }
#pragma unroll
    for (int k = 0; k < Unroll; k++) add(v[k], d[k]);
  }
  for (; j < numCols; j += step) {
    const int v = narrow::column(targets, j);
    add(v, dist[v]);
  }
  const int t = threadIdx.x;
  reachS[t] = reach;
  eccS[t] = ecc;
  sumS[t] = sum;
  harmS[t] = harm;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) {
      const int o = t + half;
      if (reachS[o] > 0 && (reachS[t] == 0 || eccS[o] > eccS[t])) eccS[t] = eccS[o];
      reachS[t] += reachS[o];
      sumS[t] += sumS[o];
      harmS[t] += harmS[o];
    }
    __syncthreads();
  }
  if (t == 0) {
    out[0] = (u64)reachS[0];
    out[1] = statsBits((double)eccS[0]);
    out[2] = statsBits(sumS[0]);
    out[3] = statsBits(harmS[0]);
  }
}

}  // namespace stats
}  // namespace pathctl

#define PATHCTL_STATS(SUFFIX, T)                                                                    \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                     \
      stats_##SUFFIX(const T* dist, int n, const int* sources, int numSources, u64* out) {          \
    using namespace pathctl;                                                                        \
    __shared__ double recips[stats::Recips<T>::size];                                               \
    stats::fillRecips<T>(recips);                                                                   \
    forEachSource(numSources, [&](int i) {                                                          \
      stats::source<T>(rowOf(dist, i, n), n, nullptr, DistTraits<T>::inf(), sources[i], recips,     \
                       out + 4 * (size_t)i);                                                        \
    });                                                                                             \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                     \
      stats_narrow_##SUFFIX(const T* dist, int n, const int* sources, int numSources,               \
                            const int* targets, int numTargets, u64 cutBits, u64* out) {            \
    using namespace pathctl;                                                                        \
    const T cut = narrow::fromBits<T>(cutBits);                                                     \
    __shared__ double recips[stats::Recips<T>::size];                                               \
    stats::fillRecips<T>(recips);                                                                   \
    forEachSource(numSources, [&](int i) {                                                          \
      stats::source<T>(rowOf(dist, i, n), numTargets, targets, cut, sources[i], recips,             \
                       out + 4 * (size_t)i);                                                        \
    });                                                                                             \
  }

PATHCTL_STATS(i32, int)
PATHCTL_STATS(i64, long long)
PATHCTL_STATS(f32, float)
PATHCTL_STATS(f64, double)
