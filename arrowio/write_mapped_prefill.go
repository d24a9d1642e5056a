package arrowio

// Prefill of a mapped matrix (WriteOptions.MatrixWrites "prefill"):
// workers populate the pages of the values ahead of the
// copies, so that on a GPU run the page allocations overlap the compute.
// It is apart from the writer because it runs beside it, on cores of its
// own, and shares with it only how far the copies have come.

import (
	"sync/atomic"
)

// mappedPrefillChunk is the bytes of values one prefill worker populates
// at a time.
const mappedPrefillChunk = 32 << 20

// startPrefill starts workers that populate the pages of the values in
// order, ahead of the copies, skipping what the copies have passed: on a
// GPU run the cores are mostly idle while the device computes, and the
// page allocations (most of the write's cost) then overlap the compute
// instead of lying on the writer's path. A failure stops the worker (the
// copy's own populate reports it). Allocating the pages with fallocate
// ahead of the workers was measured slower on a GPU run (8.24 s against
// 5.10 s for the R-MAT 16 matrix into a memfd; docs/benchmarks-history.md)
// and is not done.
func (w *mappedMatrix) startPrefill(workers int) {
	values := w.mapping[w.valuesOff : w.valuesOff+int64(w.valuesBytes())]
	pieces := int64((len(values) + mappedPrefillChunk - 1) / mappedPrefillChunk)
	var next atomic.Int64
	for range workers {
		w.prefill.wg.Add(1)
		go func() {
			defer w.prefill.wg.Done()
			_ = guardFaults(func() {
				for !w.prefill.stop.Load() {
					i := next.Add(1) - 1
					if i >= pieces {
						return
					}
					lo, hi := i*mappedPrefillChunk, min(int64(len(values)), (i+1)*mappedPrefillChunk)
					if hi <= w.copied.Load() {
						continue
					}
					if prefault(values[lo:hi]) != nil {
						return
					}
				}
			})
		}()
	}
}

// stopPrefill stops the prefill workers and waits for them (before the
// mapping goes).
func (w *mappedMatrix) stopPrefill() {
	w.prefill.stop.Store(true)
	w.prefill.wg.Wait()
}
