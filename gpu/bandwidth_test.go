package gpu

import (
	"errors"
	"testing"
)

// TestMeasureDownload needs a GPU: the rate must be plausible for a PCIe or
// NVLink-C2C link and every byte allocated for it must be freed.
func TestMeasureDownload(t *testing.T) {
	e := openEngine(t)
	before, err := e.FreeMemory()
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	rate, err := e.MeasureDownload(size)
	if err != nil {
		t.Fatalf("MeasureDownload(%d): %v", size, err)
	}
	// Slower than 100 MB/s is pageable memory or a broken timer; faster
	// than 2 TB/s is not a copy over a host link.
	if rate < 1e8 || rate > 2e12 {
		t.Errorf("MeasureDownload(%d) = %.3g bytes/s, outside [1e8, 2e12]", size, rate)
	}
	t.Logf("device-to-host from pinned memory: %.1f GB/s", rate/1e9)
	if live := e.LiveBytes(); live != 0 {
		t.Errorf("%d device bytes still allocated after MeasureDownload", live)
	}
	after, err := e.FreeMemory()
	if err != nil {
		t.Fatal(err)
	}
	if after < before-(1<<20) {
		t.Errorf("free device memory fell from %d to %d bytes across MeasureDownload", before, after)
	}
}

func TestMeasureDownloadRejectsBadSizes(t *testing.T) {
	e := openEngine(t)
	for _, size := range []int64{0, -4, 6} {
		if _, err := e.MeasureDownload(size); err == nil {
			t.Errorf("MeasureDownload(%d) succeeded, want an error", size)
		}
	}
}

func TestMeasureDownloadAfterClose(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skip("no CUDA device: " + err.Error())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MeasureDownload(1 << 20); !errors.Is(err, errClosed) {
		t.Errorf("MeasureDownload after Close = %v, want %v", err, errClosed)
	}
}

func TestCheckPattern(t *testing.T) {
	words := make([]uint32, 10000)
	for i := range words {
		words[i] = downloadPattern
	}
	if err := checkPattern(words); err != nil {
		t.Fatalf("checkPattern of a full buffer: %v", err)
	}
	words[len(words)-1] = 0
	if err := checkPattern(words); err == nil {
		t.Error("checkPattern missed a wrong last word")
	}
	words[len(words)-1] = downloadPattern
	words[0] = 1
	if err := checkPattern(words); err == nil {
		t.Error("checkPattern missed a wrong first word")
	}
}
