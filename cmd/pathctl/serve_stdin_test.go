package main

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestExitWithStdinCancelsAtEOF: the context ends when stdin closes, and
// not before.
func TestExitWithStdinCancelsAtEOF(t *testing.T) {
	r, w := io.Pipe()
	ctx := exitWithStdin(context.Background(), r)
	if _, err := w.Write([]byte("ignored\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
		t.Fatal("cancelled while stdin is open")
	case <-time.After(50 * time.Millisecond):
	}
	w.Close()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled 5 s after stdin closed")
	}
}

// TestServeExitWithStdin: `serve --exit-with-stdin` listens, then exits
// with status 0 once its stdin pipe is closed (its parent gone).
func TestServeExitWithStdin(t *testing.T) {
	cmd := exec.Command(binPath, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--exit-with-stdin")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := regexp.MustCompile(`^pathctl: listening on 127\.0\.0\.1:\d+$`)
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	timeout := time.After(10 * time.Second)
wait:
	for {
		select {
		case ln, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before listening:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, ln)
			if listening.MatchString(ln) {
				break wait
			}
		case <-timeout:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no listening line in 10 s:\n%s", strings.Join(seen, "\n"))
		}
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() {
		for range lines { // drain stderr, then reap
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after stdin closed", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("serve still running 10 s after stdin closed")
	}
}
