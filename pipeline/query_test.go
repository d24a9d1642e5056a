package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// The tests' ways of asking one request: each prepares opt on g and asks
// the Prepared query, as the front ends do.

func runQuery(ctx context.Context, g *Graph, opt Options, emit func(arrow.RecordBatch) error) (*Summary, error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return nil, err
	}
	return q.Run(ctx, emit)
}

func schemaOf(g *Graph, opt Options) (*arrow.Schema, error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return nil, err
	}
	return q.Schema(), nil
}

func estimateOf(g *Graph, opt Options) (Estimate, error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return Estimate{}, err
	}
	return q.Estimate(), nil
}

func planOf(g *Graph, opt Options) (engine, algorithm string, err error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return "", "", err
	}
	engine, algorithm = q.Plan()
	return engine, algorithm, nil
}

func verifyOf(ctx context.Context, g *Graph, opt Options, samples int, seed uint64) (*VerifyReport, error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return nil, err
	}
	return Verify(ctx, q, samples, seed)
}

func newRowCheck(g *Graph, opt Options, check []string) (*RowCheck, error) {
	q, err := Prepare(g, opt)
	if err != nil {
		return nil, err
	}
	return NewRowCheck(q, check)
}

// runBetweennessQuery runs the betweenness layout of opt with bopt.
func runBetweennessQuery(ctx context.Context, g *Graph, opt Options, bopt BetweennessOptions, emit func(arrow.RecordBatch) error) (*Summary, error) {
	opt.Layout, opt.Betweenness = arrowio.LayoutBetweenness, bopt
	return runQuery(ctx, g, opt, emit)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPreparedResolvesOnce: Prepare resolves a request once (the hook
// counts each resolution), and nothing a front end asks of the Prepared
// query resolves it again: the schema, the columns, the estimate, the
// plan, a row check, a slice of the sources, Verify, and runs, one after
// another. The answers stay those of the query: a slice's rows are the
// full run's rows of its sources, and the row check finds no mismatch.
func TestPreparedResolvesOnce(t *testing.T) {
	g := gridGraph(t, 4, 5)
	resolved := 0
	opt := Options{Query: Query{Layout: arrowio.LayoutMatrix, Sources: []string{"17", "10", "23", "17"}}, Resources: Resources{Engine: "cpu"}}
	opt.resolved = func() { resolved++ }
	q, err := Prepare(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []graph.VertexID{7, 0, 13}; !slices.Equal(q.Sources(), want) {
		t.Fatalf("sources %v, want %v (repeats run once)", q.Sources(), want)
	}
	if q.Schema() == nil || q.Columns().Len() != 20 || q.Estimate().Rows != 3 {
		t.Fatalf("schema %v, %d columns, %d rows estimated: want a schema, 20 columns, 3 rows", q.Schema(), q.Columns().Len(), q.Estimate().Rows)
	}
	if engine, _ := q.Plan(); engine != "cpu" {
		t.Fatalf("plan: engine %q, want cpu", engine)
	}
	check, err := NewRowCheck(q, []string{"10", "23"})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(q *Prepared, observe func(arrow.RecordBatch) error) [][]int32 {
		t.Helper()
		var out [][]int32
		_, err := q.Run(context.Background(), func(r arrow.RecordBatch) error {
			list := r.Column(1).(*array.FixedSizeList)
			vals := list.ListValues().(*array.Int32)
			for i := range int(r.NumRows()) {
				lo, hi := list.ValueOffsets(i)
				out = append(out, slices.Clone(vals.Int32Values()[lo:hi]))
			}
			if observe != nil {
				return observe(r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	full := rows(q, check.Observe)
	if rep := check.Report(); rep.Mismatches != 0 || rep.Pairs == 0 {
		t.Fatalf("row check: %d mismatches of %d (first: %s)", rep.Mismatches, rep.Pairs, rep.First)
	}
	if again := rows(q, nil); !slices.EqualFunc(again, full, slices.Equal) {
		t.Fatalf("a second run differs from the first")
	}
	if tail := rows(q.Slice(1, 3), nil); len(tail) != 2 || !slices.Equal(tail[0], full[1]) || !slices.Equal(tail[1], full[2]) {
		t.Fatalf("the slice [1, 3) gives %v, want rows 1 and 2 of %v", tail, full)
	}
	pairs := opt
	pairs.Layout, pairs.Sources = arrowio.LayoutPairs, nil
	p, err := Prepare(g, pairs)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), p, 3, 1)
	if err != nil || rep.Mismatches != 0 || len(rep.Sources) != 3 {
		t.Fatalf("verify: %+v, %v; want 3 sources, no mismatch", rep, err)
	}
	if resolved != 2 {
		t.Fatalf("%d resolutions for two Prepares, want 2", resolved)
	}
}
