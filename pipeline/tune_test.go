package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/gpu/devices"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestTuneIsChecked checks that a tuning setting that is not valid fails
// LoadGraph, Run and Verify as an invalid request naming it, and that
// CheckTune says the same of a spec alone.
func TestTuneIsChecked(t *testing.T) {
	const bad = "order=bfs,colour=red"
	isBad := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown key "colour"`) {
			t.Errorf("%s with Tune %q: %v, want an invalid request naming the key", what, bad, err)
		}
	}
	if err := CheckTune(bad); err == nil || !strings.Contains(err.Error(), `unknown key "colour"`) {
		t.Errorf("CheckTune(%q) = %v", bad, err)
	}
	if err := CheckTune("order=bfs, hubpack=0"); err != nil {
		t.Errorf("CheckTune of valid settings: %v", err)
	}
	rng := rand.New(rand.NewPCG(38, 1))
	_, err := LoadGraph(randomTable(rng, 20, 60, testgraphs.Int), LoadOptions{Tune: bad})
	isBad("LoadGraph", err)
	g, err := LoadGraph(randomTable(rng, 20, 60, testgraphs.Int), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = runQuery(context.Background(), g, Options{Resources: Resources{Engine: "cpu", Tune: bad}}, func(arrow.RecordBatch) error { return nil })
	isBad("Run", err)
	_, err = verifyOf(context.Background(), g, Options{Resources: Resources{Engine: "cpu", Tune: bad}}, 1, 1)
	isBad("Verify", err)
	if _, err := runQuery(context.Background(), g, Options{Resources: Resources{Engine: "cpu", Tune: "order=bfs"}}, func(arrow.RecordBatch) error { return nil }); err != nil {
		t.Errorf("Run on the CPU with valid settings: %v", err)
	}
}

// TestTuneReachesTheGPUEngines checks that Options.Tune is the tuning of
// the GPU engine a server's pool hands a run (an adapter of no device
// here: only what it carries is looked at). gpu/devices checks the
// engines of a run over several devices.
func TestTuneReachesTheGPUEngines(t *testing.T) {
	for _, spec := range []string{"", "order=bfs"} {
		tunedWant := spec != ""
		g := &Graph{}
		eng, release, err := runEngine(g, Options{Resources: Resources{Engine: "gpu", GPUs: enginePool{devices.Engine{}}, Tune: spec}}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if ge, ok := eng.(devices.Engine); !ok || (ge.Tune != gpu.Tuning{}) != tunedWant {
			t.Errorf("Tune %q: the pool's engine %T carries a tuning %v, want %v", spec, eng, ok && ge.Tune != gpu.Tuning{}, tunedWant)
		}
		release()
	}
}

// enginePool is a pool of one engine, handed to every run.
type enginePool struct{ eng graph.Engine }

func (p enginePool) Acquire() (graph.Engine, func(), error) { return p.eng, func() {}, nil }
func (p enginePool) Close() error                           { return nil }
