package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/ref"
	"github.com/pathctl/pathctl/internal/testgraphs"
	"github.com/pathctl/pathctl/pipeline"
)

// floatsOf returns the values of a numeric column as float64, +Inf for nulls.
func floatsOf(t testing.TB, a arrow.Array) []float64 {
	t.Helper()
	out := make([]float64, a.Len())
	for i := range out {
		if a.IsNull(i) {
			out[i] = math.Inf(1)
			continue
		}
		switch c := a.(type) {
		case *array.Int32:
			out[i] = float64(c.Value(i))
		case *array.Int64:
			out[i] = float64(c.Value(i))
		case *array.Float32:
			out[i] = float64(c.Value(i))
		case *array.Float64:
			out[i] = c.Value(i)
		default:
			t.Fatalf("column of type %s is not numeric", a.DataType())
		}
	}
	return out
}

// stringsOf returns a column's values as text (ids as the case spells them).
func stringsOf(a arrow.Array) []string {
	out := make([]string, a.Len())
	for i := range out {
		out[i] = a.ValueStr(i)
	}
	return out
}

// directRun runs the query's options on the graph loaded straight from the
// records, without the server: the reference for every layout.
func directRun(t testing.TB, c testgraphs.Case, q Query) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	schema, recs := edgeRecords(c, 2, memory.DefaultAllocator)
	defer releaseAll(recs)
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	table, err := arrowio.EdgesFromRecords(rr, c.Name, arrowio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipeline.LoadGraph(table, pipeline.LoadOptions{Undirected: c.Undirected})
	if err != nil {
		t.Fatal(err)
	}
	layout, _ := arrowio.ParseLayout(q.Layout)
	opt := pipeline.Options{
		Query:     pipeline.Query{Algorithm: graph.Algorithm(q.Algorithm), Layout: layout, Sources: q.sourceStrings(), WithPredecessors: q.WithPredecessors},
		Resources: pipeline.Resources{Engine: q.Engine},
	}
	pq, err := pipeline.Prepare(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := pq.Schema()
	var got []arrow.RecordBatch
	if _, err := pq.Run(context.Background(), func(r arrow.RecordBatch) error {
		r.Retain()
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out, got
}

// checkPairsAgainstCase checks a pairs result from sources (nil: every
// vertex) against the case's own answers: every reachable pair once with
// its distance, nothing else.
func checkPairsAgainstCase(t testing.TB, c testgraphs.Case, recs []arrow.RecordBatch, hops bool, sources []string) {
	t.Helper()
	want := c.WantMatrix()
	if hops {
		want = c.HopMatrix()
	}
	idx := c.Index()
	n := len(idx)
	seen := map[[2]string]bool{}
	for _, r := range recs {
		src, dst, dist := stringsOf(r.Column(0)), stringsOf(r.Column(1)), floatsOf(t, r.Column(2))
		for i := range src {
			p := [2]string{src[i], dst[i]}
			if seen[p] {
				t.Errorf("%s: pair %v twice", c.Name, p)
			}
			seen[p] = true
			w := want[int(idx[src[i]])*n+int(idx[dst[i]])]
			if dist[i] != w && !(math.Abs(dist[i]-w) < 1e-5*math.Max(1, math.Abs(w))) {
				t.Errorf("%s: d(%s, %s) = %v, want %v", c.Name, src[i], dst[i], dist[i], w)
			}
		}
	}
	if sources == nil {
		sources = c.Vertices()
	}
	reachable := 0
	for _, s := range sources {
		for _, d := range want[int(idx[s])*n : int(idx[s]+1)*n] {
			if !math.IsInf(d, 1) {
				reachable++
			}
		}
	}
	if len(seen) != reachable {
		t.Errorf("%s: %d pairs, want %d", c.Name, len(seen), reachable)
	}
}

// checkPredecessors checks the predecessor column of a pairs result with
// ref.CheckPredecessors, source by source.
func checkPredecessors(t testing.TB, c testgraphs.Case, recs []arrow.RecordBatch) {
	t.Helper()
	g, err := c.CSR()
	if err != nil {
		t.Fatal(err)
	}
	idx := c.Index()
	n := len(idx)
	type row struct {
		dist []float64
		pred []graph.VertexID
	}
	rows := map[graph.VertexID]*row{}
	for _, r := range recs {
		src, dst, dist := stringsOf(r.Column(0)), stringsOf(r.Column(1)), floatsOf(t, r.Column(2))
		pred := r.Column(3)
		for i := range src {
			s := idx[src[i]]
			rw := rows[s]
			if rw == nil {
				rw = &row{dist: make([]float64, n), pred: make([]graph.VertexID, n)}
				for v := range n {
					rw.dist[v], rw.pred[v] = math.Inf(1), -1
				}
				rows[s] = rw
			}
			v := idx[dst[i]]
			rw.dist[v] = dist[i]
			if !pred.IsNull(i) {
				rw.pred[v] = idx[pred.ValueStr(i)]
			}
		}
	}
	for s, rw := range rows {
		var err error
		switch g.Type {
		case graph.DistInt32:
			err = ref.CheckPredecessors(g, s, convert[int32](rw.dist), rw.pred)
		case graph.DistInt64:
			err = ref.CheckPredecessors(g, s, convert[int64](rw.dist), rw.pred)
		case graph.DistFloat32:
			err = ref.CheckPredecessors(g, s, convert[float32](rw.dist), rw.pred)
		case graph.DistFloat64:
			err = ref.CheckPredecessors(g, s, convert[float64](rw.dist), rw.pred)
		}
		if err != nil {
			t.Errorf("%s: predecessors from %d: %v", c.Name, s, err)
		}
	}
}

func convert[D graph.Number](xs []float64) []D {
	out := make([]D, len(xs))
	for i, x := range xs {
		if math.IsInf(x, 1) {
			out[i] = graph.Infinity[D]()
		} else {
			out[i] = D(x)
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	info := map[string]any{"version": "v-test", "engines": []any{map[string]any{"name": "cpu", "available": true}}}
	ts := startServer(t, Config{Allocator: mem, Info: func() any { return info }})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	cases := testgraphs.Cases()
	for _, c := range cases {
		m := uploadCase(t, ctx, cl, c.Name, c)
		if m.Vertices != int64(len(c.Vertices())) || m.Edges != int64(len(c.Src)) || m.Directed == c.Undirected {
			t.Errorf("%s: stored %d vertices, %d edges, directed %v; want %d, %d, %v",
				c.Name, m.Vertices, m.Edges, m.Directed, len(c.Vertices()), len(c.Src), !c.Undirected)
		}
		if m.DistType != c.WantType.String() {
			t.Errorf("%s: distance type %s, want %s", c.Name, m.DistType, c.WantType)
		}
	}

	t.Run("list", func(t *testing.T) {
		stream, err := cl.ListFlights(ctx, &flight.Criteria{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for {
			info, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var m GraphMeta
			if err := json.Unmarshal(info.AppMetadata, &m); err != nil {
				t.Fatal(err)
			}
			c, err := testgraphs.Find(m.Name)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.FlightDescriptor.Path; !slices.Equal(got, []string{"graphs", c.Name}) {
				t.Errorf("descriptor %q", got)
			}
			if info.TotalRecords != int64(len(c.Src)) || m.Vertices != int64(len(c.Vertices())) {
				t.Errorf("%s: listed %d records, %d vertices", c.Name, info.TotalRecords, m.Vertices)
			}
			wantWeight := c.Kind.String()
			if c.Kind == testgraphs.Unweighted {
				wantWeight = ""
			}
			if m.WeightType != wantWeight {
				t.Errorf("%s: weight type %q, want %q", c.Name, m.WeightType, wantWeight)
			}
			schema, err := flight.DeserializeSchema(info.Schema, mem)
			if err != nil || schema.Field(0).Name != "src" {
				t.Errorf("%s: table schema %v, %v", c.Name, schema, err)
			}
			names = append(names, m.Name)
		}
		if len(names) != len(cases) || !slices.IsSorted(names) {
			t.Errorf("listed %v", names)
		}

		// A path descriptor describes one stored graph; criteria filter by
		// name prefix.
		c := cases[len(cases)-1]
		info, err := cl.GetFlightInfo(ctx, pathDesc(c.Name))
		if err != nil || info.TotalRecords != int64(len(c.Src)) || !slices.Equal(info.FlightDescriptor.Path, []string{"graphs", c.Name}) {
			t.Errorf("GetFlightInfo of %s: %v, %v", c.Name, info, err)
		}
		if _, err := cl.GetFlightInfo(ctx, pathDesc("nope")); codeOf(err) != "NotFound" {
			t.Errorf("GetFlightInfo of an unknown graph: %v", err)
		}
		sr, err := cl.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(fmt.Sprintf(`{"graph": %q, "layout": "stats"}`, c.Name))})
		if err != nil {
			t.Fatal(err)
		}
		if schema, err := flight.DeserializeSchema(sr.Schema, mem); err != nil || schema.Field(1).Name != "reachable" {
			t.Errorf("GetSchema of a stats query: %v, %v", schema, err)
		}
		prefix := c.Name[:2]
		filtered, err := cl.ListFlights(ctx, &flight.Criteria{Expression: []byte(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		for {
			info, err := filtered.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(info.FlightDescriptor.Path[1], prefix) {
				t.Errorf("criteria %q listed %s", prefix, info.FlightDescriptor.Path[1])
			}
		}
	})

	t.Run("pairs against the cases' answers", func(t *testing.T) {
		for _, c := range cases {
			for _, algo := range []string{"auto", "dijkstra", "delta", "edge", "bellman-ford", "bfs", "bfs-level"} {
				hops := algo == "bfs" || algo == "bfs-level"
				if c.HasNegative() && algo != "bellman-ford" && !hops {
					continue // refused: see TestBadRequests
				}
				// Sources that reach a negative cycle have no answer.
				var sources []string
				for _, v := range c.Vertices() {
					if hops || !c.ReachesCycle(v) {
						sources = append(sources, v)
					}
				}
				if len(sources) == 0 {
					continue
				}
				srcJSON, _ := json.Marshal(sources)
				q := fmt.Sprintf(`{"graph": %q, "algorithm": %q, "sources": %s}`, c.Name, algo, srcJSON)
				if len(c.CycleSources) == 0 {
					q = fmt.Sprintf(`{"graph": %q, "algorithm": %q}`, c.Name, algo)
					sources = nil
				}
				_, recs, err := doGet(ctx, cl, q, mem)
				if err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				checkPairsAgainstCase(t, c, recs, hops, sources)
				releaseAll(recs)
			}
		}
	})

	t.Run("every layout against the pipeline", func(t *testing.T) {
		for _, c := range cases {
			if c.HasNegative() {
				continue
			}
			var someSource []SourceID
			if vs := c.Vertices(); len(vs) > 0 {
				someSource = []SourceID{SourceID(vs[len(vs)-1])}
			}
			for _, q := range []Query{
				{Layout: "pairs"},
				{Layout: "matrix"},
				{Layout: "stats"},
				{Layout: "matrix", Algorithm: "bfs"},
				{Layout: "stats", Algorithm: "dijkstra", Sources: someSource},
				{Layout: "pairs", Sources: someSource},
			} {
				q.Graph = c.Name
				if err := q.normalize(); err != nil {
					t.Fatal(err)
				}
				body, _ := json.Marshal(q)
				wantSchema, want := directRun(t, c, q)
				schema, got, err := doGet(ctx, cl, string(body), mem)
				if err != nil {
					t.Errorf("%s: %v", body, err)
					releaseAll(want)
					continue
				}
				if !schema.Equal(wantSchema) {
					t.Errorf("%s: schema\n%v\nwant\n%v", body, schema, wantSchema)
				}
				gt, wt := tableOf(schema, got), tableOf(wantSchema, want)
				if !array.TableEqual(gt, wt) {
					t.Errorf("%s: result differs from the pipeline's", body)
				}
				gt.Release()
				wt.Release()
				releaseAll(got)
				releaseAll(want)

				// GetFlightInfo gives the same schema and a ticket that runs it.
				info, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: body})
				if err != nil {
					t.Fatalf("GetFlightInfo %s: %v", body, err)
				}
				infoSchema, err := flight.DeserializeSchema(info.Schema, mem)
				if err != nil || !infoSchema.Equal(wantSchema) {
					t.Errorf("GetFlightInfo %s: schema %v (%v)", body, infoSchema, err)
				}
				if len(info.Endpoint) != 1 {
					t.Fatalf("GetFlightInfo %s: %d endpoints", body, len(info.Endpoint))
				}
				_, again, err := doGet(ctx, cl, string(info.Endpoint[0].Ticket.Ticket), mem)
				if err != nil {
					t.Errorf("ticket of %s: %v", body, err)
				}
				releaseAll(again)
			}
		}
	})

	t.Run("predecessors", func(t *testing.T) {
		for _, c := range cases {
			if c.HasNegative() {
				continue
			}
			for _, algo := range []string{"auto", "dijkstra", "bellman-ford"} {
				q := fmt.Sprintf(`{"graph": %q, "algorithm": %q, "with_predecessors": true}`, c.Name, algo)
				_, recs, err := doGet(ctx, cl, q, mem)
				if err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				checkPairsAgainstCase(t, c, recs, false, nil)
				checkPredecessors(t, c, recs)
				releaseAll(recs)
			}
		}
	})

	t.Run("info and actions", func(t *testing.T) {
		stream, err := cl.ListActions(ctx, &flight.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for {
			a, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, a.Type)
		}
		if !slices.Equal(types, []string{ActionDrop, ActionInfo}) {
			t.Errorf("actions %v", types)
		}
		body, err := doAction(ctx, cl, ActionInfo, "")
		want, _ := json.Marshal(info)
		if err != nil || string(body) != string(want) {
			t.Errorf("info: %s, %v; want %s", body, err, want)
		}
	})

	t.Run("drop", func(t *testing.T) {
		name := cases[len(cases)-1].Name
		body, err := doAction(ctx, cl, ActionDrop, name)
		if err != nil || string(body) != fmt.Sprintf(`{"dropped":%q}`, name) {
			t.Fatalf("drop: %s, %v", body, err)
		}
		if _, _, err := doGet(ctx, cl, fmt.Sprintf(`{"graph": %q}`, name), mem); codeOf(err) != "NotFound" {
			t.Errorf("query of a dropped graph: %v", err)
		}
		checkNoLeftovers(t, ts.cfg.DataDir)
	})

	t.Run("one log line per request", func(t *testing.T) {
		logs := ts.logs.String()
		t.Logf("DoGet calls by engine: cpu %d, gpu %d", strings.Count(logs, "engine=cpu"), strings.Count(logs, "engine=gpu"))
		for _, want := range []string{"method=DoPut", "method=DoGet", "method=ListFlights", "method=GetFlightInfo", "method=DoAction",
			"graph=zero-weights", "algorithm=dijkstra", "engine=", "rows=", "bytes=", "time=", "code=OK", "code=NotFound"} {
			if !strings.Contains(logs, want) {
				t.Errorf("no %q in the log", want)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			if strings.Contains(line, "method=DoGet") && strings.Contains(line, "code=OK") && strings.Contains(line, " rows=0 ") && !strings.Contains(line, "graph=empty") {
				t.Errorf("a DoGet logged no rows: %s", line)
			}
		}
	})
	ts.shutdown(t)
}

// doAction runs an action and returns the body of its single result.
func doAction(ctx context.Context, cl flight.Client, typ, body string) ([]byte, error) {
	stream, err := cl.DoAction(ctx, &flight.Action{Type: typ, Body: []byte(body)})
	if err != nil {
		return nil, err
	}
	var out []byte
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = r.Body
	}
}

// TestDictionaryUpload uploads string ids dictionary-encoded with a new
// dictionary in every batch (as pyarrow sends a table of chunks): the
// stored graph answers as the plain one does, before and after a restart.
func TestDictionaryUpload(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, Config{Allocator: mem})
	ctx := context.Background()
	cl := dial(t, ts.addr)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: dt}, {Name: "dst", Type: dt}}, nil)
	batches := [][2][]string{{{"a", "b"}, {"b", "c"}}, {{"c", "d", "x"}, {"d", "a", "a"}}}
	plain := testgraphs.Case{Name: "plain", StringIDs: true, Kind: testgraphs.Unweighted}
	var recs []arrow.RecordBatch
	for _, rows := range batches {
		b := array.NewRecordBuilder(mem, schema)
		for i, col := range rows {
			for _, v := range col {
				if err := b.Field(i).(*array.BinaryDictionaryBuilder).AppendString(v); err != nil {
					t.Fatal(err)
				}
			}
		}
		plain.Src, plain.Dst = append(plain.Src, rows[0]...), append(plain.Dst, rows[1]...)
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	m, err := upload(ctx, cl, pathDesc("dict"), nil, schema, recs)
	releaseAll(recs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Vertices != 5 || m.IDType != "utf8" {
		t.Errorf("stored %+v", m)
	}
	uploadCase(t, ctx, cl, "plain", plain)
	const query = `{"graph": %q, "layout": "matrix", "sources": ["x", "a"]}`
	_, want, err := doGet(ctx, cl, fmt.Sprintf(query, "plain"), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(want)
	_, got, err := doGet(ctx, cl, fmt.Sprintf(query, "dict"), mem)
	if err != nil {
		t.Fatal(err)
	}
	if tableString(got) != tableString(want) || len(want) == 0 {
		t.Errorf("dictionary upload answers\n%s\nplain\n%s", tableString(got), tableString(want))
	}
	releaseAll(got)
	ts.shutdown(t)

	ts2 := startServer(t, Config{DataDir: ts.cfg.DataDir, Allocator: mem})
	_, got, err = doGet(ctx, dial(t, ts2.addr), fmt.Sprintf(query, "dict"), mem)
	if err != nil {
		t.Fatal(err)
	}
	if tableString(got) != tableString(want) {
		t.Errorf("after the restart the dictionary upload answers\n%s", tableString(got))
	}
	releaseAll(got)
	ts2.shutdown(t)
}
