package devices

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/pathctl/pathctl/internal/syncbuf"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// TestSharedGPU runs two graphs built on the CPU through one Shared device, as
// a server does: the device opens once for every run (or, without a GPU,
// is looked for once), the results equal the CPU engine's, runs at the same
// time take turns, and after Close gpu runs fail while auto runs use the
// CPU.
func TestSharedGPU(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var graphs []*pipeline.Graph
	var want []string
	for _, kind := range []testgraphs.WeightKind{testgraphs.Int, testgraphs.Float64} {
		g, err := pipeline.LoadGraph(randomTable(rng, 2*minGPUSources, 6*minGPUSources, kind), pipeline.LoadOptions{Undirected: true})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		text, err := collectText(t, g, pipeline.Options{Resources: pipeline.Resources{Engine: "cpu"}})
		if err != nil {
			t.Fatal(err)
		}
		graphs, want = append(graphs, g), append(want, text)
	}
	status := pipeline.GPUStatus()
	shared := &Shared{}
	opens := Opens()
	var notice syncbuf.Buffer
	var wg sync.WaitGroup
	for round := range 2 {
		for i, g := range graphs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := collectText(t, g, pipeline.Options{Resources: pipeline.Resources{Engine: "auto", GPU: shared}, Log: &notice})
				if err != nil {
					t.Errorf("round %d, graph %d: %v", round, i, err)
				} else if got != want[i] {
					t.Errorf("round %d, graph %d: the shared engine's result differs from the CPU engine's", round, i)
				}
			}()
		}
	}
	wg.Wait()
	if got := Opens() - opens; got != 1 {
		t.Errorf("%d GPU engines opened for four runs, want 1", got)
	}
	if shared.Opened() != status.Available {
		t.Errorf("Opened = %v with a usable GPU %v", shared.Opened(), status.Available)
	}
	if !status.Available && !strings.Contains(notice.String(), "GPU engine unavailable") {
		t.Errorf("auto without a GPU: verbose log %q", notice.String())
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	if shared.Opened() {
		t.Error("Opened after Close")
	}
	if _, err := collectText(t, graphs[0], pipeline.Options{Resources: pipeline.Resources{Engine: "gpu", GPU: shared}}); !errors.Is(err, pipeline.ErrUnavailable) {
		t.Errorf("gpu run on a closed shared engine: %v, want ErrUnavailable", err)
	}
	got, err := collectText(t, graphs[0], pipeline.Options{Resources: pipeline.Resources{Engine: "auto", GPU: shared}})
	if err != nil || got != want[0] {
		t.Errorf("auto run on a closed shared engine: %v (result equal: %v)", err, got == want[0])
	}
	if err := (&Shared{}).Close(); err != nil {
		t.Errorf("Close of an engine never opened: %v", err)
	}
}
