package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestDryRunJSON: --dry-run --json prints one JSON object whose figures
// are those the text plan prints (the matrix of 2000 vertices: 2000 rows,
// 4 bytes a pair, a float32 matrix with --matrix-type float), and writes
// nothing.
func TestDryRunJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.arrow")
	r := pathctl(t, nil, "run", "../../testdata/sample.gr", "--dry-run", "--json", "--layout", "matrix", "--matrix-type", "float", "--engine", "cpu", "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var p dryRunPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, r.stdout)
	}
	if p.Vertices != 2000 || p.Sources != 2000 || p.Targets != 2000 || p.Rows != 2000 || !p.RowsExact ||
		p.Layout != "matrix" || p.DistType != "float32" || p.Engine != "cpu" || p.Destination != out {
		t.Errorf("plan %+v", p)
	}
	if cells := int64(2000 * 2000 * 4); p.OutputBytes < cells || p.OutputBytes > cells+cells/5 || p.OutputBytes != p.ArrowBytes {
		t.Errorf("output of %d bytes for 4 M float32 cells", p.OutputBytes)
	}
	if p.FreeBytes == nil || p.Refused {
		t.Errorf("free space %v, refused %v", p.FreeBytes, p.Refused)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}
	// Pairs of one source to stdout: a bound, no file system.
	r = pathctl(t, nil, "run", "../../testdata/sample.gr", "--dry-run", "--json", "--sources", "1")
	p = dryRunPlan{}
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, r.stdout)
	}
	if p.Sources != 1 || p.Rows != 2000 || p.RowsExact || p.Destination != "stdout" || p.FreeBytes != nil || p.EngineReason == "" {
		t.Errorf("plan of one source %+v", p)
	}
}
