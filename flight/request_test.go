package flight

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"roads", true},
		{"a.b-c_D9", true},
		{".hidden", false}, // names starting with '.' or '-' were accepted before
		{"...", false},
		{"-rf", false},
		{"--help", false},
		{"_x", true},
		{"9", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{"../etc", false},
		{`a\b`, false},
		{"a b", false},
		{"naïve", false},
		{"a\x00b", false},
	} {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestTicketKeysExact: keys match exactly; a key differing in case, or
// repeated, is refused. Before, {"graph":"g1","Graph":"x"} queried x.
func TestTicketKeysExact(t *testing.T) {
	for _, in := range []string{
		`{"graph": "g1", "Graph": "x"}`,
		`{"GRAPH": "g1"}`,
		`{"graph": "g1", "graph": "x"}`,
		`{"graph": "g1", "Layout": "matrix"}`,
	} {
		if q, err := ParseQuery([]byte(in)); err == nil {
			t.Errorf("ParseQuery(%s) = %+v; want an error", in, q)
		}
	}
	for _, in := range []string{`{"graph": "g", "Unweighted": true}`, `{"graph": "g", "src_col": "a", "SRC_COL": "b"}`} {
		if _, _, err := parseUploadCommand([]byte(in)); err == nil {
			t.Errorf("parseUploadCommand(%s) accepted", in)
		}
	}
	if _, err := parseUploadOptions([]byte(`{"Undirected": true}`)); err == nil {
		t.Errorf("upload options with a key in the wrong case accepted")
	}
	if q, err := ParseQuery([]byte(`{"graph": "g1", "layout": "matrix", "sources": [1, "a"]}`)); err != nil || q.Graph != "g1" || q.Layout != "matrix" {
		t.Errorf("exact keys: %+v, %v", q, err)
	}
}

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Query
		sources []string
		err     string
	}{
		{in: `{"graph": "g"}`, want: Query{Graph: "g", Algorithm: "auto", Layout: "pairs", Engine: "auto"}},
		{in: `{"graph": "g", "algorithm": "bfs", "layout": "stats", "engine": "cpu", "with_predecessors": true, "delta": 2.5}`,
			want: Query{Graph: "g", Algorithm: "bfs", Layout: "stats", Engine: "cpu", WithPredecessors: true, Delta: 2.5}},
		{in: `{"graph": "g", "sources": ["a", 7, -3, 18446744073709551615]}`, sources: []string{"a", "7", "-3", "18446744073709551615"}},
		{in: `{"graph": "g", "sources": null}`, sources: nil},
		{in: `{"graph": "g", "sources": [1.5]}`, err: "neither a string nor an integer"},
		{in: `{"graph": "g", "sources": [{}]}`, err: "neither a string nor an integer"},
		{in: `{"graph": "g", "sources": []}`, err: "empty list"},
		{in: `{"graph": "g", "sources": "a"}`, err: "malformed request"},
		{in: `{"graph": "g", "engine": "fpga"}`, err: `unknown engine "fpga"`},
		{in: `{"graph": "g", "delta": -1}`, err: "negative"},
		{in: `{"graph": "a/b"}`, err: "graph name"},
		{in: `{}`, err: `names no "graph"`},
		{in: ``, err: "malformed request"},
		{in: `null`, err: `names no "graph"`},
		{in: `{"graph": "g", "layuot": "matrix"}`, err: `unknown field "layuot"`},
		{in: `{"graph": "g"}x`, err: "trailing data"},
	} {
		q, err := ParseQuery([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseQuery(%s) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseQuery(%s): %v", tc.in, err)
			continue
		}
		if tc.want.Graph != "" && !(q.Graph == tc.want.Graph && q.Algorithm == tc.want.Algorithm && q.Layout == tc.want.Layout &&
			q.Engine == tc.want.Engine && q.WithPredecessors == tc.want.WithPredecessors && q.Delta == tc.want.Delta) {
			t.Errorf("ParseQuery(%s) = %+v, want %+v", tc.in, q, tc.want)
		}
		if tc.want.Graph == "" && !slices.Equal(q.sourceStrings(), tc.sources) {
			t.Errorf("ParseQuery(%s) sources %q, want %q", tc.in, q.sourceStrings(), tc.sources)
		}
	}
}

