package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalsLeaveNoTemporaryOutput sends SIGTERM, SIGHUP (a closed
// terminal or SSH session) and SIGQUIT to a long run once its temporary
// output exists: the first two end it as interrupted (130), SIGQUIT with
// a goroutine dump and 131; none leaves a file in the output's directory
// (SIGHUP and SIGQUIT left the .tmp- file; issue 37, point 12).
func TestSignalsLeaveNoTemporaryOutput(t *testing.T) {
	in := filepath.Join(t.TempDir(), "grid.parquet")
	if r := pathctl(t, nil, "gen", "grid", "--rows", "200", "--cols", "200", "-o", in); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
		// nohup starts the binary with SIGHUP ignored (as nohup does,
		// through a shell's trap): SIGHUP must not end it then; a SIGTERM
		// sent after it does.
		nohup bool
	}{
		{"SIGTERM", syscall.SIGTERM, exitInterrupted, false},
		{"SIGHUP", syscall.SIGHUP, exitInterrupted, false},
		{"SIGQUIT", syscall.SIGQUIT, exitQuit, false},
		{"SIGHUP ignored", syscall.SIGHUP, exitInterrupted, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// 40,000 sources on one thread: minutes of work, so the
			// signal always comes mid-run.
			args := []string{"run", in, "--engine", "cpu", "--threads", "1", "--layout", "stats",
				"-o", filepath.Join(dir, "stats.arrow"), "--quiet"}
			cmd := exec.Command(binPath, args...)
			if c.nohup {
				cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" HUP; exec "$0" "$@"`, binPath}, args...)...)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				select {
				case <-done:
				default:
					cmd.Process.Kill()
					<-done
				}
			}()
			waitForTemporary(t, dir, done)
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			if c.nohup {
				select {
				case err := <-done:
					done <- err
					t.Fatalf("SIGHUP ended a run that ignores it: %v; stderr %q", err, errb.String())
				case <-time.After(time.Second):
				}
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			select {
			case err = <-done:
				done <- err // for the deferred check
			case <-time.After(10 * time.Second):
				t.Fatalf("the run ignored %s for 10 s", c.name)
			}
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != c.code {
				t.Fatalf("exit %v, want %d; stderr %q", err, c.code, errb.String())
			}
			if c.sig == syscall.SIGQUIT && !strings.Contains(errb.String(), "goroutine 1 [") {
				t.Errorf("SIGQUIT dumped no goroutines: stderr %q", errb.String())
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				t.Errorf("%s left %s behind", c.name, e.Name())
			}
		})
	}
}

// waitForTemporary waits until dir holds a temporary output (".NAME.tmp-"),
// failing if the run ends first or none appears within a minute.
func waitForTemporary(t *testing.T, dir string, done chan error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				return
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the run ended (%v) before its temporary output appeared", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("no temporary output appeared within a minute")
}
