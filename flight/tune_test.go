package flight

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// TestTuneReachesEveryRun checks that Config.Tune (serve's --tune) is the
// pipeline.Resources.Tune of every query, and that a setting that is not
// valid keeps the server from starting, naming it.
func TestTuneReachesEveryRun(t *testing.T) {
	var (
		mu    sync.Mutex
		tunes []string
	)
	run := func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		mu.Lock()
		tunes = append(tunes, q.Options().Tune)
		mu.Unlock()
		return q.Run(ctx, emit) // the CPU engine ignores the tuning
	}
	ts := startServer(t, Config{Tune: "order=bfs,hubpack=0", run: run})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := testgraphs.Cases()[len(testgraphs.Cases())-1]
	uploadCase(t, ctx, cl, "g", c)
	for _, ticket := range []string{`{"graph": "g"}`, `{"graph": "g", "layout": "stats", "engine": "cpu"}`} {
		_, recs, err := doGet(ctx, cl, ticket, nil)
		if err != nil {
			t.Fatalf("%s: %v", ticket, err)
		}
		releaseAll(recs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tunes) != 2 || tunes[0] != "order=bfs,hubpack=0" || tunes[1] != tunes[0] {
		t.Errorf("the runs' tuning %q, want order=bfs,hubpack=0 twice", tunes)
	}

	_, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Tune: "colour=red"})
	if err == nil || !strings.HasPrefix(err.Error(), "flight: tune: ") || !strings.Contains(err.Error(), `unknown key "colour"`) {
		t.Errorf("NewServer with --tune colour=red: %v, want an error naming the key", err)
	}
}
