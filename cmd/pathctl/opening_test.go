package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// edgeFile writes a CSV of rows weighted edges over n vertices.
func edgeFile(t *testing.T, dir, name string, n, rows int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%d,%d\n", i%n, (i*7+1)%n, 1+i%13)
	}
	return writeFile(t, dir, name, b.String())
}

// TestOpensAtStart checks which command lines open the device at process
// start: run, sssp, bfs and path that may build on the GPU by LoadGraph's
// rule; never with --engine cpu, for help, for other commands, or where
// the command line cannot say (a sources file).
func TestOpensAtStart(t *testing.T) {
	dir := t.TempDir()
	big := edgeFile(t, dir, "big.csv", 1000, 30000) // over 256 KiB
	small := edgeFile(t, dir, "small.csv", 100, 300)
	if fi, err := os.Stat(big); err != nil || fi.Size() < 256<<10 {
		t.Fatalf("big.csv: %v, %d bytes", err, fi.Size())
	}
	many := make([]string, 70)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	ids := writeFile(t, dir, "ids.txt", strings.Join(many, "\n"))
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"run", big, "-o", "x.arrow"}, true},
		{[]string{"run", "-o", "x.arrow", big, "--layout", "stats"}, true},
		{[]string{"run", big, "-qv"}, true},
		{[]string{"run", big, "--engine", "gpu"}, true},
		{[]string{"run", big, "--engine", "cpu"}, false},
		{[]string{"run", big, "--engine=cpu"}, false},
		{[]string{"run", small}, false},
		{[]string{"run", small, "--engine", "gpu"}, true},
		{[]string{"run", "-", "--input-format", "csv"}, true},
		{[]string{"run", big, "--help"}, false},
		{[]string{"run", big, "-h"}, false},
		{[]string{"run", big, "--sources", "1,2,3"}, false},
		{[]string{"run", big, "--sources", strings.Join(many, ",")}, true},
		{[]string{"run", big, "--sources", strings.Join(many, ","), "--engine", "cpu"}, false},
		{[]string{"run", big, "--sources-file", ids}, false},
		{[]string{"run", big, small}, false},
		{[]string{"run"}, false},
		{[]string{"sssp", big, "--source", "1"}, false},
		{[]string{"sssp", big, "--source", "1", "--engine", "gpu"}, true},
		{[]string{"bfs", big, "-s", "1", "--engine", "gpu"}, true},
		{[]string{"path", big, "--from", "1", "--to", "2"}, false},
		{[]string{"path", big, "--from", "1", "--to", "2", "--engine", "gpu"}, true},
		{[]string{"verify", big}, false},
		{[]string{"info"}, false},
		{[]string{"bench", "--graphs", big}, false},
		{[]string{"help", "run"}, false},
	}
	for _, c := range cases {
		app := App(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
		args, err := prepareArgs(app, append([]string{"pathctl"}, c.args...))
		got := err == nil && opensAtStart(app, args)
		if got != c.want {
			t.Errorf("pathctl %s: opens at start %v, want %v", strings.Join(c.args, " "), got, c.want)
		}
	}
}

// stuckOpener counts its openings, each of which lasts until the test
// ends: a device that a run must not wait for.
type stuckOpener struct {
	opened  atomic.Int64
	release chan struct{}
}

func newStuckOpener(t *testing.T) *stuckOpener {
	o := &stuckOpener{release: make(chan struct{})}
	t.Cleanup(func() { close(o.release) })
	return o
}

func (o *stuckOpener) open() (graph.GPUDevice, error) {
	o.opened.Add(1)
	<-o.release
	return nil, errors.New("gpu: released by the test")
}

// runMain runs the CLI in process as main does (exits: true) or as tests
// do, with open as the device opener, and fails the test if it does not
// return within limit.
func runMain(t *testing.T, exits bool, open func() (graph.GPUDevice, error), limit time.Duration, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- mainWith(context.Background(), append([]string{"pathctl"}, args...), strings.NewReader(""), &out, &errb,
			startOptions{exits: exits, openDevice: open})
	}()
	select {
	case code := <-done:
		return result{code, out.String(), errb.String()}
	case <-time.After(limit):
		t.Fatalf("pathctl %s did not return within %s: it waits for the device", strings.Join(args, " "), limit)
	}
	return result{}
}

