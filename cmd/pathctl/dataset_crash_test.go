package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pathctl/pathctl/pipeline"
)

// datasetEngines are the engines the crash tests run on: the CPU, and the
// GPU where one is usable.
func datasetEngines(t *testing.T) []string {
	engines := []string{"cpu"}
	if st := pipeline.GPUStatus(); st.Available {
		engines = append(engines, "gpu")
	} else {
		t.Logf("no GPU (%s): the CPU engine only", st.Reason)
	}
	return engines
}

// readLikeDataset reads dir as pyarrow.dataset, DuckDB and Spark discover
// it: every file below it, in path order, leaving out each name (of a
// file or a directory) that starts with "." or "_". Each file must read
// whole, with the given schema (tableRows fails the test otherwise).
func readLikeDataset(t *testing.T, dir, schema string) []string {
	t.Helper()
	var rows []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		s, r := tableRows(t, p)
		if s != schema {
			t.Fatalf("%s: schema %s, want %s", p, s, schema)
		}
		rows = append(rows, r...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkSubset fails unless every row of got is a row of want, none twice.
func checkSubset(t *testing.T, got, want []string) {
	t.Helper()
	left := map[string]int{}
	for _, r := range want {
		left[r]++
	}
	for _, r := range got {
		if left[r] == 0 {
			t.Fatalf("row %q: not in the uninterrupted run's, or there twice", r)
		}
		left[r]--
	}
}

// pathctlKilled runs the binary and fails the test unless SIGKILL ended it.
func pathctlKilled(t *testing.T, args ...string) {
	t.Helper()
	r := pathctlRun(t, args...)
	if r.signal != syscall.SIGKILL {
		t.Fatalf("pathctl %v: exit %d (signal %v), want killed: %s", args, r.code, r.signal, r.stderr)
	}
}

type signalResult struct {
	result
	signal syscall.Signal
}

// pathctlRun is pathctl, also saying which signal ended the process.
func pathctlRun(t *testing.T, args ...string) signalResult {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := signalResult{result: result{stdout: out.String(), stderr: errb.String()}}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	} else if err != nil {
		t.Fatalf("running pathctl %v: %v", args, err)
	}
	return r
}

// TestDatasetKilledAndResumed kills runs with SIGKILL in the middle of a
// block, between a block's rename and its manifest entry, between blocks
// while the partial or the complete manifest is written and after the
// complete one is in place, in every
// layout of a file per source block and both formats. After each kill the
// dataset reads whole as a reader discovers it, holding only rows of the
// uninterrupted run, none twice; after --resume its rows are the
// uninterrupted run's, with no temporary file left. The blocks of the
// points are drawn at random (the seed is printed on failure).
func TestDatasetKilledAndResumed(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 42))
	t.Logf("seed %d", seed)
	const blocks = 4 // 7 sources, 2 a block
	points := func() []string {
		return []string{
			fmt.Sprintf("kill:part:%d", rng.IntN(blocks)),
			fmt.Sprintf("kill:renamed:%d", rng.IntN(blocks)),
			fmt.Sprintf("kill:manifest:%d", rng.IntN(blocks)), // between blocks: the block's file complete, the manifest half
			"kill:part:0",
			"kill:manifest:final",
			"kill:renamed:final",
		}
	}
	for _, engine := range datasetEngines(t) {
		for i, lf := range []struct{ layout, format string }{{"pairs", "parquet"}, {"matrix", "arrow"}, {"stats", "parquet"}} {
			if engine == "gpu" && i > 0 {
				break // each run opens the device: the GPU kills one layout, the CPU every one
			}
			one := filepath.Join(tmp, engine+"-"+lf.layout+"."+lf.format)
			if r := pathctl(t, nil, "run", edges, "--engine", engine, "-q", "--layout", lf.layout, "-o", one); r.code != 0 {
				t.Fatalf("one file: %s", r.stderr)
			}
			schema, want := tableRows(t, one)
			for _, point := range points() {
				name := engine + "/" + lf.layout + "-" + lf.format + "/" + point
				t.Run(name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "ds") + "/"
					args := []string{"run", edges, "--engine", engine, "-q", "--layout", lf.layout, "--format", lf.format,
						"--dataset-block", "2", "-o", dir}
					pathctlKilled(t, append(args, "--dataset-fault", point)...)
					checkSubset(t, readLikeDataset(t, dir, schema), want)
					if r := pathctl(t, nil, append(args, "--resume")...); r.code != 0 {
						t.Fatalf("seed %d: --resume: exit %d: %s", seed, r.code, r.stderr)
					}
					if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
						t.Fatalf("seed %d: resumed rows\n%v\nwant\n%v", seed, got, want)
					}
					if got := readLikeDataset(t, dir, schema); !slices.Equal(got, want) {
						t.Fatalf("seed %d: the resumed dataset as discovered\n%v\nwant\n%v", seed, got, want)
					}
				})
			}
		}
	}
}

