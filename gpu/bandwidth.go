package gpu

// Device-to-host bandwidth, measured the way the engine copies results: from
// a device buffer into page-locked (pinned) host memory with
// cuMemcpyDtoH_v2. `pathctl bench` divides the bytes of a graph's distance
// matrix by this rate to print the physical floor of an all-pairs run that
// brings every distance back to the host.
//
// Choices: the device buffer is filled with a known 32-bit pattern
// (cuMemsetD32_v2) and the host buffer cleared before each copy, and a
// sample of the copied words is checked afterwards, so a copy that did not
// happen cannot pass for a fast one. One untimed copy warms the path (page
// tables, DMA mappings); the timed copies are bracketed by CUDA events on
// the default stream, and the best of them is returned, because a floor is
// what the link can do, not what it usually does.

import (
	"errors"
	"fmt"
	"unsafe"
)

// downloadRepetitions is the number of timed copies MeasureDownload makes.
const downloadRepetitions = 5

// downloadPattern fills the device buffer MeasureDownload copies.
const downloadPattern uint32 = 0x5a17c0de

// measureDownload is Engine.MeasureDownload on dv.
func measureDownload(dv *device, bytes int64) (bytesPerSecond float64, err error) {
	if bytes <= 0 || bytes%4 != 0 {
		return 0, fmt.Errorf("gpu: MeasureDownload: %d bytes: want a positive multiple of 4", bytes)
	}
	err = dv.do(func() (err error) {
		src, err := dv.alloc(bytes)
		if err != nil {
			return err
		}
		var host pinned
		defer func() {
			err = errors.Join(err, dv.freePinned(&host), dv.free(&src))
		}()
		if err := dv.ensurePinned(&host, bytes); err != nil {
			return err
		}
		if err := dv.d.cuMemsetD32_v2(src.ptr, downloadPattern, uint64(bytes/4)).Err("cuMemsetD32_v2"); err != nil {
			return err
		}
		words := unsafe.Slice((*uint32)(host.p), bytes/4)
		best := 0.0
		for rep := 0; rep <= downloadRepetitions; rep++ {
			clear(words)
			seconds, err := timedDownload(dv, host.p, src.ptr, bytes)
			if err != nil {
				return err
			}
			if err := checkPattern(words); err != nil {
				return err
			}
			if rep > 0 && seconds > 0 { // rep 0 warms up
				best = max(best, float64(bytes)/seconds)
			}
		}
		if best == 0 {
			return errors.New("gpu: MeasureDownload: the copies took no measurable time")
		}
		bytesPerSecond = best
		return nil
	})
	if err != nil {
		return 0, err
	}
	return bytesPerSecond, nil
}

// timedDownload copies size bytes at src on dv to dst (pinned) and returns the
// seconds between CUDA events recorded around the copy. It runs on the
// device goroutine.
func timedDownload(dv *device, dst unsafe.Pointer, src uint64, size int64) (float64, error) {
	d := dv.d
	if err := d.cuEventRecord(dv.start, 0).Err("cuEventRecord"); err != nil {
		return 0, err
	}
	if err := d.cuMemcpyDtoH_v2(dst, src, uint64(size)).Err("cuMemcpyDtoH_v2"); err != nil {
		return 0, err
	}
	if err := d.cuEventRecord(dv.stop, 0).Err("cuEventRecord"); err != nil {
		return 0, err
	}
	if err := d.cuEventSynchronize(dv.stop).Err("cuEventSynchronize"); err != nil {
		return 0, err
	}
	var ms float32
	if err := d.cuEventElapsedTime(&ms, dv.start, dv.stop).Err("cuEventElapsedTime"); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// checkPattern looks at about 4096 evenly spaced words and the last one.
func checkPattern(words []uint32) error {
	step := max(1, len(words)/4096)
	for i := 0; i < len(words); i += step {
		if words[i] != downloadPattern {
			return fmt.Errorf("gpu: MeasureDownload: host word %d is %#x after the copy, want %#x", i, words[i], downloadPattern)
		}
	}
	if last := words[len(words)-1]; last != downloadPattern {
		return fmt.Errorf("gpu: MeasureDownload: last host word is %#x after the copy, want %#x", last, downloadPattern)
	}
	return nil
}
