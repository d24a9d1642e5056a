package flight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSecondServerKeepsUploads starts a second server on the data directory
// of a running one while an upload is half way. Before the data directory
// lock, the second server's recovery deleted the upload's temporary file and
// the first server lost the upload; now the second server stops with
// DataDirInUseError before touching anything, and the upload completes.
func TestSecondServerKeepsUploads(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ts := startServer(t, Config{DataDir: dir})
	cl := dial(t, ts.addr)
	c := randomCase(5, 200, 600, false)
	schema, recs := edgeRecords(c, 20, memory.DefaultAllocator)
	defer releaseAll(recs)
	stream, err := cl.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(pathDesc("inflight"))
	half := len(recs) / 2
	for _, r := range recs[:half] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		es, _ := os.ReadDir(filepath.Join(dir, tmpDir))
		return len(es) > 0
	})

	// The second server fails: on the lock (now), or on the address in use
	// after its recovery ran (before).
	_, err = NewServer(Config{DataDir: dir, Addr: ts.addr})
	var inUse *DataDirInUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Errorf("second server: %v; want a DataDirInUseError naming process %d", err, os.Getpid())
	}
	want := fmt.Sprintf("data directory %s is in use by process %d", dir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second server: %v; want %q", err, want)
	}

	for _, r := range recs[half:] {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	stream.CloseSend()
	for {
		_, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the upload half way when the second server started failed: %v", err)
		}
	}
	names, err := listGraphs(ctx, cl)
	if err != nil || strings.Join(names, ",") != "inflight" {
		t.Errorf("graphs: %v, %v", names, err)
	}

	// Once the first server stops, the directory is free again.
	ts.shutdown(t)
	ts2 := startServer(t, Config{DataDir: dir})
	if names, err := listGraphs(ctx, dial(t, ts2.addr)); err != nil || strings.Join(names, ",") != "inflight" {
		t.Errorf("graphs after the restart: %v, %v", names, err)
	}
}

// TestRecoveryKeepsNewerFiles leaves a temporary file newer than the lock
// (as a server that did not lock would write while this one starts) and
// checks that recovery keeps it.
func TestRecoveryKeepsNewerFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{graphsDir, dataDir, tmpDir} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
	}
	old := filepath.Join(dir, tmpDir, "old-1.arrow.tmp")
	os.WriteFile(old, []byte("x"), 0o644)
	os.Chtimes(old, l.acquired.Add(-1e9), l.acquired.Add(-1e9))
	newer := filepath.Join(dir, tmpDir, "new-2.arrow.tmp")
	os.WriteFile(newer, []byte("x"), 0o644)
	os.Chtimes(newer, l.acquired.Add(1e9), l.acquired.Add(1e9))
	st, err := openStore(dir, l.acquired, slog.New(slog.DiscardHandler))
	if err != nil || st == nil {
		t.Fatal(err)
	}
	l.release()
	if _, err := os.Stat(old); err == nil {
		t.Error("recovery kept a temporary file older than the lock")
	}
	if _, err := os.Stat(newer); err != nil {
		t.Errorf("recovery removed a temporary file newer than the lock: %v", err)
	}
}
