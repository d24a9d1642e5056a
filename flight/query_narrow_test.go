package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestQueryNarrowing checks the ticket keys "targets", "cutoff" and "k"
// against the shared cases' expected distances, and INVALID_ARGUMENT for
// their bad values.
func TestQueryNarrowing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	for _, name := range []string{"ties", "string-ids", "float64-weights", "undirected"} {
		c, err := testgraphs.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		uploadCase(t, ctx, cl, c.Name, c)
		ids := c.Vertices()
		n := len(ids)
		want := c.WantMatrix()
		targets := []int{n - 1, 0, n / 2}
		cutoff := want[1]
		if math.IsInf(cutoff, 1) {
			cutoff = 3
		}
		tj, _ := json.Marshal([]string{ids[targets[0]], ids[targets[1]], ids[targets[2]]})
		for _, q := range []struct {
			ticket string
			k      int
			cut    bool
			tgt    bool
			rev    bool
		}{
			{fmt.Sprintf(`{"graph": %q, "engine": "cpu", "targets": %s}`, c.Name, tj), 0, false, true, false},
			{fmt.Sprintf(`{"graph": %q, "engine": "cpu", "cutoff": %v}`, c.Name, cutoff), 0, true, false, false},
			{fmt.Sprintf(`{"graph": %q, "engine": "cpu", "k": 2, "cutoff": %v}`, c.Name, cutoff), 2, true, false, false},
			{fmt.Sprintf(`{"graph": %q, "engine": "cpu", "k": 1, "targets": %s}`, c.Name, tj), 1, false, true, false},
			{fmt.Sprintf(`{"graph": %q, "engine": "cpu", "reverse": true, "targets": %s}`, c.Name, tj), 0, false, true, true},
		} {
			var expect []string
			for s := range n {
				var rows [][2]float64 // column vertex, distance
				cols := []int{}
				if q.tgt {
					cols = targets
				} else {
					for v := range n {
						cols = append(cols, v)
					}
				}
				for _, v := range cols {
					d := want[s*n+v]
					if q.rev {
						d = want[v*n+s]
					}
					if math.IsInf(d, 1) || (q.cut && d > cutoff) || (q.k > 0 && v == s) {
						continue
					}
					rows = append(rows, [2]float64{float64(v), d})
				}
				if q.k > 0 {
					sort.SliceStable(rows, func(i, j int) bool {
						return rows[i][1] < rows[j][1] || (rows[i][1] == rows[j][1] && rows[i][0] < rows[j][0])
					})
					rows = rows[:min(len(rows), q.k)]
				}
				for r, row := range rows {
					line := fmt.Sprintf("%s %s %s", ids[s], ids[int(row[0])], strconv.FormatFloat(row[1], 'g', -1, 64))
					if q.k > 0 {
						line += fmt.Sprintf(" %d", r+1)
					}
					expect = append(expect, line)
				}
			}
			_, recs, err := doGet(ctx, cl, q.ticket, mem)
			if err != nil {
				t.Fatalf("%s: %v", q.ticket, err)
			}
			var got []string
			for _, r := range recs {
				for i := 0; i < int(r.NumRows()); i++ {
					line := fmt.Sprintf("%s %s %s", r.Column(0).ValueStr(i), r.Column(1).ValueStr(i), distText(r.Column(2), i))
					if q.k > 0 {
						line += " " + r.Column(3).(*array.Int32).ValueStr(i)
					}
					got = append(got, line)
				}
				r.Release()
			}
			if strings.Join(got, "\n") != strings.Join(expect, "\n") {
				t.Errorf("%s:\n got %q\nwant %q", q.ticket, got, expect)
			}
		}
	}
	schema, recs, err := doGet(ctx, cl, `{"graph": "ties", "with_paths": true, "k": 2}`, mem)
	for _, r := range recs {
		r.Release()
	}
	if err != nil || schema.Field(schema.NumFields()-1).Name != "path" || len(recs) == 0 {
		t.Errorf("with_paths: schema %v, %d records, %v", schema, len(recs), err)
	}
	// A path 0 -> 1 -> ... -> 10000, on which paths for every pair (4.1
	// GiB of output) are above the server's bound, pipeline.DefaultMaxOutput,
	// and one source's (0.4 MiB) are not.
	large := testgraphs.Case{Name: "large", Kind: testgraphs.Unweighted}
	for i := range 10000 {
		large.Src = append(large.Src, strconv.Itoa(i))
		large.Dst = append(large.Dst, strconv.Itoa(i+1))
	}
	uploadOneBatch(t, ctx, cl, large)
	_, recs, err = doGet(ctx, cl, `{"graph": "large", "with_paths": true, "sources": [0], "k": 3}`, mem)
	releaseAll(recs)
	if err != nil || len(recs) == 0 {
		t.Errorf("with_paths of the 3 nearest on 10001 vertices: %d records, %v", len(recs), err)
	}
	for _, ticket := range []string{`{"graph": "large", "with_paths": true, "sources": [0]}`, `{"graph": "large", "with_paths": true, "sources": [0], "reverse": true}`} {
		_, recs, err = doGet(ctx, cl, ticket, mem)
		releaseAll(recs)
		if err != nil || len(recs) == 0 {
			t.Errorf("%s: %d records, %v", ticket, len(recs), err)
		}
	}
	// Each bad ticket: INVALID_ARGUMENT, and a message naming the key (or
	// what it asks for) and the value.
	for _, bad := range []struct {
		ticket string
		want   []string
	}{
		{`{"graph": "ties", "targets": ["nope"]}`, []string{`"targets": `, `unknown target "nope"`}},
		{`{"graph": "ties", "targets": [99]}`, []string{`"targets": `, `unknown target "99"`, "not in the graph"}},
		{`{"graph": "ties", "with_paths": true, "layout": "stats"}`, []string{"paths", "pairs layout only", "stats"}},
		{`{"graph": "ties", "targets": []}`, []string{`"targets"`, "empty"}},
		{`{"graph": "ties", "cutoff": -1}`, []string{`"cutoff" -1`}},
		{`{"graph": "ties", "cutoff": -0.5, "targets": [1]}`, []string{`"cutoff" -0.5`}},
		// JSON has no NaN: the literal is a malformed ticket, the string
		// one of the wrong type for "cutoff".
		{`{"graph": "ties", "cutoff": NaN}`, []string{"malformed request"}},
		{`{"graph": "ties", "cutoff": "NaN"}`, []string{"cutoff", "float64"}},
		{`{"graph": "ties", "k": 0}`, []string{`"k" 0`}},
		{`{"graph": "ties", "k": -3}`, []string{`"k" -3`}},
		{`{"graph": "ties", "k": -1, "targets": [1]}`, []string{`"k" -1`}},
		{`{"graph": "ties", "k": 2, "layout": "matrix"}`, []string{"k nearest", "matrix"}},
		{`{"graph": "ties", "layout": "nearest"}`, []string{"nearest", "needs sources"}},
		{`{"graph": "ties", "layout": "nearest", "reverse": true, "cutoff": 2}`, []string{"nearest", "needs sources"}},
		{`{"graph": "large", "with_paths": true}`, []string{`flight: "with_paths": invalid request: paths too large: 10001 sources × 10001 vertices: 100020001 rows, at least 4.1 GiB of output, above the limit of 1.0 GiB; ask for fewer sources, some targets or the k nearest`}},
		{`{"graph": "large", "with_paths": true, "reverse": true, "cutoff": 2}`, []string{`"with_paths": `, "paths too large", "100020001 rows", "GiB of output"}},
	} {
		_, recs, err := doGet(ctx, cl, bad.ticket, mem)
		releaseAll(recs)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", bad.ticket, err)
			continue
		}
		msg := status.Convert(err).Message()
		for _, w := range bad.want {
			if !strings.Contains(msg, w) || strings.Contains(msg, "\n") {
				t.Errorf("%s: message %q, want one line with %q", bad.ticket, msg, w)
			}
		}
	}
}

