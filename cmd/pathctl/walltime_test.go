package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/pipeline"
)

// wallLine is --verbose's split of the wall time; its stages are
// durations as time.Duration prints them, rounded to milliseconds.
var wallLine = regexp.MustCompile(`(?m)^pathctl: wall time (\S+) = start-up (\S+) \+ reading (\S+)(?: \+ waiting for the device (\S+) \(opening it took (\S+)(, (?:begun at start-up|beside the read); device open overlapped: \S+ hidden)?(?:; driver \S+, context \S+, kernels \S+, rest \S+)?\))? \+ building the graph (\S+) \(the CSR ([^,)\s]+)(, on the CPU while waiting for the device(?:; then the GPU kernel's plan \S+, beside the opening too, (?:taken by the run|not taken: the run planned its own))?)?\) \+ running (\S+) \(computing and writing the rows\) \+ (?:closing the device|leaving the device to the exit) (\S+) \+ closing the output (\S+) \+ other (\S+)$`)

// TestVerboseSplitsTheWallTime runs a graph read from standard input (its
// size unknown, so that auto opens the device beside the read) and from a
// file, on every engine choice: --verbose ends with a line whose stages add
// up to the wall time, which is no more than the run took; the results are
// the same whatever the engine; without --verbose a machine without a GPU
// prints only the summary, as before the device opened early.
func TestVerboseSplitsTheWallTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("src,dst,weight\n")
	const n = 150
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d,%d,%d\n", i, (i+1)%n, 1+rng.IntN(20))
		fmt.Fprintf(&b, "%d,%d,%d\n", i, rng.IntN(n), 1+rng.IntN(20))
	}
	in := writeFile(t, dir, "g.csv", b.String())
	gpu := pipeline.GPUStatus()
	var want []byte
	for _, engine := range []string{"cpu", "auto"} {
		for _, input := range []string{in, "-"} {
			name := fmt.Sprintf("--engine %s, input %s", engine, filepath.Base(input))
			out := filepath.Join(dir, engine+".arrow")
			var stdin []byte
			if input == "-" {
				stdin = []byte(b.String())
			}
			args := []string{"run", input, "--input-format", "csv", "--engine", engine, "--layout", "stats", "-o", out}
			start := time.Now()
			r := pathctl(t, stdin, append(args, "--verbose")...)
			took := time.Since(start)
			if r.code != 0 {
				t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
			}
			m := wallLine.FindStringSubmatch(r.stderr)
			if m == nil {
				t.Fatalf("%s: no wall-time line in %q", name, r.stderr)
			}
			if !strings.HasSuffix(r.stderr, m[0]+"\n") {
				t.Errorf("%s: the wall-time line is not the last: %q", name, r.stderr)
			}
			d := func(s string) time.Duration {
				if s == "" {
					return 0
				}
				v, err := time.ParseDuration(s)
				if err != nil {
					t.Fatalf("%s: %q in %q: %v", name, s, m[0], err)
				}
				return v
			}
			wall := d(m[1])
			var sum time.Duration
			stages := 0
			for _, i := range []int{2, 3, 4, 7, 10, 11, 12, 13} {
				sum += d(m[i])
				stages++
			}
			// Each stage is rounded to the millisecond.
			if diff := (sum - wall).Abs(); diff > time.Duration(stages)*time.Millisecond/2+time.Millisecond/2 {
				t.Errorf("%s: the stages add up to %s, the wall time is %s: %q", name, sum, wall, m[0])
			}
			if wall <= 0 || wall > took {
				t.Errorf("%s: wall time %s, the process took %s", name, wall, took)
			}
			// A CSR built on the CPU while waiting for the device lies
			// inside the wait, not in building the graph.
			if m[9] == "" && d(m[8]) > d(m[7]) {
				t.Errorf("%s: the CSR took longer than building the graph: %q", name, m[0])
			}
			early := m[6] != ""
			if wantEarly := engine == "auto" && input == "-"; early != wantEarly {
				t.Errorf("%s: device opened beside the read %v, want %v: %q", name, early, wantEarly, m[0])
			}
			// The process exits after the run: a device is left to the
			// exit; one opened from standard input's run began at start-up.
			if early && !strings.Contains(m[0], ", begun at start-up;") {
				t.Errorf("%s: the device did not open at start-up: %q", name, m[0])
			}
			if !strings.Contains(m[0], " + leaving the device to the exit ") {
				t.Errorf("%s: the device is not left to the exit: %q", name, m[0])
			}
			if engine == "cpu" && (m[4] != "" || d(m[11]) != 0) {
				t.Errorf("%s: the device was opened: %q", name, m[0])
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = got
			} else if string(got) != string(want) {
				t.Errorf("%s: the result differs from --engine cpu's", name)
			}
			if gpu.Available {
				continue
			}
			// Without --verbose, a machine without a GPU says nothing of it.
			r = pathctl(t, stdin, args...)
			if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "engine cpu") || strings.Contains(r.stderr, "GPU") {
				t.Errorf("%s, no GPU, no --verbose: exit %d, stderr %q; want the summary alone", name, r.code, r.stderr)
			}
		}
	}
}
