package arrowio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"
)

// writeSmallResult writes one small record to path as an IPC file and
// returns CreateResult's, Write's or Close's error.
func writeSmallResult(t *testing.T, path string) error {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := smallResultRecord(mem, []int64{1, 2}, []float64{0.5, 1.5})
	defer rec.Release()
	w, err := CreateResult(path, rec.Schema(), WriteOptions{Format: outArrow, Allocator: mem})
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// mknodOrSkip makes a character device node like /dev/null (1, 3) or
// /dev/full (1, 7) at path, so that tests never write the system's own.
func mknodOrSkip(t *testing.T, path string, minor int) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, uint32(minor)))); err != nil {
		t.Skipf("cannot make a device node here (%v)", err)
	}
}

func TestResultIntoDevice(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	mknodOrSkip(t, null, 3)
	if err := writeSmallResult(t, null); err != nil {
		t.Fatalf("writing into a null device: %v", err)
	}
	fi, err := os.Lstat(null)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device was replaced by a %v", fi.Mode())
	}
	dirHoldsOnly(t, dir, "null")

	full := filepath.Join(dir, "full")
	mknodOrSkip(t, full, 7)
	err = writeSmallResult(t, full)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing into a full device: %v, want ENOSPC", err)
	}
	if fi, err := os.Lstat(full); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the full device was replaced (%v, %v)", fi, err)
	}
	dirHoldsOnly(t, dir, "full", "null")
}

func TestResultIntoFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.arrow")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// The reading end opens first, without blocking, so that the writer's
	// open finds a reader; the result fits the pipe's buffer.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := writeSmallResult(t, fifo); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if len(b) < 12 || string(b[:6]) != arrowFileMagic {
		t.Fatalf("the reader of the FIFO got %d bytes, not an Arrow file", len(b))
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced (%v, %v)", fi, err)
	}
	dirHoldsOnly(t, dir, "pipe.arrow")
}

func TestResultThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "data")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(sub, "real.arrow")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.arrow")
	if err := os.Symlink("data/real.arrow", link); err != nil {
		t.Fatal(err)
	}
	if err := writeSmallResult(t, link); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(link); err != nil || target != "data/real.arrow" {
		t.Fatalf("the link was replaced: readlink = %q, %v", target, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(real)
	if len(b) < 6 || string(b[:6]) != arrowFileMagic {
		t.Fatalf("the link's target holds %q, not the result", b)
	}
	dirHoldsOnly(t, sub, "real.arrow")

	// A dangling link gets its target created.
	dangling := filepath.Join(dir, "new.arrow")
	if err := os.Symlink("data/later.arrow", dangling); err != nil {
		t.Fatal(err)
	}
	if err := writeSmallResult(t, dangling); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the dangling link was replaced (%v, %v)", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(sub, "later.arrow")); len(b) < 6 || string(b[:6]) != arrowFileMagic {
		t.Fatal("the dangling link's target was not written")
	}

	// A directory is refused, naming the path.
	if err := writeSmallResult(t, sub); err == nil {
		t.Fatal("writing a result over a directory succeeded")
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	return cmd.Process.Pid
}

func TestStaleTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	tag := hostTag()
	dead := deadPid(t)
	stale := ".old.arrow.tmp-" + strconv.Itoa(dead) + "-" + tag + "-123456"
	live := ".other.arrow.tmp-" + strconv.Itoa(os.Getppid()) + "-" + tag + "-7"
	foreign := ".old.arrow.tmp-" + strconv.Itoa(dead) + "-0badc0de-9"
	if tag == "0badc0de" {
		t.Skip("host tag collides with the test's foreign tag")
	}
	unrelated := ".keep.tmp-1"
	for _, name := range []string{stale, live, foreign, unrelated} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSmallResult(t, filepath.Join(dir, "out.arrow")); err != nil {
		t.Fatal(err)
	}
	dirHoldsOnly(t, dir, unrelated, foreign, live, "out.arrow")
}

func TestParseTempName(t *testing.T) {
	name := tempPrefix("a-b.tmp-c.arrow") + "42"
	pid, tag, ok := parseTempName(name)
	if !ok || pid != os.Getpid() || tag != hostTag() {
		t.Fatalf("parseTempName(%q) = %d, %q, %v", name, pid, tag, ok)
	}
	for _, bad := range []string{"out.arrow", ".x.tmp-12", ".x.tmp-12-abc-1", ".x.tmp--0badc0de-1", ".x.tmp-1-0badc0de-"} {
		if _, _, ok := parseTempName(bad); ok {
			t.Errorf("parseTempName(%q) accepted", bad)
		}
	}
}

// TestResultIntoMemfd writes through /dev/fd/N and /proc/self/fd/N of a
// memfd, as the Python package passes one: the bytes land in the memfd
// itself, and nothing is created beside the descriptor's link target.
func TestResultIntoMemfd(t *testing.T) {
	for _, form := range []string{"/dev/fd/%d", "/proc/self/fd/%d"} {
		fd, err := unix.MemfdCreate("arrowio-test", unix.MFD_CLOEXEC)
		if err != nil {
			t.Skipf("no memfd here (%v)", err)
		}
		f := os.NewFile(uintptr(fd), "memfd")
		path := fmt.Sprintf(form, fd)
		if _, err := os.Stat(path); err != nil {
			f.Close()
			t.Skipf("%s: %v", path, err)
		}
		if err := writeSmallResult(t, path); err != nil {
			f.Close()
			t.Fatalf("%s: %v", path, err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, len(arrowFileMagic))
		if _, err := f.ReadAt(head, 0); err != nil || string(head) != arrowFileMagic || st.Size() < 64 {
			t.Errorf("%s: memfd holds %d bytes starting %q (err %v), want an Arrow IPC file", path, st.Size(), head, err)
		}
		f.Close()
		if _, err := os.Lstat("/memfd:arrowio-test (deleted)"); err == nil {
			os.Remove("/memfd:arrowio-test (deleted)")
			t.Errorf("%s: a file was created at the link's target instead of writing in place", path)
		}
	}
}
