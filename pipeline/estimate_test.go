package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/arrowio"
)

// TestEstimateBoundsWrittenOutput: on a connected grid (every pair
// reachable), the estimate of each layout is at least the Arrow IPC file
// pathctl run writes, and close to it (within the fixed margin and a
// quarter), with the rows counted as the result has them.
func TestEstimateBoundsWrittenOutput(t *testing.T) {
	g := gridGraph(t, 12, 15) // 180 vertices, ids 10 to 189
	cases := []struct {
		name string
		opt  Options
		rows int64
	}{
		{"matrix", Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "cpu"}}, 180},
		{"matrix-sources", Options{Query: Query{Layout: arrowio.LayoutMatrix, Sources: []string{"10", "17", "17", "19"}}, Resources: Resources{Engine: "cpu"}}, 3},
		{"matrix-targets", Options{Query: Query{Layout: arrowio.LayoutMatrix, Targets: []string{"11", "12"}}, Resources: Resources{Engine: "cpu"}}, 180},
		{"pairs", Options{Resources: Resources{Engine: "cpu"}}, 180 * 180},
		{"pairs-pred", Options{Query: Query{WithPredecessors: true, Sources: []string{"13"}}, Resources: Resources{Engine: "cpu"}}, 180},
		{"pairs-k", Options{Query: Query{K: 4}, Resources: Resources{Engine: "cpu"}}, 180 * 5},
		{"stats", Options{Query: Query{Layout: arrowio.LayoutStats}, Resources: Resources{Engine: "cpu"}}, 180},
	}
	for _, c := range cases {
		est, err := estimateOf(g, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if est.Rows != c.rows || est.Vertices != 180 {
			t.Errorf("%s: %d rows of %d vertices, want %d of 180", c.name, est.Rows, est.Vertices, c.rows)
		}
		written := int64(len(writeRun(t, g, c.opt, c.name)))
		if est.Bytes < written {
			t.Errorf("%s: estimate %d bytes below the %d written", c.name, est.Bytes, written)
		}
		if slack := est.Bytes - written; float64(slack) > ipcMarginOnce+float64(max(est.Sources, 1))*ipcMarginPerBatch+0.25*float64(written) {
			t.Errorf("%s: estimate %d bytes far above the %d written", c.name, est.Bytes, written)
		}
	}
}

// TestEstimateMatrixIsRowsTimesVertices: a matrix of int32 distances is
// sources × n × 4 bytes and a bit of validity per cell, beside the margin.
func TestEstimateMatrixIsRowsTimesVertices(t *testing.T) {
	g := gridGraph(t, 100, 100)
	est, err := estimateOf(g, Options{Query: Query{Layout: arrowio.LayoutMatrix}})
	if err != nil {
		t.Fatal(err)
	}
	cells := int64(10000 * 10000)
	min := cells*4 + cells/8
	if est.Bytes < min || est.Bytes > min+min/100+ipcMarginOnce+10000*ipcMarginPerBatch {
		t.Errorf("matrix estimate %d bytes, want about %d", est.Bytes, min)
	}
	if !est.Exact || est.CSVBytes < cells*2 {
		t.Errorf("exact %v, CSV %d bytes: want exact rows and at least 2 bytes a cell", est.Exact, est.CSVBytes)
	}
}

// TestEstimateUnknownSource: an unknown source fails Prepare, as it
// fails Run; paths above the limit are refused by Prepare, naming their
// size, and below it sized.
func TestEstimateUnknownSource(t *testing.T) {
	g := gridGraph(t, 3, 3)
	if _, err := estimateOf(g, Options{Query: Query{Sources: []string{"99"}}}); err == nil || !strings.Contains(err.Error(), `"99"`) {
		t.Errorf("unknown source: %v", err)
	}
	_, err := estimateOf(g, Options{Query: Query{WithPaths: true}, Resources: Resources{MaxOutput: 1}})
	if !errors.Is(err, ErrPathsTooLarge) || !strings.Contains(err.Error(), "81 rows") {
		t.Errorf("paths above the limit: %v, want ErrPathsTooLarge naming 81 rows", err)
	}
	est, err := estimateOf(g, Options{Query: Query{WithPaths: true}})
	if err != nil || est.Rows != 81 || est.Bytes <= 0 {
		t.Errorf("paths below the limit: %+v, %v; want 81 rows", est, err)
	}
}

// TestEstimatePlanWithoutDevice: the CPU engine's auto is resolved to its
// kernel; a few sources stay on the CPU; many name the GPU as a maybe.
func TestEstimatePlanWithoutDevice(t *testing.T) {
	g := gridGraph(t, 3, 3)
	engine, algo, err := planOf(g, Options{Resources: Resources{Engine: "cpu"}})
	if err != nil || engine != "cpu" || algo == "" || algo == "auto" {
		t.Errorf("cpu: %q, %q, %v", engine, algo, err)
	}
	if engine, _, _ := planOf(g, Options{Query: Query{Sources: []string{"11"}}}); !strings.HasPrefix(engine, "cpu") {
		t.Errorf("one source on auto: engine %q, want the CPU", engine)
	}
	if engine, _, _ := planOf(g, Options{Resources: Resources{Engine: "gpu"}}); engine != "gpu (if usable)" {
		t.Errorf("gpu: engine %q", engine)
	}
}
