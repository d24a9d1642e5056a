package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeDataDirInUse starts `pathctl serve` and a second one on the same
// data directory: the second exits 1 naming the directory and the first
// server's process, and leaves the directory alone.
func TestServeDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	first := exec.Command(binPath, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	stderr, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		first.Process.Kill()
		first.Wait()
	}()
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "pathctl: listening on ") {
				listening <- true
			}
		}
		listening <- false
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("the first server stopped before listening")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first server did not start")
	}
	marker := filepath.Join(dir, "tmp", "upload-1.arrow.tmp")
	if err := os.WriteFile(marker, []byte("half an upload"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pathctl(t, nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	want := fmt.Sprintf("data directory %s is in use by process %d", dir, first.Process.Pid)
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("second server: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the second server touched the first one's files: %v", err)
	}
}

// TestServePublicBind: an address beyond loopback without auth and TLS
// is a usage error naming what is missing, before the data directory is
// created.
func TestServePublicBind(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("secret\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "needs authentication and TLS; set --auth-token-file, --tls-cert and --tls-key, or pass --insecure-public"},
		{[]string{"--auth-token-file", tokenFile}, "needs TLS; set --tls-cert and --tls-key"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		r := pathctl(t, nil, append([]string{"serve", "--addr", "0.0.0.0:0", "--data-dir", dir}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("serve %v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("serve %v created its data directory", c.args)
		}
	}
}

// TestRunCompressedLengthBomb runs the CLI on the 1 KB IPC file and stream
// of the FuzzReadIPC seeds whose compressed buffers declare 128 TiB: before
// the check of arrowio/read_ipccheck.go the process died with "fatal
// error: runtime: out of memory"; now it exits 3 with one line.
func TestRunCompressedLengthBomb(t *testing.T) {
	dir, inputs := t.TempDir(), t.TempDir()
	for _, seed := range []string{"zstd-file-declares-128TiB", "zstd-stream-declares-128TiB"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "arrowio", "testdata", "fuzz", "FuzzReadIPC", seed))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Split(string(b), "\n")[1]
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", seed, err)
		}
		in := filepath.Join(inputs, seed+".arrow")
		os.WriteFile(in, []byte(data), 0o644)
		r := pathctl(t, nil, "run", in, "-o", filepath.Join(dir, seed+".csv"))
		if r.code != 3 || !strings.Contains(r.stderr, "decodes to more bytes than allowed") || strings.Contains(r.stderr, "fatal error") ||
			strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 3 and one line", seed, r.code, r.stderr)
		}
		assertNoOutput(t, dir, seed)
	}
}
