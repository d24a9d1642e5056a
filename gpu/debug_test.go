package gpu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDebugCheckOffByDefault checks that without the pathctl_debug tag
// debugCheck costs nothing: it returns at once, without a device.
func TestDebugCheckOffByDefault(t *testing.T) {
	if debugChecks {
		t.Skip("built with -tags pathctl_debug")
	}
	if err := debugCheck(nil, "csr_count"); err != nil {
		t.Fatalf("debugCheck without the tag: %v", err)
	}
}

// faultEnv makes the test binary, run as a child, launch a kernel that
// faults: a fault spoils the CUDA context for the rest of the process, so
// it happens in a process of its own.
const faultEnv = "PATHCTL_TEST_KERNEL_FAULT"

// TestDebugCheckNamesTheKernel launches csr_count on an address that is
// not device memory, in a child process built with the pathctl_debug tag,
// and checks that the error names the kernel and the fault; and that a
// launch that succeeds passes the check.
func TestDebugCheckNamesTheKernel(t *testing.T) {
	if !debugChecks {
		t.Skip("built without -tags pathctl_debug")
	}
	if os.Getenv(faultEnv) == "1" {
		fmt.Println("fault:", launchFault())
		return
	}
	e := openEngine(t)
	dv := e.dev
	err := dv.do(func() error {
		counts, err := dv.alloc(8 * 3)
		if err != nil {
			return err
		}
		defer dv.free(&counts)
		if err := dv.launchAsync("csr_count", 1, uint64(0), uint64(0), int64(0), int32(0), counts.ptr); err != nil {
			return err
		}
		return debugCheck(dv, "csr_count")
	})
	if err != nil {
		t.Fatalf("a launch that succeeds: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDebugCheckNamesTheKernel$", "-test.v")
	cmd.Env = append(os.Environ(), faultEnv+"=1")
	out, _ := cmd.CombinedOutput()
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "fault: ") {
			line = l
		}
	}
	if !strings.Contains(line, "after kernel csr_count: CUDA_ERROR_") {
		t.Fatalf("the child's fault does not name the kernel and the status: %q\n%s", line, out)
	}
	t.Log(line)
}

// launchFault runs csr_count on edge columns at an address no allocation
// returns and reports what the launch and debugCheck said.
func launchFault() error {
	e, err := New()
	if err != nil {
		return err
	}
	dv := e.dev
	const bad = uint64(1) << 47 // far above any device allocation
	err = dv.do(func() error {
		counts, err := dv.alloc(8 * 3)
		if err != nil {
			return err
		}
		if err := dv.launchAsync("csr_count", 1, bad, bad, int64(threadsPerBlock), int32(0), counts.ptr); err != nil {
			return err
		}
		return debugCheck(dv, "csr_count")
	})
	var de *DriverError
	if err != nil && !errors.As(err, &de) {
		return fmt.Errorf("not a *DriverError: %w", err)
	}
	return err
}
