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
// Each thread reads entry i before it writes entry i, and no other thread
// touches entry i, so the rewrite in place is safe. A grid-stride loop
// covers count entries with any grid.
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