// TestDatasetKilledTruncatedResumed kills a run, then truncates a block
// the partial manifest lists: --resume computes that block again with the
// ones never written.
func TestDatasetKilledTruncatedResumed(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", edges, "--engine", "cpu", "-q", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	dir := filepath.Join(tmp, "ds") + "/"
	args := []string{"run", edges, "--engine", "cpu", "-q", "--dataset-block", "2", "-o", dir}
	pathctlKilled(t, append(args, "--dataset-fault", "kill:part:3")...)
	part := filepath.Join(dir, "source_block=00001", "part-0.parquet")
	if err := os.Truncate(part, 20); err != nil {
		t.Fatal(err)
	}
	r := pathctl(t, nil, append(args, "--resume")...)
	if r.code != 0 {
		t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
	}
	if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
		t.Fatalf("resumed rows\n%v\nwant\n%v", got, want)
	}
}

// TestDatasetKilledFromOutside kills a slowed run (one thread, small
// blocks) with SIGKILL from outside at a random moment after its first
// manifest, twice, resuming after each: the rows end equal to the
// uninterrupted run's.
func TestDatasetKilledFromOutside(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "grid.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "40", "--cols", "40", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", in, "--engine", "cpu", "-q", "--layout", "stats", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := filepath.Join(tmp, "ds") + "/"
	args := []string{"run", in, "--engine", "cpu", "--threads", "1", "-q", "--layout", "stats", "--dataset-block", "40", "-o", dir}
	for kill := 0; kill < 2; kill++ {
		run := slices.Clone(args)
		if kill > 0 {
			run = append(run, "--resume")
		}
		cmd := exec.Command(binPath, run...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The moment: a random delay after the partial manifest exists.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, datasetPartial)); err == nil {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		time.Sleep(delay)
		cmd.Process.Kill()
		err := cmd.Wait()
		t.Logf("seed %d: kill %d after %s: %v", seed, kill, delay, err)
		if err == nil {
			break // finished before the kill: the resume below does nothing
		}
		checkSubset(t, readLikeDataset(t, dir, schema), want)
	}
	if r := pathctl(t, nil, append(args, "--resume")...); r.code != 0 {
		t.Fatalf("seed %d: --resume: exit %d: %s", seed, r.code, r.stderr)
	}
	if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
		t.Fatalf("seed %d: resumed rows differ from the uninterrupted run's (%d rows, want %d)", seed, len(got), len(want))
	}
}

