package gpu

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestResultErr(t *testing.T) {
	if err := Success.Err("cuInit"); err != nil {
		t.Fatalf("Success.Err = %v, want nil", err)
	}
	for _, tc := range []struct {
		r    Result
		call string
		want string
	}{
		{ResultOutOfMemory, "cuMemAlloc_v2", "gpu: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{ResultNoDevice, "cuInit", "gpu: cuInit: CUDA_ERROR_NO_DEVICE (100)"},
		{ResultInvalidContext, "cuMemAlloc_v2", "gpu: cuMemAlloc_v2: CUDA_ERROR_INVALID_CONTEXT (201)"},
	} {
		err := tc.r.Err(tc.call)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Result(%d).Err(%q) = %v, want %q", tc.r, tc.call, err, tc.want)
		}
		var de *DriverError
		if !errors.As(err, &de) || de.Result != tc.r || de.Call != tc.call {
			t.Errorf("Result(%d).Err: %#v is not the DriverError of the call", tc.r, err)
		}
	}
}

func TestOpenDriverListsEveryNameTried(t *testing.T) {
	names := []string{"libpathctl-no-such-driver.so.1", "libpathctl-no-such-driver.so"}
	_, err := openDriver(names)
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatalf("openDriver(%v) = %v, want a *LibraryError", names, err)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %s", err, n)
		}
	}
}

// Every name tried carries its own reason, never an empty one (dlerror
// read on another thread than dlopen's gave "tried libcuda.so.1: ;").
func TestOpenDriverGivesEveryNameAReason(t *testing.T) {
	names := []string{"libpathctl-no-such-driver.so.1", "libpathctl-no-such-driver.so"}
	for range 20 {
		_, err := openDriver(names)
		var le *LibraryError
		if !errors.As(err, &le) || len(le.Tried) != len(names) {
			t.Fatalf("openDriver = %v, want a LibraryError with %d names", err, len(names))
		}
		for i, tried := range le.Tried {
			name, reason, ok := strings.Cut(tried, ": ")
			if !ok || name != names[i] || strings.TrimSpace(reason) == "" {
				t.Fatalf("tried entry %q has no reason of its own", tried)
			}
		}
	}
	if got := dlopenReason(errors.New("")); got == "" {
		t.Error("an empty dlopen error gives an empty reason")
	}
}

// TestProbe runs everywhere: with a GPU it must describe one; without, it
// must say why in one of the documented ways.
func TestProbe(t *testing.T) {
	info, err := Probe()
	if err != nil {
		var le *LibraryError
		var se *SymbolError
		var de *DriverError
		if !errors.As(err, &le) && !errors.As(err, &se) && !errors.Is(err, ErrNoDevice) && !errors.As(err, &de) {
			t.Fatalf("Probe: %v is none of the documented failures", err)
		}
		if !strings.HasPrefix(err.Error(), "gpu: ") {
			t.Errorf("Probe error %q lacks the package prefix", err)
		}
		t.Logf("no GPU: %v", err)
		return
	}
	if info.Name == "" || info.Count < 1 || info.TotalMemory <= 0 || info.FreeMemory <= 0 ||
		info.FreeMemory > info.TotalMemory || info.ComputeMajor < 3 || info.DriverVersion < 1000 {
		t.Fatalf("Probe described an implausible device: %+v", info)
	}
	t.Logf("GPU: %v", info)
}

func TestParallelCopy(t *testing.T) {
	for _, size := range []int{0, 1, 8<<20 - 1, 8 << 20, 3*(8<<20) + 12345} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i*7 + i>>9)
		}
		dst := make([]byte, size)
		parallelCopy(dst, src)
		if !bytes.Equal(dst, src) {
			t.Fatalf("parallelCopy of %d bytes differs", size)
		}
	}
}
