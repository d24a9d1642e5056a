// The output files of run, sssp and bfs: the checks that -o and
// --vertices-out overwrite no input, the matrix's vertex file, and the
// summary line.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

// checkOutputPaths refuses, before anything is read, an output that would
// overwrite a file the run reads: -o and the matrix's vertex file (given
// with --vertices-out, or its default beside -o) against the edges,
// --vertices, --sources-file and --targets-file, and against each other.
// Paths are compared as files (links and relative names resolved), so
// `-o ./edges.csv` and a link to edges.csv are caught too.
func checkOutputPaths(c *cli.Context, layout arrowio.Layout, out string) error {
	type input struct{ path, what string }
	var inputs []input
	if in := c.Args().First(); in != "" && in != "-" {
		inputs = append(inputs, input{in, "the input file"})
	}
	for _, flag := range []string{"vertices", "sources-file", "targets-file"} {
		if p := c.String(flag); p != "" && p != "-" {
			inputs = append(inputs, input{p, "the --" + flag + " file"})
		}
	}
	verticesOut, what := c.String("vertices-out"), "--vertices-out "+c.String("vertices-out")
	if verticesOut == "" && layout == arrowio.LayoutMatrix && out != "-" && !arrowio.WrittenInPlace(out) {
		verticesOut = defaultVerticesPath(out)
		what = "the matrix's vertex order, " + verticesOut + " by default,"
	}
	for _, in := range inputs {
		if out != "-" && sameFile(in.path, out) {
			return usagef("-o %s is %s; write the result elsewhere", out, in.what)
		}
		if verticesOut == "" || !sameFile(in.path, verticesOut) {
			continue
		}
		if c.String("vertices-out") == "" {
			return usagef("%s would overwrite %s; give --vertices-out another file", what, in.what)
		}
		return usagef("%s is %s; write the vertex order elsewhere", what, in.what)
	}
	if verticesOut != "" && out != "-" && sameFile(out, verticesOut) {
		return usagef("--vertices-out %s is the output file (-o); give the vertex order a file of its own", verticesOut)
	}
	return nil
}

// sameFile reports whether paths a and b name one file: one existing file
// (os.SameFile, which sees through links), or one absolute path not yet
// created. Devices and FIFOs are never the same as anything: writing
// /dev/null twice loses nothing.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return fa.Mode().IsRegular() && os.SameFile(fa, fb)
	}
	absA, err1 := filepath.Abs(a)
	absB, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && absA == absB
}

// defaultVerticesPath turns out.arrow into out.vertices.arrow.
func defaultVerticesPath(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + ".vertices" + ext
}

func writeVertices(path string, columns *arrowio.Vertices, wopt arrowio.WriteOptions) error {
	rec := arrowio.VerticesRecord(columns, nil)
	defer rec.Release()
	w, err := arrowio.CreateResult(path, rec.Schema(), wopt)
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func printSummary(e *env, s *pipeline.Summary, g *pipeline.Graph, out string, bytes int64) {
	secs := s.Elapsed.Seconds()
	rate := float64(s.Pairs) / max(secs, 1e-9)
	dest := out
	if out == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(e.stderr, "pathctl: %d sources × %d vertices (%d arcs): %d pairs in %s (%s pairs/s), engine %s, algorithm %s; %d rows, %s written to %s\n",
		s.Sources, g.NumVertices(), g.CSR.NumEdges(), s.Pairs, s.Elapsed.Round(time.Millisecond), humanCount(rate),
		s.Engine, s.Algorithm, s.Rows, gen.HumanBytes(bytes), dest)
}

func humanCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}
