package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
)

// writeRun runs opt on g and writes the result through the writer of
// pathctl run (an Arrow IPC file), returning the file's bytes.
func writeRun(t *testing.T, g *Graph, opt Options, name string) []byte {
	t.Helper()
	schema, err := schemaOf(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".arrow")
	w, err := arrowio.CreateResult(path, schema, arrowio.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery(t.Context(), g, opt, w.Write); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
