// narrow.cuh: what the kernels of narrowed queries share (gather.cu,
// select.cu, stats.cu; design.md, "Queries narrower than all pairs").
//
// - The cutoff travels as the bits of a value of the distance type in a
//   64-bit word (low word for 32-bit types), the one parameter type every
//   distance fits exactly; fromBits reads it back.
// - orderedKey maps a distance to an unsigned key that orders as the
//   distances do (integers: the sign bit flipped; floats: the usual flip of
//   the sign bit, or of every bit for negatives, with -0 read as +0), so
//   that a radix selection can run over distances of every type.
// - The column j of a narrowed row is targets[j], or vertex j without
//   targets (a null pointer).
#pragma once
#include "common.cuh"

namespace pathctl {
namespace narrow {

template <typename T> __device__ __forceinline__ T fromBits(u64 bits);
template <> __device__ __forceinline__ int fromBits<int>(u64 bits) { return (int)(u32)bits; }
template <> __device__ __forceinline__ long long fromBits<long long>(u64 bits) { return (long long)bits; }
template <> __device__ __forceinline__ float fromBits<float>(u64 bits) { return __int_as_float((int)(u32)bits); }
template <> __device__ __forceinline__ double fromBits<double>(u64 bits) { return __longlong_as_double((long long)bits); }

__device__ __forceinline__ u64 orderedKey(int d) { return (u64)((u32)d ^ 0x80000000u); }
__device__ __forceinline__ u64 orderedKey(long long d) { return (u64)d ^ 0x8000000000000000ull; }
__device__ __forceinline__ u64 orderedKey(float d) {
  const u32 b = __float_as_uint(d + 0.0f);  // -0 + 0 is +0
  return (u64)((b & 0x80000000u) ? ~b : (b | 0x80000000u));
}
__device__ __forceinline__ u64 orderedKey(double d) {
  const u64 b = (u64)__double_as_longlong(d + 0.0);
  return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

// column is the vertex of column j.
__device__ __forceinline__ int column(const int* targets, int j) { return targets != nullptr ? targets[j] : j; }

}  // namespace narrow
}  // namespace pathctl
