// csr.cu: builds the CSR on the device from the edge columns, with the
// result graph.Build gives on the host: rows by counting sort, each row
// sorted by (target, weight), parallel arcs reduced to the smallest weight,
// self-loops dropped, every row added in both directions when undirected.
//
// Steps (gpu/csr.go launches them in order):
//   csr_count      degree histogram: counts[u+1] += 1 per arc leaving u
//                  (atomicAdd), edge-parallel
//   csr_scan       inclusive scan of an int64 array in place, one block:
//                  counts becomes the offsets of the unsorted rows
//   csr_scatter_*  every arc to offsets[u] + atomicAdd(fill[u], 1), so rows
//                  hold their arcs in no particular order
//   csr_sort_*     one thread block per row: a merge sort of the row by
//                  (target, weight) (O(d log² d) per row of degree d,
//                  spread over the block), then one thread keeps the first
//                  arc of every target at the front of the row;
//                  kept[u+1] = arcs kept
//   csr_scan       again, over kept: the final offsets
//   csr_compact_*  the kept front of every row to its final place
// Only order-independent values reach the result: ties of (target, weight)
// are equal arcs, so which of them is kept does not show.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS)
    csr_count(const int* src, const int* dst, long long m, int undirected, u64* counts) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m; i += (long long)gridDim.x * blockDim.x) {
    const int s = src[i], d = dst[i];
    if (s == d) continue;
    atomicAdd(counts + s + 1, 1ULL);
    if (undirected) atomicAdd(counts + d + 1, 1ULL);
  }
}

// csr_scan: a[i] = a[0] + ... + a[i] for i < len, with one block: each
// thread sums a contiguous chunk, thread 0 scans the chunk sums, and each
// thread rewrites its chunk.
extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) csr_scan(long long* a, long long len) {
  __shared__ long long base[PATHCTL_THREADS];
  const long long chunk = (len + blockDim.x - 1) / blockDim.x;
  const long long lo = min(len, threadIdx.x * chunk), hi = min(len, lo + chunk);
  long long sum = 0;
  for (long long i = lo; i < hi; i++) sum += a[i];
  base[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long run = 0;
    for (int t = 0; t < (int)blockDim.x; t++) {
      const long long s = base[t];
      base[t] = run;
      run += s;
    }
  }
  __syncthreads();
  long long run = base[threadIdx.x];
  for (long long i = lo; i < hi; i++) {
    run += a[i];
    a[i] = run;
  }
}

namespace pathctl {
namespace csr {

template <typename T>
__device__ void scatter(const int* src, const int* dst, const T* w, long long m, int undirected,
                           const long long* offsets, u64* fill, int* targets, T* weights) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m; i += (long long)gridDim.x * blockDim.x) {
    const int s = src[i], d = dst[i];
    if (s == d) continue;
    const T x = w ? w[i] : (T)1;
    long long p = offsets[s] + (long long)atomicAdd(fill + s, 1ULL);
    targets[p] = d;
    weights[p] = x;
    if (undirected) {
      p = offsets[d] + (long long)atomicAdd(fill + d, 1ULL);
      targets[p] = s;
      weights[p] = x;
    }
  }
}

// arcLess orders arcs by (target, weight).
template <typename T>
__device__ __forceinline__ bool arcLess(int ta, T wa, int tb, T wb) {
  return ta < tb || (ta == tb && wa < wb);
}

