// hubsend.cu: hub rows sent between devices in 16 bits (issue 19,
// gpu/hubshare.go). Two devices that share the hub rows of one graph send
// each phase's rows to each other at the phase's end, and the link's time
// is on both devices' path. Where every finite distance of the rows is
// below 0xFFFF, the sender packs them into 16 bits and writes the packed
// values straight into the receiver's memory (peer access), and the
// receiver widens them into its rows: half the bytes cross the link.
//
// hub_pack16_i32: count int32 distances at src (any 4-byte alignment) into
// 16 bits at dst (8-byte aligned; may be another device's memory), the
// type's infinity as 0xFFFF. A finite value outside [0, 0xFFFF) sets
// *overflow (the caller then sends the rows whole; what was written is
// not read). hub_unpack16_i32 is the inverse, 0xFFFF back to infinity.
//
// Choices: each thread takes 4 consecutive values, so that the packed
// side is one 8-byte access (a warp's 256 bytes in one piece, which the
// link carries as whole lines) and the int32 side 4 scalar accesses (the
// rows start at any multiple of 4 bytes). A grid-stride loop covers any
// count.
#include "common.cuh"

namespace pathctl {
namespace hubsend {

__device__ __forceinline__ u32 pack(int v, bool& bad) {
  if (v == DistTraits<int>::inf()) return 0xFFFFu;
  if (v < 0 || v >= 0xFFFF) {
    bad = true;
    return 0xFFFFu;
  }
  return (u32)v;
}

__device__ __forceinline__ int unpack(u32 h) { return h == 0xFFFFu ? DistTraits<int>::inf() : (int)h; }

}  // namespace hubsend
}  // namespace pathctl

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    hub_pack16_i32(const int* src, u64 count, uint2* dst, int* overflow) {
  using namespace pathctl::hubsend;
  const u64 quads = (count + 3) / 4;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  bool bad = false;
  for (u64 q = (u64)blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += stride) {
    const u64 i = 4 * q;
    u32 h[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      h[k] = i + k < count ? pack(src[i + k], bad) : 0xFFFFu;
    }
    dst[q] = make_uint2(h[0] | (h[1] << 16), h[2] | (h[3] << 16));
  }
  if (bad) *overflow = 1;
}

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    hub_unpack16_i32(const uint2* src, u64 count, int* dst) {
  using namespace pathctl::hubsend;
  const u64 quads = (count + 3) / 4;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 q = (u64)blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += stride) {
    const u64 i = 4 * q;
    const uint2 p = src[q];
    const u32 h[4] = {p.x & 0xFFFFu, p.x >> 16, p.y & 0xFFFFu, p.y >> 16};
#pragma unroll
    for (int k = 0; k < 4; k++) {
      if (i + k < count) dst[i + k] = unpack(h[k]);
    }
  }
}
