// gather.cu: the columns of a narrowed query (design.md, "Queries narrower
// than all pairs"), gathered on the device so that only sources × targets
// distances cross back to the host instead of sources × n.
//
// From the [numSources × n] distance rows a relaxation kernel left on the
// device, cell (i, j) of the [numSources × numTargets] output is
// dist[i·n + targets[j]], or the type's infinity where that distance is
// above cut (a cutoff; cut is infinity when there is none, which clips
// nothing). Targets come in the caller's order and may repeat. Without
// targets (a null pointer) column j is vertex j and numTargets is n: the
// cutoff alone clips the rows, and out may then be dist itself, since every
// cell is read and written by the same thread.
//
// Choices: a grid-stride loop over the output's cells in row-major order,
// so that consecutive threads write consecutive cells (the writes coalesce;
// the reads are scattered by the targets' order, as any gather is). The
// cutoff travels as the bits of a value of the distance type (narrow.cuh).
#include "narrow.cuh"

namespace pathctl {
namespace gather {

template <typename T>
__device__ void cells(const T* dist, int n, int numSources, const int* targets, int numTargets, u64 cutBits, T* out) {
  const T inf = DistTraits<T>::inf();
  const T cut = narrow::fromBits<T>(cutBits);
  const u64 count = (u64)numSources * (u64)numTargets;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 c = (u64)blockIdx.x * blockDim.x + threadIdx.x; c < count; c += stride) {
    const u64 row = c / (u64)numTargets;
    const int col = (int)(c - row * (u64)numTargets);
    const int v = narrow::column(targets, col);
    const T d = dist[row * (u64)n + (u64)v];
    out[c] = d > cut ? inf : d;
  }
}

}  // namespace gather
}  // namespace pathctl

#define PATHCTL_GATHER(SUFFIX, T)                                                                \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)                                  \
      gather_##SUFFIX(const T* dist, int n, int numSources, const int* targets, int numTargets,  \
                      u64 cutBits, T* out) {                                                     \
    pathctl::gather::cells<T>(dist, n, numSources, targets, numTargets, cutBits, out);           \
  }

PATHCTL_GATHER(i32, int)
PATHCTL_GATHER(i64, long long)
PATHCTL_GATHER(f32, float)
PATHCTL_GATHER(f64, double)
