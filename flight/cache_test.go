package flight

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// cachedGraph is a graph whose only memory is a CSR of arcs int32 arcs.
func cachedGraph(arcs int) *pipeline.Graph {
	return &pipeline.Graph{CSR: &graph.CSR{Offsets: make([]graph.EdgeOffset, 1), Targets: make([]graph.VertexID, arcs), Type: graph.DistInt32}}
}

func TestGraphCacheEvictsLeastRecentlyUsed(t *testing.T) {
	size := graphBytes(cachedGraph(100))
	if size != 8+100*(4+4) {
		t.Fatalf("graphBytes = %d, want %d", size, 8+100*(4+4))
	}
	c := newGraphCache(2*size, nil)
	c.put("a", cachedGraph(100))
	c.put("b", cachedGraph(100))
	c.entry("a") // a is now used after b
	c.put("c", cachedGraph(100))
	if _, ok := c.entries["b"]; ok {
		t.Error("b, the least recently used, is still cached")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.entries[k]; !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	if n, b := c.stats(); n != 2 || b != 2*size {
		t.Errorf("stats %d entries, %d bytes; want 2, %d", n, b, 2*size)
	}
	// A graph above the budget alone leaves nothing cached, itself included.
	c.put("big", cachedGraph(1000))
	if n, b := c.stats(); n != 0 || b != 0 {
		t.Errorf("after a graph over the budget: %d entries, %d bytes; want none", n, b)
	}
	// An entry still loading weighs nothing and is not evicted.
	lg := c.entry("loading")
	c.put("d", cachedGraph(100))
	c.put("e", cachedGraph(100))
	c.put("f", cachedGraph(100))
	if c.entries["loading"] != lg {
		t.Error("an entry still loading was evicted")
	}
	lg.g = cachedGraph(100)
	c.loaded("loading", lg) // counts as used now: e, the oldest, goes
	if n, b := c.stats(); n != 2 || b != 2*size {
		t.Errorf("after loading: %d entries, %d bytes; want 2, %d", n, b, 2*size)
	}
	for k, want := range map[string]bool{"e": false, "f": true, "loading": true} {
		if _, ok := c.entries[k]; ok != want {
			t.Errorf("after loading: %s cached %v, want %v", k, ok, want)
		}
	}
	c.removeIf(func(string) bool { return true })
	if n, b := c.stats(); n != 0 || b != 0 || len(c.entries) != 0 {
		t.Errorf("after removing all: %d entries, %d bytes, %d left", n, b, len(c.entries))
	}
}

// TestCacheBudgetServesEveryGraph runs a server whose cache holds about one
// of the uploaded graphs: every query still answers right, graphs forgotten
// are read back from their files, and the loaded bytes stay within the
// budget once no query runs.
func TestCacheBudgetServesEveryGraph(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var cases []testgraphs.Case
	for _, c := range testgraphs.Cases() {
		if !c.HasNegative() && len(cases) < 4 {
			cases = append(cases, c)
		}
	}
	if len(cases) < 3 {
		t.Fatalf("only %d test graphs without negative weights", len(cases))
	}
	budget := int64(1)
	for _, c := range cases {
		budget = max(budget, 4*int64(len(c.Src))*(4+4+8)) // about one graph's edges and arcs
	}
	ts := startServer(t, Config{Allocator: mem, CacheBytes: budget})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	for _, c := range cases {
		uploadCase(t, ctx, cl, c.Name, c)
		if _, b := ts.cache.stats(); b > budget {
			t.Errorf("after uploading %s: %d bytes loaded, budget %d", c.Name, b, budget)
		}
	}
	for round := range 2 {
		for _, c := range cases {
			q := fmt.Sprintf(`{"graph": %q, "algorithm": "dijkstra"}`, c.Name)
			_, recs, err := doGet(ctx, cl, q, mem)
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, q, err)
			}
			checkPairsAgainstCase(t, c, recs, false, nil)
			releaseAll(recs)
			if n, b := ts.cache.stats(); b > budget || n < 1 {
				t.Errorf("round %d, after %s: %d graphs, %d bytes loaded; budget %d", round, c.Name, n, b, budget)
			}
		}
	}
}

func TestCacheBytesNegative(t *testing.T) {
	if _, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", CacheBytes: -1}); err == nil {
		t.Error("NewServer accepted a negative cache budget")
	}
}
