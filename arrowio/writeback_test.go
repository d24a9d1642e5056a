package arrowio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteBehind writes a little over three windows in uneven pieces and
// checks that the file holds every byte in order and that writeback was
// started for all but less than a window.
func TestWriteBehind(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "wb"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := make([]byte, 3*writeBehindWindow+12345)
	for i := range want {
		want[i] = byte(i * 7 / 3)
	}
	w := &writeBehind{f: f}
	for rest, step := want, 1; len(rest) > 0; step = (step*5 + 1) % (writeBehindWindow / 3) {
		piece := rest[:min(len(rest), step+1)]
		if n, err := w.Write(piece); err != nil || n != len(piece) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(piece), n, err)
		}
		rest = rest[len(piece):]
	}
	if w.written != int64(len(want)) || w.written-w.started >= writeBehindWindow || w.started > w.written || w.started == 0 {
		t.Errorf("written %d, writeback started for %d", w.written, w.started)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the file differs from what was written")
	}
}
