package benchsuite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// TestAlgosWithoutGPURows: Algos chosen for GPU rows that do not run (no
// GPU under "auto") are said on Notice, not ignored in silence; the
// default Algos are not.
func TestAlgosWithoutGPURows(t *testing.T) {
	p := cpuParams([]string{tinyGraph(t, t.TempDir(), "tiny", 20, 40, 6)}, graph.Auto)
	p.MeasureDownload = func() (pipeline.Download, error) { return pipeline.Download{}, errors.New("gpu: no device") }
	p.Engines, p.Algos = []string{"auto"}, []graph.Algorithm{graph.Dijkstra}
	for _, given := range []bool{true, false} {
		var notice bytes.Buffer
		p.AlgosGiven, p.Notice = given, &notice
		if _, err := Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		want := "pathctl bench: note: --algos chooses the algorithms of the GPU rows, and none runs (no GPU: gpu: no device); the CPU rows run --cpu-algos auto\n"
		if given && notice.String() != want {
			t.Errorf("--algos without a GPU: notice %q, want %q", notice.String(), want)
		}
		if !given && notice.Len() != 0 {
			t.Errorf("the default algos without a GPU: notice %q, want none", notice.String())
		}
	}
}

// TestEdgeFileColumns reads an edge file whose id columns are not src and
// dst through SrcCol and DstCol.
func TestEdgeFileColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trips.csv")
	if err := os.WriteFile(path, []byte("from,to,minutes\n1,2,3\n2,3,4\n1,3,9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := cpuParams([]string{path}, graph.Auto)
	if _, err := Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), `no column "src"`) {
		t.Fatalf("without SrcCol: %v, want no column \"src\"", err)
	}
	p.SrcCol, p.DstCol = "from", "to"
	rep, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 1 || rep.Graphs[0].Vertices != 3 || rep.Graphs[0].Arcs != 3 {
		t.Errorf("graphs %+v, want one of 3 vertices and 3 arcs", rep.Graphs)
	}
}
