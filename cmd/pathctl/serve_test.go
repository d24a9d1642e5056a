package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/flight"
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

// parsedConfig runs the serve command's flag parsing on args and returns
// what it makes of them, without starting a server.
func parsedConfig(t *testing.T, args ...string) (flight.Config, error) {
	t.Helper()
	cmd := serveCommand(&env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard})
	var cfg flight.Config
	var perr error
	cmd.Action = func(c *cli.Context) error {
		cfg, perr = serveConfig(c)
		return nil
	}
	app := &cli.App{Name: "pathctl", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard}
	if err := app.Run(append([]string{"pathctl", "serve", "--data-dir", t.TempDir()}, args...)); err != nil {
		t.Fatalf("serve %v: %v", args, err)
	}
	return cfg, perr
}

// TestServeSizeFlagsTakeUnits: the byte flags of serve read sizes as run
// --mem does, with the defaults unchanged; negative sizes are usage errors.
func TestServeSizeFlagsTakeUnits(t *testing.T) {
	cfg, err := parsedConfig(t)
	if err != nil || cfg.MaxUploadBytes != 4<<30 || cfg.CacheBytes != 8<<30 || cfg.MaxMessageBytes != 64<<20 || cfg.MemBudget != 0 {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parsedConfig(t, "--mem", "1GiB", "--max-upload-bytes", "512MiB", "--cache-bytes", "2GB", "--max-message-bytes", "65536")
	if err != nil || cfg.MemBudget != 1<<30 || cfg.MaxUploadBytes != 512<<20 || cfg.CacheBytes != 2e9 || cfg.MaxMessageBytes != 65536 {
		t.Errorf("units: %+v, %v", cfg, err)
	}
	for _, flag := range []string{"mem", "max-upload-bytes", "cache-bytes", "max-message-bytes"} {
		var usage usageError
		if _, err := parsedConfig(t, "--"+flag, "-1"); !errors.As(err, &usage) || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--%s -1: %v; want a usage error naming the flag", flag, err)
		}
	}
	if _, err := parsedConfig(t, "--max-message-bytes", "4GiB"); err == nil {
		t.Errorf("--max-message-bytes 4GiB accepted")
	}
	// End to end: a negative size exits 2 with one line, before the data
	// directory is created.
	dir := filepath.Join(t.TempDir(), "data")
	r := pathctl(t, nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--cache-bytes", "-1GiB")
	if r.code != 2 || !strings.Contains(r.stderr, "--cache-bytes") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("serve --cache-bytes -1GiB: exit %d, stderr %q; want 2 and one line naming the flag", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("serve with a bad size created its data directory")
	}
}

// TestServeNoBackgroundIndex: --no-background-index reaches flight.Config
// (off by default) and serve --help names it.
func TestServeNoBackgroundIndex(t *testing.T) {
	cfg, err := parsedConfig(t)
	if err != nil || cfg.NoBackgroundIndex {
		t.Errorf("default: NoBackgroundIndex %v, %v; want false", cfg.NoBackgroundIndex, err)
	}
	cfg, err = parsedConfig(t, "--no-background-index")
	if err != nil || !cfg.NoBackgroundIndex {
		t.Errorf("--no-background-index: NoBackgroundIndex %v, %v; want true", cfg.NoBackgroundIndex, err)
	}
	if r := inProcess(t, "serve", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--no-background-index") {
		t.Errorf("serve --help: exit %d, no --no-background-index in\n%s", r.code, r.stdout)
	}
}

// TestServeNoResidentCSR: --no-resident-csr reaches flight.Config (off by
// default), and serve --help names it and says that --cache-bytes counts
// the device bytes of resident CSRs.
func TestServeNoResidentCSR(t *testing.T) {
	cfg, err := parsedConfig(t)
	if err != nil || cfg.NoResidentCSR {
		t.Errorf("default: NoResidentCSR %v, %v; want false", cfg.NoResidentCSR, err)
	}
	cfg, err = parsedConfig(t, "--no-resident-csr")
	if err != nil || !cfg.NoResidentCSR {
		t.Errorf("--no-resident-csr: NoResidentCSR %v, %v; want true", cfg.NoResidentCSR, err)
	}
	r := inProcess(t, "serve", "--help")
	help := strings.Join(strings.Fields(r.stdout), " ")
	if r.code != 0 || !strings.Contains(help, "--no-resident-csr") {
		t.Errorf("serve --help: exit %d, no --no-resident-csr in\n%s", r.code, r.stdout)
	}
	if !regexp.MustCompile(`--cache-bytes value [^-]*device bytes`).MatchString(help) {
		t.Errorf("serve --help: --cache-bytes does not mention device bytes:\n%s", r.stdout)
	}
}
