// validity.cu: the Arrow validity bitmap of a run of distances, built on the
// device so that the host never reads a matrix block to find its nulls
// (design.md, "Outputs": unreachable is null in the matrix layout).
//
// Entry i of the count distances at d is valid when it is not the type's
// infinity; bit i of the bitmap is bit i%32 of 32-bit word i/32, which on a
// little-endian host is Arrow's least-significant-bit order byte for byte.
// One warp votes on 32 consecutive entries at a time (__ballot_sync: lane j
// is bit j), and its first lane stores the word. Each thread block leaves
// the number of its null entries in partials[blockIdx.x]; the host adds
// them up. Bits past count are zero.
#include "common.cuh"

namespace pathctl {
namespace validity {

template <typename T>
__device__ void run(const T* d, u64 count, u32* bits, u64* partials) {
  __shared__ u64 nullsS;
  if (threadIdx.x == 0) nullsS = 0;
  __syncthreads();
  const T inf = DistTraits<T>::inf();
  const u64 words = (count + 31) / 32;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  const int lane = threadIdx.x & 31;
  u64 nulls = 0;
  // Every lane of a warp runs the same iterations: the start of each warp
  // and the stride are multiples of 32, and the bound is whole words.
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < words * 32; i += stride) {
    const bool valid = i < count && d[i] != inf;
    const u32 word = __ballot_sync(0xffffffffu, valid);
    if (lane == 0) {
      const u64 first = i;  // entry of bit 0
      const u64 left = count - first;
      const u32 live = left >= 32 ? 0xffffffffu : ((1u << left) - 1u);
      bits[i / 32] = word;
      nulls += __popc(~word & live);
    }
  }
  if (lane == 0 && nulls != 0) atomicAdd(&nullsS, nulls);
  __syncthreads();
  if (threadIdx.x == 0) partials[blockIdx.x] = nullsS;
}

}  // namespace validity
}  // namespace pathctl

#define PATHCTL_VALIDITY(SUFFIX, T)                                                     \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                         \
      validity_##SUFFIX(const T* d, u64 count, u32* bits, u64* partials) {              \
    pathctl::validity::run<T>(d, count, bits, partials);                                \
  }

PATHCTL_VALIDITY(i32, int)
PATHCTL_VALIDITY(i64, long long)
