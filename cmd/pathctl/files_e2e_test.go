package main

// End-to-end tests of issue 14's points on files, inputs and answers: output
// paths that are not regular files, leftovers of killed runs, size bombs,
// overflowing distances, duplicate columns, interrupts while reading and
// duplicate sources.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// oneErrorLine asserts a single "pathctl: " error line naming every want,
// without a goroutine dump.
func oneErrorLine(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "pathctl: ") || strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "fatal error") {
		t.Fatalf("want one 'pathctl: ' error line, got %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error %q does not name %q", last, w)
		}
	}
}

func TestOutputPathIsTheInputOrTheOutput(t *testing.T) {
	dir := t.TempDir()
	body := "src,dst,weight\n1,2,3\n2,3,4\n"
	in := writeFile(t, dir, "g.csv", body)
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("g.csv", link); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.arrow")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", in, "-o", in, "--format", "csv"}, "input"},
		{[]string{"run", in, "-o", link, "--format", "csv"}, "input"},
		{[]string{"run", in, "-o", "./" + filepath.Base(in), "--format", "csv"}, "input"},
		{[]string{"run", in, "--layout", "matrix", "-o", out, "--vertices-out", out}, "vertices-out"},
		{[]string{"run", in, "--layout", "matrix", "-o", out, "--vertices-out", in}, "input"},
	} {
		cmdDir, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		r := pathctl(t, nil, c.args...)
		os.Chdir(cmdDir)
		oneErrorLine(t, r, exitUsage, c.want)
		if got, _ := os.ReadFile(in); string(got) != body {
			t.Fatalf("%v: the input was changed to %q", c.args, got)
		}
		assertNoOutput(t, dir, "m.")
	}
}