// countBelow counts the arcs of the sorted run (t, w)[0, len) that sort
// before (kt, kw): strictly before, or also those equal when orEqual.
template <typename T>
__device__ __forceinline__ long long countBelow(const int* t, const T* w, long long len, int kt, T kw, bool orEqual) {
  long long lo = 0, hi = len;
  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    const bool below = orEqual ? !arcLess(kt, kw, t[mid], w[mid]) : arcLess(t[mid], w[mid], kt, kw);
    if (below) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// sort sorts every row by (target, weight) with a bottom-up merge sort
// run by the row's thread block: in the pass of width w every arc finds its
// place in the merge of its run and the neighbouring run by a binary search
// in the other run (arcs of the left run go before equal arcs of the right
// one), so a row of degree d costs O(d log² d) over the block's threads.
// Passes alternate between the scattered arrays and sortedT/sortedW; the
// result ends in sortedT/sortedW, where one thread then keeps the first arc
// of every target at the front of the row. kept[u+1] = arcs kept.
template <typename T>
__device__ void sort(const long long* offsets, int n, int* targets, T* weights, int* sortedT, T* sortedW,
                        long long* kept) {
  for (int u = blockIdx.x; u < n; u += gridDim.x) {
    const long long lo = offsets[u], d = offsets[u + 1] - lo;
    int* inT = targets + lo;
    T* inW = weights + lo;
    int* outT = sortedT + lo;
    T* outW = sortedW + lo;
    for (long long width = 1; width < d; width *= 2) {
      for (long long j = threadIdx.x; j < d; j += blockDim.x) {
        const long long start = j / (2 * width) * (2 * width);
        const long long mid = min(start + width, d), end = min(start + 2 * width, d);
        const int kt = inT[j];
        const T kw = inW[j];
        long long pos;
        if (j < mid) {
          pos = j + countBelow(inT + mid, inW + mid, end - mid, kt, kw, false);
        } else {
          pos = start + (j - mid) + countBelow(inT + start, inW + start, mid - start, kt, kw, true);
        }
        outT[pos] = kt;
        outW[pos] = kw;
      }
      __syncthreads();
      int* st = inT;
      inT = outT;
      outT = st;
      T* sw = inW;
      inW = outW;
      outW = sw;
    }
    if (inT != sortedT + lo) {
      for (long long j = threadIdx.x; j < d; j += blockDim.x) {
        sortedT[lo + j] = inT[j];
        sortedW[lo + j] = inW[j];
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      long long out = lo;
      for (long long p = lo; p < lo + d; p++) {
        if (out > lo && sortedT[out - 1] == sortedT[p]) continue;
        sortedT[out] = sortedT[p];
        sortedW[out] = sortedW[p];
        out++;
      }
      kept[u + 1] = out - lo;
    }
    __syncthreads();
  }
}

template <typename T>
__device__ void compact(const long long* rowStart, const long long* offsets, int n, const int* sortedT,
                           const T* sortedW, int* targets, T* weights) {
  for (int u = blockIdx.x; u < n; u += gridDim.x) {
    const long long from = rowStart[u], to = offsets[u], d = offsets[u + 1] - to;
    for (long long k = threadIdx.x; k < d; k += blockDim.x) {
      targets[to + k] = sortedT[from + k];
      weights[to + k] = sortedW[from + k];
    }
  }
}

}  // namespace csr
}  // namespace pathctl

#define PATHCTL_CSR(SUFFIX, T)                                                                      \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) csr_scatter_##SUFFIX(               \
      const int* src, const int* dst, const T* w, long long m, int undirected,                      \
      const long long* offsets, u64* fill, int* targets, T* weights) {                              \
    pathctl::csr::scatter<T>(src, dst, w, m, undirected, offsets, fill, targets, weights);          \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) csr_sort_##SUFFIX(                  \
      const long long* offsets, int n, int* targets, T* weights, int* sortedT, T* sortedW,          \
      long long* kept) {                                                                            \
    pathctl::csr::sort<T>(offsets, n, targets, weights, sortedT, sortedW, kept);                    \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(PATHCTL_THREADS) csr_compact_##SUFFIX(               \
      const long long* rowStart, const long long* offsets, int n, const int* sortedT,               \
      const T* sortedW, int* targets, T* weights) {                                                 \
    pathctl::csr::compact<T>(rowStart, offsets, n, sortedT, sortedW, targets, weights);             \
  }

PATHCTL_CSR(i32, int)
PATHCTL_CSR(i64, long long)
PATHCTL_CSR(f32, float)
PATHCTL_CSR(f64, double)
