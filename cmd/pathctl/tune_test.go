package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneFlag checks --tune on every command that runs the GPU engine: a
// setting that is not valid is a usage error of one line naming it, with
// no output left behind, and valid settings, comma-separated or repeated,
// run (here on the CPU engine, which ignores them) and write what a run
// without them writes.
func TestTuneFlag(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,1\n1,3,5\n")
	out := filepath.Join(dir, "x.arrow")
	for _, args := range [][]string{
		{"run", in, "-o", out},
		{"sssp", in, "--source", "1", "-o", out},
		{"bfs", in, "--source", "1", "-o", out},
		{"verify", in},
		{"path", in, "--from", "1", "--to", "3"},
		{"bench", "--graphs", in, "--engine", "cpu"},
		{"serve", "--data-dir", dir},
	} {
		for bad, names := range map[string]string{
			"colour=red":      `unknown key "colour"`,
			"order=bfs,seeds": `"seeds" is not key=value`,
			"seeds=1.5":       `setting "seeds=1.5"`,
			"relabel=bfs":     `unknown key "relabel"`,
		} {
			r := pathctl(t, nil, append(args, "--tune", bad)...)
			if r.code != exitUsage || !strings.HasPrefix(r.stderr, "pathctl: --tune: ") || !strings.Contains(r.stderr, names) ||
				strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%s --tune %s: exit %d, stderr %q; want %d and one line naming %s", args[0], bad, r.code, r.stderr, exitUsage, names)
			}
			assertNoOutput(t, dir, "x.arrow")
		}
	}
	plain := pathctl(t, nil, "run", in, "--engine", "cpu", "-o", out)
	if plain.code != 0 {
		t.Fatalf("run: exit %d: %s", plain.code, plain.stderr)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tunedOut := filepath.Join(dir, "tuned.arrow")
	r := pathctl(t, nil, "run", in, "--engine", "cpu", "--tune", "order=bfs,hubpack=0", "--tune", "seeds=0.2", "-o", tunedOut)
	if r.code != 0 {
		t.Fatalf("run --tune order=bfs,hubpack=0 --tune seeds=0.2: exit %d: %s", r.code, r.stderr)
	}
	if got, err := os.ReadFile(tunedOut); err != nil || string(got) != string(want) {
		t.Errorf("the tuned run wrote other bytes than the plain one (%v)", err)
	}
}

// TestTraceSwitch checks that PATHCTL_TRACE=1, read once by the command,
// turns the step timeline on: its lines appear on stderr, and not without
// it.
func TestTraceSwitch(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,1\n")
	for _, on := range []bool{false, true} {
		cmd := exec.Command(binPath, "run", in, "--engine", "cpu", "-o", filepath.Join(dir, "out.arrow"))
		cmd.Env = append(os.Environ(), "PATHCTL_TRACE=0")
		if on {
			cmd.Env = append(cmd.Env, "PATHCTL_TRACE=1")
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("PATHCTL_TRACE on %v: %v: %s", on, err, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "pathctl trace "); got != on {
			t.Errorf("PATHCTL_TRACE on %v: trace lines %v: %q", on, got, stderr.String())
		}
	}
}