// TestDatasetDiskFullInjected fails a block's write, then a partial
// manifest's, with ENOSPC: exit 3 and one line that says the disk is full
// and that --resume finishes; the dataset reads whole, no temporary file
// is left, and --resume completes it.
func TestDatasetDiskFullInjected(t *testing.T) {
	tmp := t.TempDir()
	edges := datasetEdges(t, tmp)
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", edges, "--engine", "cpu", "-q", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	for _, fault := range []string{"enospc:part:2", "enospc:manifest:1", "enospc:part:0"} {
		t.Run(fault, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds") + "/"
			args := []string{"run", edges, "--engine", "cpu", "-q", "--dataset-block", "2", "-o", dir}
			r := pathctl(t, nil, append(args, "--dataset-fault", fault)...)
			if r.code != exitInput || !strings.Contains(r.stderr, "disk is full") || !strings.Contains(r.stderr, "--resume") ||
				strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 3 and one line naming the full disk and --resume", r.code, r.stderr)
			}
			checkSubset(t, readLikeDataset(t, dir, schema), want)
			noTemporaries(t, dir)
			if r := pathctl(t, nil, append(args, "--resume")...); r.code != 0 {
				t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
			}
			if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
				t.Fatalf("resumed rows\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// noTemporaries fails the test where a hidden temporary file lies in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestDatasetDiskFullTmpfs writes a dataset onto a tmpfs of 128 KiB, in a
// mount namespace of its own (unshare), which fills up mid-run; then the
// tmpfs is made larger and the run resumed. The states after the failure
// and after the resume are copied out and checked as in
// TestDatasetDiskFullInjected, against the one-file output.
func TestDatasetDiskFullTmpfs(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare here to mount a small tmpfs (TestDatasetDiskFullInjected covers the full disk)")
	}
	if err := exec.Command("unshare", "-rm", "true").Run(); err != nil {
		t.Skipf("no mount namespace here (%v); TestDatasetDiskFullInjected covers the full disk", err)
	}
	tmp := t.TempDir()
	in := filepath.Join(tmp, "grid.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "20", "--cols", "20", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", in, "--engine", "cpu", "-q", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	mnt := filepath.Join(tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each block's file is about 36 KB: the fourth or so fills 128 KiB.
	script := `mount -t tmpfs -o size=128k tmpfs "$MNT" || exit 99
run() { "$BIN" run "$IN" --engine cpu -q --force --dataset-block 50 -o "$MNT/ds/" "$@"; }
run 2>"$OUT/fail.err"; echo $? >"$OUT/fail.code"
cp -a "$MNT/ds" "$OUT/after-fail"
mount -o remount,size=64m "$MNT" || exit 99
run --resume 2>"$OUT/resume.err"; echo $? >"$OUT/resume.code"
cp -a "$MNT/ds" "$OUT/resumed"`
	cmd := exec.Command("unshare", "-rm", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "MNT="+mnt, "BIN="+binPath, "IN="+in, "OUT="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 {
			t.Skipf("cannot mount a tmpfs in a mount namespace here: %s", out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if code, stderr := read("fail.code"), read("fail.err"); code != "3" || !strings.Contains(stderr, "disk is full") || strings.Contains(stderr, "\n") {
		t.Fatalf("the run into a full tmpfs: exit %s, stderr %q; want 3 and one line naming the full disk", code, stderr)
	}
	failed := filepath.Join(tmp, "after-fail")
	got := readLikeDataset(t, failed, schema)
	if len(got) == 0 || len(got) == len(want) {
		t.Fatalf("the failed run kept %d of %d rows; want some, not all", len(got), len(want))
	}
	checkSubset(t, got, want)
	noTemporaries(t, failed)
	if code, stderr := read("resume.code"), read("resume.err"); code != "0" {
		t.Fatalf("--resume once there is room: exit %s: %s", code, stderr)
	}
	if got := datasetRows(t, filepath.Join(tmp, "resumed"), schema); !slices.Equal(got, want) {
		t.Fatalf("resumed rows differ from the one file's (%d rows, want %d)", len(got), len(want))
	}
}

// TestDatasetInterrupted: SIGINT once a block is complete exits 130 and
// says that the blocks complete are kept and that --resume continues (not
// "no output written"); no temporary file is left, and --resume ends with
// the uninterrupted run's rows.
func TestDatasetInterrupted(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "grid.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "40", "--cols", "40", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	one := filepath.Join(tmp, "one.parquet")
	if r := pathctl(t, nil, "run", in, "--engine", "cpu", "-q", "--layout", "stats", "-o", one); r.code != 0 {
		t.Fatal(r.stderr)
	}
	schema, want := tableRows(t, one)
	dir := filepath.Join(tmp, "ds") + "/"
	args := []string{"run", in, "--engine", "cpu", "--threads", "1", "--layout", "stats", "--dataset-block", "20", "-o", dir}
	cmd := exec.Command(binPath, append(slices.Clone(args), "-q")...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var m datasetManifestFile
		if b, err := os.ReadFile(filepath.Join(dir, datasetPartial)); err == nil && json.Unmarshal(b, &m) == nil && len(m.Files) > 0 {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Skipf("the run finished before the interrupt (%v); nothing to check", err)
	}
	if ee.ExitCode() != exitInterrupted || !strings.Contains(errb.String(), "pathctl: interrupted; "+dir+" keeps ") ||
		!strings.Contains(errb.String(), "--resume computes the rest") {
		t.Fatalf("exit %d, stderr %q; want 130 saying the blocks are kept", ee.ExitCode(), errb.String())
	}
	noTemporaries(t, dir)
	checkSubset(t, readLikeDataset(t, dir, schema), want)
	if r := pathctl(t, nil, append(args, "-q", "--resume")...); r.code != 0 {
		t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
	}
	if got := datasetRows(t, dir, schema); !slices.Equal(got, want) {
		t.Fatalf("resumed rows differ from the one file's (%d rows, want %d)", len(got), len(want))
	}
}
