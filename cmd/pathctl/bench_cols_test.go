package main

import (
	"strings"
	"testing"
)

// TestBenchColumnsAndAlgos: bench reads edge files with --src-col and
// --dst-col as run does, and refuses --algos where only CPU rows run
// (it was ignored in silence).
func TestBenchColumnsAndAlgos(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "trips.csv", "from,to,minutes\n1,2,3\n2,3,4\n1,3,9\n")
	r := benchCLI(t, "--graphs", path, "--engine", "cpu", "--cpu-sample", "0", "--json")
	if r.code != exitInput || !strings.Contains(r.stderr, `no column "src"`) {
		t.Errorf("bench without --src-col: exit %d, stderr %q", r.code, r.stderr)
	}
	rep := decodeReport(t, benchCLI(t, "--graphs", path, "--src-col", "from", "--dst-col", "to", "--engine", "cpu", "--cpu-sample", "0", "--json"))
	if len(rep.Graphs) != 1 || rep.Graphs[0].Vertices != 3 {
		t.Errorf("bench --src-col from --dst-col to: graphs %+v, want one of 3 vertices", rep.Graphs)
	}
	r = benchCLI(t, "--graphs", path, "--src-col", "from", "--dst-col", "to", "--engine", "cpu", "--algos", "dijkstra")
	want := "pathctl: --algos chooses the algorithms of the GPU rows, and --engine cpu runs none; use --cpu-algos\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("bench --engine cpu --algos dijkstra: exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
}