func TestParseUploadOptions(t *testing.T) {
	o, err := parseUploadOptions(nil)
	if err != nil || o != (UploadOptions{}) {
		t.Errorf("no options: %+v, %v", o, err)
	}
	o, err = parseUploadOptions([]byte(`{"src_col": "from", "dst_col": "to", "weight_col": "w", "undirected": true, "dist_type": "int64"}`))
	if err != nil || o != (UploadOptions{SrcCol: "from", DstCol: "to", WeightCol: "w", Undirected: true, DistType: "int64"}) {
		t.Errorf("options: %+v, %v", o, err)
	}
	if _, err := parseUploadOptions([]byte(`{"drected": false}`)); err == nil {
		t.Errorf("an unknown option was accepted")
	}
	name, o, err := parseUploadCommand([]byte(`{"graph": "g", "unweighted": true}`))
	if err != nil || name != "g" || !o.Unweighted {
		t.Errorf("command: %q %+v %v", name, o, err)
	}
}

// TestUploadDirection: direction is "undirected" (the CLI's spelling) or
// "directed" (design.md's and Python's), or both when they agree; a
// contradictory pair is refused naming both keys.
func TestUploadDirection(t *testing.T) {
	for _, tc := range []struct {
		in         string
		undirected bool
		err        string
	}{
		{in: `{}`},
		{in: `{"directed": true}`},
		{in: `{"directed": false}`, undirected: true},
		{in: `{"undirected": true}`, undirected: true},
		{in: `{"undirected": false}`},
		{in: `{"directed": false, "undirected": true}`, undirected: true},
		{in: `{"directed": true, "undirected": false}`},
		{in: `{"directed": true, "undirected": true}`, err: `"directed": true and "undirected": true contradict`},
		{in: `{"directed": false, "undirected": false}`, err: `"directed": false and "undirected": false contradict`},
		{in: `{"directed": "no"}`, err: "malformed upload options"},
		{in: `{"Directed": false}`, err: `unknown field "Directed"`},
		{in: `{"directed": false, "directed": true}`, err: `"directed" appears twice`},
	} {
		o, err := parseUploadOptions([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseUploadOptions(%s) = %+v, %v; want an error with %q", tc.in, o, err, tc.err)
			}
		} else if err != nil || o.Undirected != tc.undirected {
			t.Errorf("parseUploadOptions(%s) = %+v, %v; want undirected %v", tc.in, o, err, tc.undirected)
		}
		cmd := `{"graph": "g"}`
		if tc.in != `{}` {
			cmd = `{"graph": "g", ` + strings.TrimPrefix(tc.in, "{")
		}
		_, o, err = parseUploadCommand([]byte(cmd))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) && !strings.Contains(tc.err, "malformed") {
				t.Errorf("parseUploadCommand(%s) = %+v, %v; want an error with %q", cmd, o, err, tc.err)
			}
		} else if err != nil || o.Undirected != tc.undirected {
			t.Errorf("parseUploadCommand(%s) = %+v, %v; want undirected %v", cmd, o, err, tc.undirected)
		}
	}
}

// The ticket of a query is its normalized JSON: parsing it again gives
// the same query.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`{"graph": "g"}`, `{"graph": "g", "sources": ["a", 7]}`, `{"graph": "..", "layout": "x"}`, `[`, `{"graph": "g", "delta": 1e308}`, `{"graph":"g1","Graph":"x"}`, `{"graph": "g", "graph": "h"}`, `{"graph": ".hidden"}`, `{"graph": "-rf"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQuery(b)
		if err != nil {
			return
		}
		if ValidateName(q.Graph) != nil {
			t.Fatalf("accepted graph name %q", q.Graph)
		}
		ticket, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseQuery(ticket)
		if err != nil {
			t.Fatalf("ticket %s does not parse: %v", ticket, err)
		}
		if !slices.Equal(again.sourceStrings(), q.sourceStrings()) || again.Graph != q.Graph || again.Algorithm != q.Algorithm {
			t.Fatalf("ticket %s parses to %+v, not %+v", ticket, again, q)
		}
	})
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"g", ".", "..", "a/b", "x.y", ".hidden", "-rf", "_ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName(name) != nil {
			return
		}
		if name == "" || name[0] == '.' || name[0] == '-' || strings.ContainsAny(name, `/\`+"\x00") || len(name) > MaxNameLen {
			t.Fatalf("accepted %q", name)
		}
	})
}