// uploadOneBatch uploads case c under its name as one batch (many rows in
// batches of uploadCase's two take long).
func uploadOneBatch(t *testing.T, ctx context.Context, cl flight.Client, c testgraphs.Case) {
	t.Helper()
	schema, recs := edgeRecords(c, max(1, len(c.Src)), memory.DefaultAllocator)
	defer releaseAll(recs)
	if _, err := upload(ctx, cl, pathDesc(c.Name), nil, schema, recs); err != nil {
		t.Fatalf("upload %s: %v", c.Name, err)
	}
}

// TestQueryNearestLayout checks layout "nearest" on a ticket: one row per
// reached vertex with its nearest source, ties to the smaller source id.
func TestQueryNearestLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c, err := testgraphs.Find("ties")
	if err != nil {
		t.Fatal(err)
	}
	uploadCase(t, ctx, cl, c.Name, c)
	ids := c.Vertices()
	n := len(ids)
	want := c.WantMatrix()
	sources := []int{n - 1, 0}
	var expect []string
	for v := range n {
		best, from := math.Inf(1), -1
		for _, s := range []int{0, n - 1} { // in vertex order: the first of equals wins
			if d := want[s*n+v]; d < best {
				best, from = d, s
			}
		}
		if from >= 0 {
			expect = append(expect, fmt.Sprintf("%s %s %s", ids[v], strconv.FormatFloat(best, 'g', -1, 64), ids[from]))
		}
	}
	ticket := fmt.Sprintf(`{"graph": %q, "layout": "nearest", "sources": [%q, %q]}`, c.Name, ids[sources[0]], ids[sources[1]])
	_, recs, err := doGet(ctx, cl, ticket, mem)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			got = append(got, fmt.Sprintf("%s %s %s", r.Column(0).ValueStr(i), distText(r.Column(1), i), r.Column(2).ValueStr(i)))
		}
		r.Release()
	}
	if strings.Join(got, "\n") != strings.Join(expect, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", ticket, got, expect)
	}
}

// distText prints a distance cell as a float64 would print.
func distText(a interface{ ValueStr(int) string }, i int) string {
	x, err := strconv.ParseFloat(a.ValueStr(i), 64)
	if err != nil {
		return a.ValueStr(i)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
