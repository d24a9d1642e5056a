package flight

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const helperEnv = "PATHCTL_FLIGHT_HELPER_DATA_DIR"

// TestHelperServer is the child process of TestKilledDuringUpload: with
// helperEnv set it serves that data directory until killed, and prints its
// address first. Without it, it returns at once.
func TestHelperServer(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	s, err := NewServer(Config{DataDir: dir, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("addr", s.Addr())
	s.Serve(context.Background())
}

// TestKilledDuringUpload kills a server process with SIGKILL while an
// upload is half way and restarts on its data directory: the graph stored
// before is there, the cut-off one is not, and no temporary file is left.
func TestKilledDuringUpload(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		t.Fatalf("child said %q, %v", line, err)
	}
	ctx := context.Background()
	cl := dial(t, addr)
	c := randomCase(3, 100, 300, false)
	uploadCase(t, ctx, cl, "complete", c)
	_, want, err := doGet(ctx, cl, `{"graph": "complete", "layout": "stats"}`, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	wantText := tableString(want)
	releaseAll(want)

	schema, recs := edgeRecords(c, 10, memory.DefaultAllocator)
	defer releaseAll(recs)
	stream, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc("partial"))
	for _, r := range recs[:len(recs)/2] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		es, _ := os.ReadDir(filepath.Join(dir, tmpDir))
		return len(es) > 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if es, _ := os.ReadDir(filepath.Join(dir, tmpDir)); len(es) == 0 {
		t.Fatalf("the killed upload left no temporary file: the test did not kill it half way")
	}

	ts := startServer(t, Config{DataDir: dir})
	names, err := listGraphs(ctx, dial(t, ts.addr))
	if err != nil || strings.Join(names, ",") != "complete" {
		t.Errorf("graphs after the kill: %v, %v", names, err)
	}
	checkNoLeftovers(t, dir)
	_, got, err := doGet(ctx, dial(t, ts.addr), `{"graph": "complete", "layout": "stats"}`, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if tableString(got) != wantText {
		t.Errorf("the stored graph answers differently after the kill")
	}
	releaseAll(got)
}
