package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/pipeline"
)

// TestInterruptWhileOpening interrupts an auto run of every source while
// the device, opened at start, never finishes opening, and the CSR and
// the GPU kernel's plan are made beside it: Main returns within a second
// of the interrupt, says so, exits with the interrupted status and leaves
// no output.
func TestInterruptWhileOpening(t *testing.T) {
	dir := t.TempDir()
	in := edgeFile(t, dir, "g.csv", 2000, 40000)
	opener := newStuckOpener(t)
	out := filepath.Join(dir, "out.arrow")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, []string{"pathctl", "run", in, "--layout", "stats", "-o", out}, strings.NewReader(""), &stdout, &stderr,
			startOptions{exits: true, openDevice: opener.open})
	}()
	// The read, the build and the plan's start take well under
	// this on any machine; the opening never ends.
	time.Sleep(400 * time.Millisecond)
	select {
	case code := <-done:
		t.Fatalf("returned before the interrupt, exit %d: %s", code, stderr.String())
	default:
	}
	interrupted := time.Now()
	cancel()
	select {
	case code := <-done:
		if took := time.Since(interrupted); took > time.Second {
			t.Errorf("returned %s after the interrupt", took)
		}
		if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("exit %d, stderr %q; want %d, saying it was interrupted", code, stderr.String(), exitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after the interrupt: it waits for the device")
	}
	if opener.opened.Load() != 1 {
		t.Errorf("%d openings at start, want 1", opener.opened.Load())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output was left behind")
	}
}

// TestWallTimeLineSaysThePlan checks the --verbose split where the GPU
// kernel's plan was made beside the opening: the line says how long it
// took and whether the run took it, inside the CSR's parenthesis (its time
// lies in the wait, so the stages still add up), and parses as every
// other wall-time line.
func TestWallTimeLineSaysThePlan(t *testing.T) {
	for _, used := range []bool{true, false} {
		var b strings.Builder
		wt := wallTimes{
			wall: 430 * time.Millisecond, startUp: 2 * time.Millisecond, read: 66 * time.Millisecond,
			load: 160 * time.Millisecond, run: 200 * time.Millisecond, closeOutput: time.Millisecond, leftToExit: true,
			openedAtStart: true,
			graph: pipeline.LoadTimes{Build: 20 * time.Millisecond, DeviceOpen: 227 * time.Millisecond, DeviceWait: 159 * time.Millisecond,
				Early: true, BesideOpen: true, PlanAhead: 35 * time.Millisecond, PlanAheadUsed: used},
		}
		printWallTime(&b, wt)
		line := b.String()
		m := wallLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("used %v: the line does not parse: %q", used, line)
		}
		want := "; then the GPU kernel's plan 35ms, beside the opening too, taken by the run)"
		if !used {
			want = "; then the GPU kernel's plan 35ms, beside the opening too, not taken: the run planned its own)"
		}
		if !strings.Contains(line, want) {
			t.Errorf("used %v: %q does not say %q", used, line, want)
		}
		if m[7] != "1ms" || m[12] != "1ms" || m[13] != "1ms" {
			t.Errorf("used %v: building %s, closing the output %s, other %s; want 1ms each: %q", used, m[7], m[12], m[13], line)
		}
	}
}