func TestOutputIntoDeviceAndThroughLink(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	null := filepath.Join(dir, "null")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot make a device node here (%v)", err)
	}
	for _, layout := range []string{"pairs", "matrix"} {
		r := pathctl(t, nil, "run", in, "--layout", layout, "-o", null, "--format", "arrow", "--quiet")
		if r.code != 0 {
			t.Fatalf("%s into a device: exit %d: %s", layout, r.code, r.stderr)
		}
		if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("the device was replaced (%v, %v)", fi, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("files beside the device: %v", entries)
	}
	full := filepath.Join(dir, "full")
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Skipf("cannot make a device node here (%v)", err)
	}
	r := pathctl(t, nil, "run", in, "-o", full, "--format", "arrow", "--quiet")
	oneErrorLine(t, r, exitError, "no space left on device")

	target := filepath.Join(dir, "real.arrow")
	link := filepath.Join(dir, "out.arrow")
	if err := os.Symlink("real.arrow", link); err != nil {
		t.Fatal(err)
	}
	if r := pathctl(t, nil, "run", in, "-o", link, "--quiet"); r.code != 0 {
		t.Fatalf("through a link: exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced (%v, %v)", fi, err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Size() == 0 {
		t.Fatalf("the link's target was not written (%v, %v)", fi, err)
	}
}

func TestInputBombsRefused(t *testing.T) {
	dir := t.TempDir()
	gr := writeFile(t, dir, "bomb.gr", "p sp 2000000000 1\na 1 2 1\n")
	r := pathctl(t, nil, "run", gr, "-o", filepath.Join(dir, "out.arrow"))
	oneErrorLine(t, r, exitInput, "bomb.gr", "2000000000", "--max-vertices")
	assertNoOutput(t, dir, "out.")

	long := writeFile(t, dir, "long.csv", "src,dst\n1,2\n2,"+strings.Repeat("7", 3<<20)+"\n")
	r = pathctl(t, nil, "run", long, "-o", filepath.Join(dir, "out.arrow"))
	oneErrorLine(t, r, exitInput, "long.csv", "line 3 is longer than")
	assertNoOutput(t, dir, "out.")
}

func TestInterruptWhileReading(t *testing.T) {
	cmd := exec.Command(binPath, "run", "-", "--input-format", "csv", "-o", filepath.Join(t.TempDir(), "out.arrow"), "--quiet")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Feed rows until the process stops reading them.
	go func() {
		stdin.Write([]byte("src,dst,weight\n"))
		rows := bytes.Repeat([]byte("1,2,3\n2,3,4\n"), 1<<14)
		for {
			if _, err := stdin.Write(rows); err != nil {
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if d := time.Since(sent); d > 500*time.Millisecond {
			t.Errorf("the run ended %s after SIGINT, want within 0.5 s", d)
		}
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit %v, want %d; stderr %q", err, exitInterrupted, errb.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the run ignored SIGINT for 5 s while reading")
	}
}

func TestGenRefusesWhatMemoryCannotHold(t *testing.T) {
	dir := t.TempDir()
	// 2^36 arcs, 1.5 TiB of columns: more than any test machine has.
	r := pathctl(t, nil, "gen", "rmat", "--scale", "30", "--edge-factor", "64", "-o", filepath.Join(dir, "g.parquet"))
	oneErrorLine(t, r, exitInput, "too large for memory", "TiB", "available")
	assertNoOutput(t, dir, "g.")
}

func TestDuplicateSourcesRunOnce(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n3,1,5\n")
	list := writeFile(t, dir, "sources.txt", strings.Repeat("3\n1\n3\n", 100000))
	out := filepath.Join(dir, "out.csv")
	r := pathctl(t, nil, "run", in, "--sources-file", list, "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "2 sources") {
		t.Errorf("summary %q does not say 2 sources", r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// The header, then 3 rows from source 3, then 3 from source 1: first
	// order kept, no repeats.
	if len(lines) != 7 || !strings.HasPrefix(lines[1], "3,") || !strings.HasPrefix(lines[4], "1,") {
		t.Fatalf("result %q, want sources 3 then 1, three rows each", lines)
	}
}

func TestOverflowingDistancesRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"int.csv", "src,dst,weight\n1,2,4611686018427387904\n2,3,4611686018427387904\n", "edge 1 -> 2"},
		{"max.csv", "src,dst,weight\n1,2,9223372036854775807\n", "edge 1 -> 2"},
		{"float.csv", "src,dst,weight\n1,2,1e308\n2,3,1e308\n", "float64"},
	} {
		in := writeFile(t, dir, c.name, c.body)
		for _, args := range [][]string{
			{"run", in, "-o", filepath.Join(dir, "out.arrow")},
			{"run", in, "--algo", "bellman-ford", "-o", filepath.Join(dir, "out.arrow")},
			{"verify", in},
		} {
			r := pathctl(t, nil, args...)
			oneErrorLine(t, r, exitInput, c.name, c.want, "overflow")
			assertNoOutput(t, dir, "out.")
		}
	}
}

func TestOutputToDevStdout(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	// Standard output a pipe.
	r := pathctl(t, nil, "run", in, "--sources", "1", "-o", "/dev/stdout", "--format", "csv", "--quiet")
	if r.code != 0 || !strings.Contains(r.stdout, "1,3,7") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Standard output a file: written in place, not renamed over.
	outPath := filepath.Join(dir, "redirected.csv")
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "run", in, "--sources", "1", "--layout", "matrix", "-o", "/dev/stdout", "--format", "csv", "--quiet")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &errb
	err = cmd.Run()
	f.Close()
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	b, _ := os.ReadFile(outPath)
	if !strings.Contains(string(b), "1,0,3,7") {
		t.Fatalf("the redirected file holds %q", b)
	}
}

// TestMatrixVerticesBesideSharedMemory writes a matrix into /dev/shm, where
// files are ordinary: its vertex order goes beside it as anywhere else
// (only devices, FIFOs and names like /dev/stdout go without one).
func TestMatrixVerticesBesideSharedMemory(t *testing.T) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm on this machine")
	}
	dir, err := os.MkdirTemp("/dev/shm", "pathctl-test-")
	if err != nil {
		t.Skipf("/dev/shm is not writable here: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	in := writeFile(t, t.TempDir(), "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	out := filepath.Join(dir, "m.arrow")
	if r := pathctl(t, nil, "run", in, "--layout", "matrix", "-o", out); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.vertices.arrow")); err != nil {
		t.Fatalf("no vertex order beside a matrix in /dev/shm: %v", err)
	}
}
