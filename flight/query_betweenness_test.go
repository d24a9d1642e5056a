package flight

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// betweennessRows prints the vertex, betweenness rows of recs, one line
// each, and releases them.
func betweennessRows(t *testing.T, recs []arrow.RecordBatch) []string {
	t.Helper()
	var rows []string
	for _, r := range recs {
		b, ok := r.Column(1).(*array.Float64)
		if !ok {
			t.Fatalf("betweenness column is %s, want float64", r.Column(1).DataType())
		}
		for i := 0; i < int(r.NumRows()); i++ {
			rows = append(rows, fmt.Sprintf("%s %.17g", r.Column(0).ValueStr(i), b.Value(i)))
		}
		r.Release()
	}
	return rows
}

// TestQueryBetweennessKeys: the ticket keys "normalized", "endpoints", "k"
// (the sample) and "seed" of "layout": "betweenness" give what the
// pipeline's betweenness layout gives with the same options (the CLI's --k
// and --seed), on directed, undirected and string-id graphs.
func TestQueryBetweennessKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	for _, name := range []string{"ties", "undirected", "string-ids"} {
		c, err := testgraphs.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		uploadCase(t, ctx, cl, c.Name, c)
		meta, ok := ts.store.get(c.Name)
		if !ok {
			t.Fatalf("%s: not stored", c.Name)
		}
		g, err := ts.graphFor(meta)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			keys string
			bopt pipeline.BetweennessOptions
		}{
			{``, pipeline.BetweennessOptions{}},
			{`, "normalized": true`, pipeline.BetweennessOptions{}},
			{`, "normalized": false`, pipeline.BetweennessOptions{Unnormalized: true}},
			{`, "endpoints": true`, pipeline.BetweennessOptions{Endpoints: true}},
			{`, "k": 3, "seed": 7`, pipeline.BetweennessOptions{Sample: 3, Seed: 7}},
			{`, "k": 2`, pipeline.BetweennessOptions{Sample: 2}},
			{`, "k": 3, "seed": 11, "normalized": false, "endpoints": true`, pipeline.BetweennessOptions{Sample: 3, Seed: 11, Unnormalized: true, Endpoints: true}},
		} {
			ticket := fmt.Sprintf(`{"graph": %q, "layout": "betweenness"%s}`, c.Name, tc.keys)
			_, recs, err := doGet(ctx, cl, ticket, mem)
			if err != nil {
				t.Fatalf("%s: %v", ticket, err)
			}
			got := betweennessRows(t, recs)
			var want []arrow.RecordBatch
			pq, err := pipeline.Prepare(g, pipeline.Options{
				Query:     pipeline.Query{Layout: arrowio.LayoutBetweenness, Betweenness: tc.bopt},
				Resources: pipeline.Resources{Engine: "cpu"},
			})
			if err != nil {
				t.Fatalf("%s: Prepare: %v", ticket, err)
			}
			if _, err := pq.Run(ctx, func(r arrow.RecordBatch) error {
				r.Retain()
				want = append(want, r)
				return nil
			}); err != nil {
				t.Fatalf("%s: the pipeline's betweenness: %v", ticket, err)
			}
			expect := betweennessRows(t, want)
			if len(got) != g.NumVertices() || strings.Join(got, "\n") != strings.Join(expect, "\n") {
				t.Errorf("%s:\n got %q\nwant %q", ticket, got, expect)
			}
		}
	}
	// The sample changes with the seed: the keys reach the run.
	_, a, errA := doGet(ctx, cl, `{"graph": "ties", "layout": "betweenness", "k": 2, "seed": 1}`, mem)
	_, b, errB := doGet(ctx, cl, `{"graph": "ties", "layout": "betweenness"}`, mem)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if ra, rb := betweennessRows(t, a), betweennessRows(t, b); strings.Join(ra, "\n") == strings.Join(rb, "\n") {
		t.Errorf("k 2 gives the exact betweenness %q: the sample was not used", ra)
	}
}

// TestQueryBetweennessKeysRefused: the keys with another layout, a seed
// without k, k beside sources and k of 0 are INVALID_ARGUMENT naming the
// key.
func TestQueryBetweennessKeysRefused(t *testing.T) {
	ts := startServer(t, Config{})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c, err := testgraphs.Find("ties")
	if err != nil {
		t.Fatal(err)
	}
	uploadCase(t, ctx, cl, c.Name, c)
	for _, tc := range []struct{ keys, want string }{
		{`"layout": "pairs", "normalized": false`, `"normalized" is a key of "layout": "betweenness", not "pairs"`},
		{`"endpoints": true`, `"endpoints" is a key of "layout": "betweenness"`},
		{`"layout": "stats", "seed": 3`, `"seed" is a key of "layout": "betweenness", not "stats"`},
		{`"layout": "betweenness", "seed": 3`, `"seed" draws the sample of "k" sources; give "k" too`},
		{`"layout": "betweenness", "k": 2, "sources": [0]`, `give "k" or "sources", not both`},
		{`"layout": "betweenness", "k": 0`, `"k" 0: k is 1 or more`},
		{`"layout": "betweenness", "k": 99`, `k 99 is more than the graph's`},
	} {
		ticket := fmt.Sprintf(`{"graph": "ties", %s}`, tc.keys)
		_, recs, err := doGet(ctx, cl, ticket, memory.DefaultAllocator)
		releaseAll(recs)
		if codeOf(err) != "InvalidArgument" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want InvalidArgument with %q", ticket, err, tc.want)
		}
	}
}

// TestQueryEdgeBetweenness: "layout": "edge-betweenness" with the
// betweenness keys gives what the pipeline's Prepared query gives for that
// layout: src, dst and betweenness, one row per edge.
func TestQueryEdgeBetweenness(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c, err := testgraphs.Find("undirected")
	if err != nil {
		t.Fatal(err)
	}
	uploadCase(t, ctx, cl, c.Name, c)
	meta, _ := ts.store.get(c.Name)
	g, err := ts.graphFor(meta)
	if err != nil {
		t.Fatal(err)
	}
	rows := func(recs []arrow.RecordBatch) []string {
		var out []string
		for _, r := range recs {
			if names := r.Schema().Field(0).Name + "," + r.Schema().Field(1).Name; names != "src,dst" {
				t.Errorf("columns %s, want src,dst,betweenness", names)
			}
			b := r.Column(2).(*array.Float64)
			for i := range int(r.NumRows()) {
				out = append(out, fmt.Sprintf("%s %s %.17g", r.Column(0).ValueStr(i), r.Column(1).ValueStr(i), b.Value(i)))
			}
			r.Release()
		}
		return out
	}
	ticket := fmt.Sprintf(`{"graph": %q, "layout": "edge-betweenness", "normalized": false, "k": 3, "seed": 5}`, c.Name)
	_, recs, err := doGet(ctx, cl, ticket, mem)
	if err != nil {
		t.Fatalf("%s: %v", ticket, err)
	}
	got := rows(recs)
	var want []arrow.RecordBatch
	pq, err := pipeline.Prepare(g, pipeline.Options{
		Query:     pipeline.Query{Layout: arrowio.LayoutEdgeBetweenness, Betweenness: pipeline.BetweennessOptions{Unnormalized: true, Sample: 3, Seed: 5}},
		Resources: pipeline.Resources{Engine: "cpu"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pq.Run(ctx, func(r arrow.RecordBatch) error {
		r.Retain()
		want = append(want, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if expect := rows(want); len(got) == 0 || strings.Join(got, "\n") != strings.Join(expect, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", ticket, got, expect)
	}
}
