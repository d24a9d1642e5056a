// convert.cu: a matrix block's distances rewritten, in their own device
// memory, as values of a float type of the same width (int32 to float32,
// int64 to float64) just before they are copied to the host, so that the
// host writes the matrix a Python caller asked for (numpy has no nulls;
// scipy marks unreachable pairs with inf) without a pass of its own over
// the block. The type's infinity (DistTraits) becomes +Inf; every other
// value is converted exactly, which the host has checked from a bound of
// the finite distances before anything ran (pipeline's matrix type rule).
//
// round_f64_f32 rounds float64 rows to float32 precision in place, still
// as float64, for the k nearest of a float32 result (gpu/gather.go): a
// distance above the cutoff (the bits of a double; +Inf for none) becomes
// +Inf first, so that the cutoff compares the float64 distance, and every
// other is rounded to nearest (__double2float_rn, Go's float32(x) too).
//
// narrow_f64_f32_head and narrow_f64_f32 rewrite float64 rows as float32
// values in place, rounded to nearest (__double2float_rn, as Go's
// float32(x)), for a matrix of a float32 result computed in float64
// (gpu/copier.go): the rows then travel in half the bytes. Value i lands
// in bytes [4i, 4i+4), inside float64 entry i/2, so a launch may narrow
// entries [lo, hi) in parallel only where hi ≤ 2·lo and entries below lo
// are narrowed already: the head launch narrows [0, narrowHead) in one
// thread block, every thread reading its entries before any writes, and
// each later launch doubles the narrowed prefix.
//
// Each thread of the other kernels reads entry i before it writes entry
// i, and no other thread touches entry i, so the rewrite in place is safe.
// A grid-stride loop covers count entries with any grid.
#include "common.cuh"

namespace pathctl {
namespace convert {

template <typename S, typename D>
__device__ void run(S* d, u64 count) {
  const S inf = DistTraits<S>::inf();
  const D to = DistTraits<D>::inf();
  D* out = reinterpret_cast<D*>(d);
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    const S x = d[i];
    out[i] = x == inf ? to : (D)x;
  }
}

__device__ void round32(double* d, u64 count, double cut) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    const double x = d[i];
    d[i] = x > cut ? DistTraits<double>::inf() : (double)__double2float_rn(x);
  }
}

// narrowHead is the entries of the head launch: its block's threads each
// hold narrowPerThread of them.
constexpr int narrowPerThread = 8;
constexpr u64 narrowHead = (u64)PATHCTL_THREADS * narrowPerThread;

__device__ void narrowHeadEntries(double* d, u64 count) {
  float* out = reinterpret_cast<float*>(d);
  const u64 n = count < narrowHead ? count : narrowHead;
  float v[narrowPerThread];
#pragma unroll
  for (int j = 0; j < narrowPerThread; j++) {
    const u64 i = (u64)j * blockDim.x + threadIdx.x;
    v[j] = i < n ? __double2float_rn(d[i]) : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < narrowPerThread; j++) {
    const u64 i = (u64)j * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v[j];
  }
}

__device__ void narrowEntries(double* d, u64 lo, u64 hi) {
  float* out = reinterpret_cast<float*>(d);
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = lo + (u64)blockIdx.x * blockDim.x + threadIdx.x; i < hi; i += stride) out[i] = __double2float_rn(d[i]);
}

}  // namespace convert
}  // namespace pathctl

#define PATHCTL_CONVERT(NAME, S, D)                                                   \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) NAME(S* d, u64 count) { \
    pathctl::convert::run<S, D>(d, count);                                            \
  }

PATHCTL_CONVERT(convert_i32_f32, int, float)
PATHCTL_CONVERT(convert_i64_f64, long long, double)

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) round_f64_f32(double* d, u64 count, u64 cutBits) {
  pathctl::convert::round32(d, count, __longlong_as_double((long long)cutBits));
}

// narrow_f64_f32_head narrows entries [0, min(count, narrowHead)) in one
// thread block of PATHCTL_THREADS threads.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) narrow_f64_f32_head(double* d, u64 count) {
  pathctl::convert::narrowHeadEntries(d, count);
}

// narrow_f64_f32 narrows entries [lo, hi), hi ≤ 2·lo, those below lo
// narrowed already.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) narrow_f64_f32(double* d, u64 lo, u64 hi) {
  pathctl::convert::narrowEntries(d, lo, hi);
}
