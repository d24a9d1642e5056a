package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorLinesNameNoPackage runs bad command lines in process and checks
// the one error line: it names the flag and the value, or the file and the
// reason, and no Go package ("arrowio: ", "invalid request: "); the exit
// status is the one it was before the wording changed.
func TestErrorLinesNameNoPackage(t *testing.T) {
	dir := t.TempDir()
	ints := writeFile(t, dir, "ints.csv", "src,dst,weight\n1,2,3\n2,3,4\n")
	strs := writeFile(t, dir, "strs.csv", "src,dst,weight\na,b,3\nb,c,4\n")
	ids := writeFile(t, dir, "ids.txt", "1\n99\n")
	out := filepath.Join(dir, "out.arrow")
	missing := filepath.Join(dir, "x.parquet")
	cases := []struct {
		name string
		args []string
		code int
		line string
	}{
		{"unknown source", []string{"run", ints, "--sources", "99", "-o", out}, exitUsage,
			`--sources: "99" is not a vertex of the graph`},
		{"source of another type", []string{"run", ints, "--sources", "Q", "-o", out}, exitUsage,
			`--sources: "Q" is not a vertex of the graph, whose ids are int64`},
		{"unknown string source", []string{"run", strs, "--sources", "Q", "-o", out}, exitUsage,
			`--sources: "Q" is not a vertex of the graph`},
		{"unknown source in a file", []string{"run", ints, "--sources-file", ids, "-o", out}, exitUsage,
			`--sources-file ` + ids + `: "99" is not a vertex of the graph`},
		{"unknown target", []string{"run", strs, "--targets", "a,zz", "-o", out}, exitUsage,
			`--targets: "zz" is not a vertex of the graph`},
		{"unknown sssp source", []string{"sssp", strs, "--source", "zz", "-o", out}, exitUsage,
			`source "zz" is not a vertex of the graph`},
		{"missing file", []string{"run", missing, "-o", out}, exitInput,
			missing + `: no such file or directory`},
		{"missing weight column", []string{"run", ints, "--weight-col", "w", "-o", out}, exitInput,
			ints + `: no weight column "w" in the header (columns: "src", "dst", "weight")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append([]string{"pathctl"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			got := strings.TrimSpace(stderr.String())
			if code != tc.code || got != "pathctl: "+tc.line {
				t.Errorf("pathctl %v: exit %d, stderr\n%s\nwant exit %d, stderr\npathctl: %s", tc.args, code, got, tc.code, tc.line)
			}
		})
	}
}

// TestErrorLineStripsPrefixes checks errorLine on error texts no command
// line above reaches: nested prefixes inside the chain go, other words stay.
func TestErrorLineStripsPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"arrowio: e.parquet: not a readable Parquet file": "e.parquet: not a readable Parquet file",
		"engine gpu: gpu: cuInit: no device":              "engine gpu: cuInit: no device",
		"invalid request: unknown engine \"x\"":           "unknown engine \"x\"",
		"pipeline: invalid request: arrowio: a: b":        "a: b",
		"the graph: has no edges":                         "the graph: has no edges",
	} {
		if got := errorLine(errorString(in)); got != want {
			t.Errorf("errorLine(%q) = %q, want %q", in, got, want)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