// TestCPURunDoesNotWaitForTheDevice opens a device that never finishes at
// process start and checks that runs which end on the CPU (a graph with
// fewer vertices than auto takes to the GPU, few sources, a bad input, a
// usage error after the opening began) return without waiting for it,
// with their usual exit status and output; that --engine cpu starts no
// opening; and that the result is the same whether the process exits
// after Main or not.
func TestCPURunDoesNotWaitForTheDevice(t *testing.T) {
	dir := t.TempDir()
	few := edgeFile(t, dir, "few.csv", 40, 60000) // over 256 KiB, 40 vertices
	bad := writeFile(t, dir, "bad.csv", "src,dst,weight\n"+strings.Repeat("1,2,x\n", 50000))
	want := filepath.Join(dir, "want.arrow")
	if r := runMain(t, false, nil, time.Minute, "run", few, "--engine", "cpu", "--layout", "stats", "-o", want); r.code != 0 {
		t.Fatalf("--engine cpu: exit %d: %s", r.code, r.stderr)
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		opens    bool
		compared bool
	}{
		{"few vertices", []string{"run", few, "--layout", "stats"}, 0, true, true},
		{"few vertices, verbose", []string{"run", few, "--layout", "stats", "-v"}, 0, true, true},
		{"engine cpu", []string{"run", few, "--layout", "stats", "--engine", "cpu"}, 0, false, true},
		{"bad input", []string{"run", bad, "--layout", "stats"}, exitInput, true, false},
		{"bad layout", []string{"run", few, "--layout", "nope"}, exitUsage, true, false},
	}
	for _, exits := range []bool{false, true} {
		for _, c := range cases {
			name := fmt.Sprintf("%s (exits %v)", c.name, exits)
			opener := newStuckOpener(t)
			out := filepath.Join(dir, fmt.Sprintf("out-%v.arrow", exits))
			os.Remove(out)
			r := runMain(t, exits, opener.open, 30*time.Second, append(c.args, "-o", out)...)
			if r.code != c.code {
				t.Errorf("%s: exit %d, want %d: %s", name, r.code, c.code, r.stderr)
			}
			// The open runs in a goroutine of its own: give it a moment.
			for deadline := time.Now().Add(5 * time.Second); c.opens && opener.opened.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if got := opener.opened.Load() == 1; got != c.opens {
				t.Errorf("%s: opened at start %v, want %v", name, got, c.opens)
			}
			got, err := os.ReadFile(out)
			switch {
			case !c.compared && err == nil:
				t.Errorf("%s: an output was left behind", name)
			case c.compared && err != nil:
				t.Errorf("%s: %v", name, err)
			case c.compared:
				if w, _ := os.ReadFile(want); !bytes.Equal(got, w) {
					t.Errorf("%s: the result differs from --engine cpu's", name)
				}
			}
		}
	}
}

// TestDeviceOpenedAtStartFails checks a device whose opening begun at
// start fails, as on a machine without a GPU: auto runs on the CPU with
// the result of --engine cpu, and says so only with --verbose; --engine
// gpu fails with the unavailable status and leaves no output.
func TestDeviceOpenedAtStartFails(t *testing.T) {
	dir := t.TempDir()
	in := edgeFile(t, dir, "g.csv", 300, 30000)
	want := filepath.Join(dir, "want.arrow")
	if r := runMain(t, false, nil, time.Minute, "run", in, "--engine", "cpu", "--layout", "stats", "-o", want); r.code != 0 {
		t.Fatalf("--engine cpu: exit %d: %s", r.code, r.stderr)
	}
	var opened atomic.Int64
	noGPU := func() (graph.GPUDevice, error) {
		opened.Add(1)
		return nil, fmt.Errorf("gpu: %w: none here", gpu.ErrNoDevice)
	}
	for _, exits := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("auto-%v.arrow", exits))
		r := runMain(t, exits, noGPU, time.Minute, "run", in, "--layout", "stats", "-o", out)
		if r.code != 0 || strings.Contains(r.stderr, "GPU") {
			t.Errorf("auto (exits %v): exit %d, stderr %q", exits, r.code, r.stderr)
		}
		got, err := os.ReadFile(out)
		if w, _ := os.ReadFile(want); err != nil || !bytes.Equal(got, w) {
			t.Errorf("auto (exits %v): the result differs from --engine cpu's (%v)", exits, err)
		}
		out = filepath.Join(dir, fmt.Sprintf("gpu-%v.arrow", exits))
		r = runMain(t, exits, noGPU, time.Minute, "run", in, "--layout", "stats", "--engine", "gpu", "-o", out)
		if r.code != exitUnavailable || !strings.Contains(r.stderr, "none here") {
			t.Errorf("--engine gpu (exits %v): exit %d, stderr %q; want %d naming the open's error", exits, r.code, r.stderr, exitUnavailable)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--engine gpu (exits %v): an output was left behind", exits)
		}
	}
	if n := opened.Load(); n != 4 {
		t.Errorf("%d openings at start, want 4", n)
	}
}
