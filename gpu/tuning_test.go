package gpu

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gpu/internal/plan"
	"github.com/pathctl/pathctl/graph"
)

// TestParseTuning checks that a spec changes the defaults key by key,
// that an empty one is the defaults, and that a bad setting is an error
// naming it, with the package's prefix.
func TestParseTuning(t *testing.T) {
	for _, spec := range []string{"", " ", ",", " , "} {
		tu, err := ParseTuning(spec)
		if err != nil || !reflect.DeepEqual(tu.batched().Config, plan.DefaultConfig()) {
			t.Errorf("ParseTuning(%q): %v, %+v; want the defaults", spec, err, tu.batched().Config)
		}
	}
	tu, err := ParseTuning("order=id,hubpack=0, seeds=0.2")
	if err != nil {
		t.Fatal(err)
	}
	want := plan.DefaultConfig()
	want.Order, want.HubPack, want.Seeds, want.SeedsOnMeshes = plan.OrderID, false, 0.2, true
	if got := tu.batched().Config; !reflect.DeepEqual(got, want) {
		t.Errorf("order=id,hubpack=0,seeds=0.2: %+v, want %+v", got, want)
	}
	for spec, msg := range map[string]string{
		"colour=red":  `unknown key "colour"`,
		"relabel=bfs": `unknown key "relabel"`,
		"hubpack=2":   `setting "hubpack=2"`,
		"seeds=1.5":   `setting "seeds=1.5"`,
		"order":       `setting "order" is not key=value`,
	} {
		if _, err := ParseTuning(spec); err == nil || !strings.HasPrefix(err.Error(), "gpu: ") || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTuning(%q) = %v, want a gpu error naming %s", spec, err, msg)
		}
	}
}

// TestPrepareTunedTakesTheTuning checks that PrepareTuned gives the runner
// the tuning passed in and Prepare the defaults, whatever the environment
// holds: the package reads none (PATHCTL_BATCHED was read once).
func TestPrepareTunedTakesTheTuning(t *testing.T) {
	t.Setenv("PATHCTL_BATCHED", "order=id,hubpack=0")
	g := &graph.CSR{NumVertices: 2, Offsets: []int64{0, 1, 1}, Targets: []int32{1}, Weights: []int32{3}, Weighted: true, Type: graph.DistInt32}
	if got := defaultBatchedConfig(); !reflect.DeepEqual(got.Config, plan.DefaultConfig()) {
		t.Errorf("the default configuration under PATHCTL_BATCHED: %+v", got.Config)
	}
	e, err := New()
	if err != nil {
		t.Skip("no GPU: " + err.Error())
	}
	defer e.Close()
	tu, err := ParseTuning("order=bfs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		tu    *Tuning
		order plan.Order
	}{{"Prepare", nil, plan.OrderCluster}, {"PrepareTuned", &tu, plan.OrderRank}} {
		var r *Runner
		if c.tu == nil {
			r, err = e.Prepare(context.Background(), g, graph.Request{Algorithm: Batched})
		} else {
			r, err = e.PrepareTuned(context.Background(), g, graph.Request{Algorithm: Batched}, *c.tu)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.bk.cfg.Order != c.order || !r.bk.cfg.HubPack {
			t.Errorf("%s: order %q, hub pack %v; want %q and the default hub pack", c.name, r.bk.cfg.Order, r.bk.cfg.HubPack, c.order)
		}
		r.Close()
	}
}
