package graph

// Row-parallel host reductions. The rows of a block are independent: the
// stats of a source, the k nearest of a source and the narrowed row of a
// source read that source's row only and write that source's place in the
// output only. ForRowChunks hands out chunks of consecutive rows to
// goroutines, which write disjoint rows of the output without locks; a
// row's result is computed by the same code, in the same order, whichever
// goroutine runs it, so the output is byte-identical to a serial run.

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pathctl/pathctl/internal/recovered"
)

// SerialRowCells is the number of cells (rows × columns) below which
// ForRowChunks runs every row in the calling goroutine. Chosen from
// BenchmarkForRowChunksOverhead, the start and join of one split: on the
// 2-core development machine 0.5 µs with GOMAXPROCS 2, 1.1 µs with 4 and
// 4 µs with 16 goroutines on its 2 cores. 2^16 cells take 100 µs or more
// at the 1.5–7 ns per cell of the host reductions (narrowing, stats, k
// nearest), so above it the split costs a few per cent at most, and below
// it (a few short rows, a narrowed block of a few targets) its gain would
// be a few microseconds.
const SerialRowCells = 1 << 16

// chunksPerThread is how many chunks of rows each thread gets on average:
// rows cost unequal time (a source that reaches little is quick), and
// threads that finish early take further chunks.
const chunksPerThread = 4

// ForRowChunks calls body(first, end) for consecutive ranges of rows that
// together cover [0, rows) once each, from up to threads goroutines at
// once (threads ≤ 0: runtime.GOMAXPROCS). width is the number of cells a
// row holds; a block of fewer than SerialRowCells cells, or one thread,
// runs as the single call body(0, rows) in the calling goroutine.
// ForRowChunks returns when every call has returned. body must write only
// the output of rows [first, end).
func ForRowChunks(rows, width, threads int, body func(first, end int)) {
	if rows <= 0 {
		return
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, rows)
	if threads <= 1 || int64(rows)*int64(width) < SerialRowCells {
		body(0, rows)
		return
	}
	chunk := (rows + threads*chunksPerThread - 1) / (threads * chunksPerThread)
	chunks := (rows + chunk - 1) / chunk
	threads = min(threads, chunks)
	var next atomic.Int64
	var crashed recovered.Panic
	work := func() {
		defer crashed.Keep()
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			body(c*chunk, min((c+1)*chunk, rows))
		}
	}
	var wg sync.WaitGroup
	for range threads - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	crashed.Repanic() // a body's panic reaches the caller, not the process
}
