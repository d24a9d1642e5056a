package pipeline

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestCPUMatrixBlocksFromThePool runs a CPU matrix in blocks of 3 sources,
// whose memory the block pool hands from a released block to the next:
// a consumer that reads each record as it comes, one that keeps every
// record to the end (kept records are never recycled), and one that keeps
// every other record all see the rows of a run in one block.
func TestCPUMatrixBlocksFromThePool(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	g, err := LoadGraph(randomTable(rng, 40, 120, testgraphs.Int), LoadOptions{Engine: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want, err := collectText(t, g, Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "cpu", MaxBlock: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Query: Query{Layout: arrowio.LayoutMatrix}, Resources: Resources{Engine: "cpu", MaxBlock: 3}}
	if got, err := collectText(t, g, opt); err != nil || got != want {
		t.Fatalf("read as they come: %v\n%s\nwant\n%s", err, got, want)
	}
	for _, every := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		opt.Allocator = mem
		var kept []arrow.RecordBatch
		seen := 0
		_, err := runQuery(context.Background(), g, opt, func(r arrow.RecordBatch) error {
			if seen%every == 0 {
				r.Retain()
				kept = append(kept, r)
			}
			seen++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// What the kept records hold now, after every later block ran.
		var got string
		for _, r := range kept {
			got += recordText(r)
			r.Release()
		}
		if every == 1 && got != want {
			t.Errorf("kept to the end:\n%s\nwant\n%s", got, want)
		}
		if every == 2 && !containsRows(want, got) {
			t.Errorf("every other record kept to the end: rows not in the one-block run:\n%s", got)
		}
		mem.AssertSize(t, 0)
	}
}

// containsRows reports whether every line of part is a line of whole.
func containsRows(whole, part string) bool {
	lines := map[string]bool{}
	for l := range strings.Lines(whole) {
		lines[l] = true
	}
	for l := range strings.Lines(part) {
		if !lines[l] {
			return false
		}
	}
	return len(part) > 0
}
