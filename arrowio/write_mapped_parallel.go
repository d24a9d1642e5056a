package arrowio

// Copies and bit writes into a mapping on every core, with a fault in the
// mapping (SIGBUS: a file system out of room) turned into an error. The
// mapped matrix writer and the result peer both spread their writes with
// parallelRanges; nothing here knows Arrow.

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// parallelCopy copies src to dst (same length) in chunks of chunk bytes,
// on every core, each chunk's pages populated first. A fault in dst (a
// file system out of room under the mapping) is returned as an error.
func parallelCopy(dst, src []byte, chunk int) error {
	return parallelRanges(len(src), chunk, func(lo, hi int) error {
		if err := prefault(dst[lo:hi]); err != nil {
			return err
		}
		copy(dst[lo:hi], src[lo:hi])
		return nil
	})
}

// parallelSetBits sets bits [at, at+count) of bitmap, on every core, in
// pieces of piece bits (a multiple of 8).
func parallelSetBits(bitmap []byte, at, count, piece int) error {
	return parallelBits(at, count, piece, func(lo, hi int) { bitutil.SetBitsTo(bitmap, int64(lo), int64(hi-lo), true) })
}

// parallelCopyBits copies count bits of src from bit from to bitmap at bit
// at, on every core, in pieces of piece bits (a multiple of 8).
func parallelCopyBits(bitmap []byte, at int, src []byte, from, count, piece int) error {
	return parallelBits(at, count, piece, func(lo, hi int) { copyBits(bitmap, lo, src, from+lo-at, hi-lo) })
}

// parallelBits runs fn over the pieces [lo, hi) of the bit range [at,
// at+count) cut at the multiples of piece: with piece a multiple of 8, no
// two pieces write one byte, so they run side by side.
func parallelBits(at, count, piece int, fn func(lo, hi int)) error {
	first := at / piece
	last := (at + count + piece - 1) / piece
	return parallelRanges(last-first, 1, func(lo, hi int) error {
		for p := first + lo; p < first+hi; p++ {
			fn(max(at, p*piece), min(at+count, (p+1)*piece))
		}
		return nil
	})
}

// parallelRanges calls fn over [0, n) in ranges of chunk, one goroutine
// per core taking the next range until none is left, and returns the
// first error. fn writes into a mapping of a file: a fault there (SIGBUS
// when the file system has no room for a page) becomes an error instead
// of ending the process (runtime/debug.SetPanicOnFault).
func parallelRanges(n, chunk int, fn func(lo, hi int) error) error {
	pieces := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), pieces)
	var mu sync.Mutex
	next := 0
	var first error
	take := func(err error) int {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && first == nil {
			first = err
		}
		if first != nil {
			return pieces
		}
		next++
		return next - 1
	}
	work := func() {
		var err error
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				take(fmt.Errorf("writing into the mapped file: %v", r))
			}
		}()
		for i := take(nil); i < pieces; i = take(err) {
			err = fn(i*chunk, min(n, (i+1)*chunk))
		}
	}
	if workers <= 1 {
		work()
		return first
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
	return first
}

// guardFaults runs fn, which writes into a mapping, and returns a fault
// there as an error (see parallelRanges).
func guardFaults(fn func()) error {
	return parallelRanges(1, 1, func(int, int) error { fn(); return nil })
}
