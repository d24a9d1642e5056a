package pipeline

import (
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
		{"matrix", Options{Engine: "cpu", Layout: arrowio.LayoutMatrix}, 180},
		{"matrix-sources", Options{Engine: "cpu", Layout: arrowio.LayoutMatrix, Sources: []string{"10", "17", "17", "19"}}, 3},
		{"matrix-targets", Options{Engine: "cpu", Layout: arrowio.LayoutMatrix, Targets: []string{"11", "12"}}, 180},
		{"pairs", Options{Engine: "cpu"}, 180 * 180},
		{"pairs-pred", Options{Engine: "cpu", WithPredecessors: true, Sources: []string{"13"}}, 180},
		{"pairs-k", Options{Engine: "cpu", K: 4}, 180 * 5},
		{"stats", Options{Engine: "cpu", Layout: arrowio.LayoutStats}, 180},
	}
	for _, c := range cases {
		est, err := EstimateOutput(g, c.opt)
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
	est, err := EstimateOutput(g, Options{Layout: arrowio.LayoutMatrix})
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

// TestEstimateUnknownSource fails as Run does, and paths above the
// limit are sized rather than refused.
func TestEstimateUnknownSource(t *testing.T) {
	g := gridGraph(t, 3, 3)
	if _, err := EstimateOutput(g, Options{Sources: []string{"99"}}); err == nil || !strings.Contains(err.Error(), `"99"`) {
		t.Errorf("unknown source: %v", err)
	}
	if _, err := EstimateOutput(g, Options{WithPaths: true, MaxOutput: 1}); err != nil {
		t.Errorf("paths above the limit: %v", err)
	}
}

// TestEstimatePlanWithoutDevice: the CPU engine's auto is resolved to its
// kernel; a few sources stay on the CPU; many name the GPU as a maybe.
func TestEstimatePlanWithoutDevice(t *testing.T) {
	g := gridGraph(t, 3, 3)
	engine, algo, err := Plan(g, Options{Engine: "cpu"})
	if err != nil || engine != "cpu" || algo == "" || algo == "auto" {
		t.Errorf("cpu: %q, %q, %v", engine, algo, err)
	}
	if engine, _, _ := Plan(g, Options{Sources: []string{"11"}}); !strings.HasPrefix(engine, "cpu") {
		t.Errorf("one source on auto: engine %q, want the CPU", engine)
	}
	if engine, _, _ := Plan(g, Options{Engine: "gpu"}); engine != "gpu (if usable)" {
		t.Errorf("gpu: engine %q", engine)
	}
}
