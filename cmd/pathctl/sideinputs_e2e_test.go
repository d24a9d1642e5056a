package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputOverSideInputRefused: -o, --vertices-out (given or by default
// beside -o) and bench's --out naming a file the run reads (--vertices,
// --sources-file, --targets-file, an edge file of --graphs) are usage
// errors before anything is written, whatever the spelling of the path
// (./x, a link), for run, sssp and bfs; the side input is left as it was
// and no output or temporary file appears (issue 37, point 10).
func TestOutputOverSideInputRefused(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"g.csv":              "src,dst,weight\n1,2,3\n2,3,4\n",
		"verts.csv":          "vertex\n1\n2\n3\n4\n",
		"sources.txt":        "1\n2\n",
		"targets.txt":        "3\n",
		"m.vertices.csv":     "vertex\n1\n2\n3\n",
		"linked-targets.txt": "2\n3\n",
	}
	for name, body := range files {
		writeFile(t, dir, name, body)
	}
	if err := os.Symlink("verts.csv", filepath.Join(dir, "verts-link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("linked-targets.txt", filepath.Join(dir, "targets-link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "g.csv", "--vertices", "verts.csv", "-o", "verts.csv"}, "is the --vertices file"},
		{[]string{"run", "g.csv", "--vertices", "verts.csv", "-o", "./verts.csv"}, "is the --vertices file"},
		{[]string{"run", "g.csv", "--vertices", "verts.csv", "-o", "verts-link.csv"}, "is the --vertices file"},
		{[]string{"run", "g.csv", "--sources-file", "sources.txt", "-o", "sources.txt", "--format", "csv"}, "is the --sources-file file"},
		{[]string{"run", "g.csv", "--targets-file", "targets.txt", "-o", "targets.txt", "--format", "csv"}, "is the --targets-file file"},
		{[]string{"run", "g.csv", "--targets-file", "targets-link.txt", "-o", "linked-targets.txt", "--format", "csv"}, "is the --targets-file file"},
		{[]string{"sssp", "g.csv", "-s", "1", "--targets-file", "targets.txt", "-o", "./targets.txt", "--format", "csv"}, "is the --targets-file file"},
		{[]string{"bfs", "g.csv", "-s", "1", "--vertices", "verts.csv", "-o", "verts-link.csv"}, "is the --vertices file"},
		{[]string{"run", "g.csv", "--layout", "matrix", "--vertices", "verts.csv", "-o", "m.arrow", "--vertices-out", "verts.csv"}, "--vertices-out verts.csv is the --vertices file"},
		{[]string{"run", "g.csv", "--layout", "matrix", "--vertices", "verts.csv", "-o", "m.arrow", "--vertices-out", "./verts-link.csv"}, "is the --vertices file"},
		{[]string{"run", "g.csv", "--layout", "matrix", "--targets-file", "targets.txt", "-o", "m.arrow", "--vertices-out", "targets.txt"}, "is the --targets-file file"},
		// The vertex order's default file, m.vertices.csv beside m.csv.
		{[]string{"run", "g.csv", "--layout", "matrix", "--vertices", "m.vertices.csv", "-o", "m.csv"}, "would overwrite the --vertices file"},
		{[]string{"bench", "--graphs", "g.csv", "--out", "./g.csv", "--engine", "cpu"}, "--out ./g.csv is the edge file g.csv"},
	} {
		cwd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		r := pathctl(t, nil, c.args...)
		os.Chdir(cwd)
		oneErrorLine(t, r, exitUsage, c.want)
		for name, body := range files {
			if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != body {
				t.Fatalf("%v: %s was changed to %q", c.args, name, got)
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, ours := files[e.Name()]; !ours && !strings.HasSuffix(e.Name(), "-link.csv") && !strings.HasSuffix(e.Name(), "-link.txt") {
				t.Fatalf("%v: left %s behind", c.args, e.Name())
			}
		}
	}
	// A side input beside an output of its own is fine.
	cwd, _ := os.Getwd()
	os.Chdir(dir)
	r := pathctl(t, nil, "run", "g.csv", "--vertices", "verts.csv", "--sources-file", "sources.txt", "--targets-file", "targets.txt", "-o", "out.csv")
	os.Chdir(cwd)
	if r.code != 0 {
		t.Fatalf("run with side inputs and an output of its own: exit %d, %s", r.code, r.stderr)
	}
}
