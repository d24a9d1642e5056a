package gpu

import (
	"errors"
	"fmt"
)

// OutOfMemoryError reports a block whose per-source buffers did not fit in
// device memory, with what was asked and what the device had free then.
type OutOfMemoryError struct {
	Sources int   // sources of the block asked for
	Asked   int64 // device bytes the block's buffers need
	Free    int64 // device bytes free (cuMemGetInfo), -1 where unknown
	Err     error // the driver's error
}

func (e *OutOfMemoryError) Error() string {
	free := "unknown"
	if e.Free >= 0 {
		free = fmt.Sprintf("%d", e.Free)
	}
	return fmt.Sprintf("gpu: out of device memory: a block of %d sources asked for %d bytes, %s bytes free: %v",
		e.Sources, e.Asked, free, e.Err)
}

func (e *OutOfMemoryError) Unwrap() error { return e.Err }

// isOutOfMemory reports whether err comes from a driver call that ran out
// of device memory.
func isOutOfMemory(err error) bool {
	var de *DriverError
	return errors.As(err, &de) && de.Result == ResultOutOfMemory
}

// outOfMemory describes the failed allocation on dv of a block of k
// sources of perSource device bytes each (on the device goroutine).
func outOfMemory(dv *device, k int, perSource int64, err error) error {
	free, _, ferr := dv.memInfo()
	if ferr != nil {
		free = -1
	}
	return &OutOfMemoryError{Sources: k, Asked: int64(k) * perSource, Free: free, Err: err}
}

// runChunks runs fn over the sources [0, k) of a block, in one call or, once
// *fit is known, in chunks of at most *fit sources. When a chunk of two or
// more sources runs out of device memory, the block buffers are released
// (release) and the chunk is retried as two halves, once per call; *fit
// remembers the half for later blocks. A second failure is returned,
// saying that the block was halved.
func runChunks(k int, fit *int, release func() error, fn func(lo, hi int) error) error {
	size := k
	if *fit > 0 {
		size = min(size, *fit)
	}
	halved := false
	for lo := 0; lo < k; {
		hi := min(lo+size, k)
		err := fn(lo, hi)
		if err == nil {
			lo = hi
			continue
		}
		if !isOutOfMemory(err) {
			return err
		}
		if halved {
			return fmt.Errorf("gpu: a block halved to %d sources after running out of device memory still does not fit: %w", hi-lo, err)
		}
		if hi-lo < 2 {
			return err
		}
		halved = true
		if rerr := release(); rerr != nil {
			return errors.Join(err, rerr)
		}
		size = (hi - lo + 1) / 2
		*fit = size
	}
	return nil
}

// allocFault, when set (by tests), makes every device allocation of size
// bytes for which it returns true fail with CUDA_ERROR_OUT_OF_MEMORY.
var allocFault func(size int64) bool
