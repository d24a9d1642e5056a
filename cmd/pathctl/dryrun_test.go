package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigMatrixGraph is a DIMACS file that declares 2^22 vertices and one
// arc: reading it is quick, its matrix (some 70 TB) fits on no disk here.
func bigMatrixGraph(t *testing.T, dir string) string {
	return writeFile(t, dir, "big.gr", "p sp 4194304 1\na 1 2 1\n")
}

// TestDryRunPrintsThePlanAndWritesNothing: --dry-run exits 0, prints the
// vertices, sources, targets, rows, size, engine and algorithm, and
// leaves the output's directory empty (no temporary file either).
func TestDryRunPrintsThePlanAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r := pathctl(t, nil, "run", "../../testdata/sample.gr", "--dry-run", "--layout", "matrix", "--engine", "cpu", "-o", filepath.Join(out, "m.arrow"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"vertices:   2000", "sources:    2000 (every vertex)", "targets:    2000 (every vertex)",
		"matrix, 2000 rows, int32 distances", "output:     about 17.", "MiB to " + filepath.Join(out, "m.arrow"), "free there",
		"engine:     cpu\n", "algorithm:  auto: ", "time:       no estimate"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run does not say %q:\n%s", want, r.stdout)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}
	// Pairs of two sources: a bound of rows; few sources stay on the CPU.
	r = pathctl(t, nil, "run", "../../testdata/sample.gr", "--dry-run", "--sources", "1,2", "-o", filepath.Join(out, "p.csv"))
	for _, want := range []string{"sources:    2\n", "at most 4000 rows", "(CSV, each number at its widest", "engine:     cpu (2 sources"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run of 2 sources does not say %q:\n%s", want, r.stdout)
		}
	}
	// An unknown source is the run's error.
	oneErrorLine(t, pathctl(t, nil, "run", "../../testdata/sample.gr", "--dry-run", "--sources", "999999"), 2, "999999")
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}
}

// TestSpaceRefusesOutputAboveFreeSpace: a matrix larger than the free
// space of its file system exits 3 naming both sizes, before anything is
// written; a dry run says it would be refused.
func TestSpaceRefusesOutputAboveFreeSpace(t *testing.T) {
	dir := t.TempDir()
	edges := bigMatrixGraph(t, dir)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r := pathctl(t, nil, "run", edges, "--layout", "matrix", "-o", filepath.Join(out, "m.arrow"))
	oneErrorLine(t, r, 3, "needs about 66.0 TiB (estimated)", " free;", "--force")
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("refused run wrote %v", entries)
	}
	r = pathctl(t, nil, "run", edges, "--layout", "matrix", "--dry-run", "-o", filepath.Join(out, "m.arrow"))
	if r.code != 0 || !strings.Contains(r.stdout, "the run would be refused (exit 3) without --force") {
		t.Errorf("dry run: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSpaceCheckForceAndStreams: the check compares the estimate with the
// free space, --force and outputs without a file system pass.
func TestSpaceCheckForceAndStreams(t *testing.T) {
	dir := t.TempDir()
	free := func(string) (int64, error) { return 1000, nil }
	err := checkOutputSpace(filepath.Join(dir, "x.arrow"), 5000, false, free)
	var ie inputError
	if !errors.As(err, &ie) || exitCode(err) != 3 || !strings.Contains(err.Error(), "4.9 KiB") || !strings.Contains(err.Error(), "1000 B free") {
		t.Errorf("5000 bytes on 1000 free: %v (exit %d)", err, exitCode(err))
	}
	if err := checkOutputSpace(filepath.Join(dir, "x.arrow"), 999, false, free); err != nil {
		t.Errorf("999 bytes on 1000 free: %v", err)
	}
	if err := checkOutputSpace(filepath.Join(dir, "x.arrow"), 5000, true, free); err != nil {
		t.Errorf("--force: %v", err)
	}
	for _, out := range []string{"-", "/dev/null", "/dev/stdout"} {
		if err := checkOutputSpace(out, 5000, false, free); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
	// A dataset directory not yet made is checked on its nearest parent.
	if got := spaceDir(filepath.Join(dir, "a", "b") + "/"); got != dir {
		t.Errorf("spaceDir of a new dataset = %q, want %q", got, dir)
	}
}
