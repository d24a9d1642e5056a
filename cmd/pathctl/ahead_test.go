package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterruptWhileOpening interrupts an auto run of every source while
// the device, opened at start, never finishes opening, and the CSR and
// the GPU kernel's plan are made beside it: Main returns within a second
// of the interrupt, says so, exits with the interrupted status and leaves
// no output; with the plan beside the opening switched off too.
func TestInterruptWhileOpening(t *testing.T) {
	dir := t.TempDir()
	in := edgeFile(t, dir, "g.csv", 2000, 40000)
	for _, env := range []string{"", "off"} {
		t.Run("PATHCTL_PLAN_AHEAD="+env, func(t *testing.T) {
			t.Setenv("PATHCTL_PLAN_AHEAD", env)
			opener := newStuckOpener(t)
			out := filepath.Join(dir, "out"+env+".arrow")
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
		})
	}
}
