package gpu

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a process's exit costs after the GPU was used: the time from the
// moment a process is done (its output closed) to the moment its parent
// sees it exit. pathctl leaves the context to the exit (Engine.Abandon);
// docs/benchmarks-history.md measured 0.12 s between the output closed and the exit
// after R-MAT 16 stats on an H100. The children below say when they are
// done, and the parent times the rest, so that the tail is split by what
// the child held: only a context, 26 GB of device memory as that run
// allocates, the same freed before the exit, or the engine closed.

// exitChildEnv selects the child's mode; exitDoneMark prefixes the line of
// the child's Unix time in nanoseconds once it is done.
const (
	exitChildEnv = "PATHCTL_EXIT_CHILD"
	exitDoneMark = "exit-child-done "
)

// exitModes are the children's modes: what each holds when it is done.
var exitModes = []string{"context", "allocated", "freed", "closed"}

// TestExitChild is a child of BenchmarkExitTeardown; it skips unless that
// benchmark started it.
func TestExitChild(t *testing.T) {
	mode := os.Getenv(exitChildEnv)
	if mode == "" {
		t.Skip("a child of BenchmarkExitTeardown only")
	}
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var bufs []devBuf
	if mode != "context" {
		// Four buffers of 6.5 GB: the two result slots and the working
		// distances of R-MAT 16's every-source stats block, about.
		err = e.dev.do(func() error {
			for range 4 {
				b, err := e.dev.alloc(6500 << 20)
				if err != nil {
					return err
				}
				bufs = append(bufs, b)
			}
			return e.dev.d.cuCtxSynchronize().Err("cuCtxSynchronize")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	if mode == "freed" || mode == "closed" {
		err = e.dev.do(func() error {
			for i := range bufs {
				if err := e.dev.free(&bufs[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	switch {
	case err != nil:
	case mode == "closed":
		err = e.Close()
	default:
		err = e.Abandon()
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%d %d\n", exitDoneMark, time.Now().UnixNano(), time.Since(began).Nanoseconds())
}

// BenchmarkExitTeardown runs a child process per mode and iteration and
// reports, per mode, the milliseconds from the child done (after freeing
// or closing, where the mode does) to its exit seen by the parent, and the
// milliseconds the child spent freeing or closing before that. Run it
// with `go test ./gpu -run XXX -bench ExitTeardown -benchtime 3x -v`. It
// logs the device's persistence mode where nvidia-smi tells it: without
// persistence the driver tears the device's state down when its last
// client exits and sets it up again at the next cuInit.
func BenchmarkExitTeardown(b *testing.B) {
	if _, err := Probe(); err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	if out, err := exec.Command("nvidia-smi", "--query-gpu=persistence_mode", "--format=csv,noheader").Output(); err == nil {
		b.Logf("persistence mode: %s", strings.TrimSpace(string(out)))
	}
	for _, mode := range exitModes {
		b.Run(mode, func(b *testing.B) {
			var tail, before time.Duration
			for range b.N {
				t, pre, err := runExitChild(mode)
				if err != nil {
					b.Fatal(err)
				}
				tail += t
				before += pre
			}
			b.ReportMetric(float64(tail.Microseconds())/1e3/float64(b.N), "exit-ms")
			b.ReportMetric(float64(before.Microseconds())/1e3/float64(b.N), "release-ms")
		})
	}
}

// runExitChild runs TestExitChild in mode and returns the time from its
// done line to its exit, and what it spent releasing before the line.
func runExitChild(mode string) (tail, release time.Duration, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), exitChildEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	var done time.Time
	sc := bufio.NewScanner(out)
	var lines []string
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if rest, ok := strings.CutPrefix(line, exitDoneMark); ok {
			f := strings.Fields(rest)
			ns, err1 := strconv.ParseInt(f[0], 10, 64)
			rel, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 != nil || err2 != nil {
				return 0, 0, fmt.Errorf("child line %q", line)
			}
			done, release = time.Unix(0, ns), time.Duration(rel)
		}
	}
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("child %s: %w: %s", mode, err, strings.Join(lines, "\n"))
	}
	exited := time.Now()
	if done.IsZero() {
		return 0, 0, fmt.Errorf("child %s said nothing: %s", mode, strings.Join(lines, "\n"))
	}
	return exited.Sub(done), release, nil
}
