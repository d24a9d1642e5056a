package flight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// UploadOptions shape the graph built from an uploaded edge table; the
// names and defaults are the CLI's.
type UploadOptions struct {
	// SrcCol, DstCol and WeightCol name the columns; empty means "src",
	// "dst" and an optional "weight". A weight column named here must exist.
	SrcCol    string `json:"src_col,omitempty"`
	DstCol    string `json:"dst_col,omitempty"`
	WeightCol string `json:"weight_col,omitempty"`
	// Unweighted ignores a weight column: every edge weighs 1.
	Unweighted bool `json:"unweighted,omitempty"`
	// Undirected treats each row as both directions.
	Undirected bool `json:"undirected,omitempty"`
	// DistType overrides the distance type ("int32", "int64", "float32",
	// "float64"); empty chooses by the weights.
	DistType string `json:"dist_type,omitempty"`
}

// uploadOptionsJSON is UploadOptions as a client writes them: direction
// may be given as "undirected" (the CLI's --undirected) or as "directed"
// (Python's directed=), or both when they agree.
type uploadOptionsJSON struct {
	UploadOptions
	Undirected *bool `json:"undirected"`
	Directed   *bool `json:"directed"`
	// Expect is the size the client says the upload has; it is not an
	// option of the stored graph.
	Expect *UploadExpect `json:"expect"`
}

// UploadExpect is what a client may say of an upload's size ahead of its
// batches, {"expect": {"rows": R, "bytes": B}} beside the options: its
// rows and the bytes its columns take (pyarrow's Table.nbytes). The
// server then reserves the upload's memory from --max-memory whole before
// it reads a batch, waiting its turn behind the requests ahead of it, so
// that uploads that do not fit side by side take turns instead of growing
// together until the youngest is refused. An upload larger than it said
// reserves the rest as it arrives, as one that says nothing does.
type UploadExpect struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

// parseUploadExpect is the "expect" of upload options b (a command's when
// command is true), nil where it has none. b has been parsed before: an
// error here is one of the sizes.
func parseUploadExpect(b []byte, command bool) (*UploadExpect, error) {
	var e *UploadExpect
	if command {
		var c uploadCommand
		if err := decodeStrict(b, &c); err != nil {
			return nil, err
		}
		e = c.Expect
	} else if len(bytes.TrimSpace(b)) > 0 {
		var o uploadOptionsJSON
		if err := decodeStrict(b, &o); err != nil {
			return nil, err
		}
		e = o.Expect
	}
	if e != nil && (e.Rows < 0 || e.Bytes < 0) {
		return nil, fmt.Errorf("flight: upload options \"expect\": rows %d and bytes %d; want counts of 0 or more", e.Rows, e.Bytes)
	}
	return e, nil
}

// options resolves the two spellings of direction into UploadOptions.
func (o uploadOptionsJSON) options() (UploadOptions, error) {
	opts := o.UploadOptions
	switch {
	case o.Directed != nil && o.Undirected != nil && *o.Directed == *o.Undirected:
		return opts, fmt.Errorf(`flight: upload options "directed": %v and "undirected": %v contradict each other; give one of them`, *o.Directed, *o.Undirected)
	case o.Undirected != nil:
		opts.Undirected = *o.Undirected
	case o.Directed != nil:
		opts.Undirected = !*o.Directed
	}
	return opts, nil
}

// uploadCommand is the command of a DoPut command descriptor: the upload
// options plus the graph name.
type uploadCommand struct {
	Graph string `json:"graph"`
	uploadOptionsJSON
}

// Query asks for the shortest paths of a stored graph: the CLI's options,
// with its names and defaults.
type Query struct {
	Graph string `json:"graph"`
	// Algorithm is one of graph.Algorithms; default "auto".
	Algorithm string `json:"algorithm,omitempty"`
	// Sources are external vertex ids, as JSON strings or numbers; absent
	// or null means every vertex.
	Sources []SourceID `json:"sources,omitempty"`
	// Layout is "pairs" (default), "matrix" or "stats".
	Layout           string `json:"layout,omitempty"`
	WithPredecessors bool   `json:"with_predecessors,omitempty"`
	// Engine is "auto" (default), "cpu" or "gpu".
	Engine string `json:"engine,omitempty"`
	// Delta is the bucket width of delta-stepping; 0 lets the engine choose.
	Delta float64 `json:"delta,omitempty"`
	// MatrixType is the matrix layout's value type, as the CLI's
	// --matrix-type: "float" (float32 where exact, else float64), a
	// distance type's name, or empty for the distance type.
	MatrixType string `json:"matrix_type,omitempty"`
	// QueryNarrowing adds the keys "targets", "cutoff", "k", "reverse" and
	// "with_paths".
	QueryNarrowing
	// QueryBetweenness adds the keys "normalized", "endpoints" and "seed"
	// of the betweenness layout, whose "k" is its sample of sources.
	QueryBetweenness
}

// SourceID is an external vertex id written as a JSON string or number; it
// keeps the text (digits of a number as written).
type SourceID string

// UnmarshalJSON accepts a string or an integer.
func (s *SourceID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var text string
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
		*s = SourceID(text)
		return nil
	}
	text := string(b)
	if _, err := strconv.ParseInt(text, 10, 64); err != nil {
		if _, err := strconv.ParseUint(text, 10, 64); err != nil {
			return fmt.Errorf("source %s is neither a string nor an integer", text)
		}
	}
	*s = SourceID(text)
	return nil
}

// Engines are the engine names a query may ask for.
var Engines = []string{"auto", "cpu", "gpu"}

// normalize fills the defaults and checks what can be checked without the
// graph.
func (q *Query) normalize() error {
	if q.Graph == "" {
		return errors.New(`flight: the request names no "graph"`)
	}
	if err := ValidateName(q.Graph); err != nil {
		return err
	}
	if q.Algorithm == "" {
		q.Algorithm = "auto"
	}
	if q.Layout == "" {
		q.Layout = "pairs"
	}
	if q.Engine == "" {
		q.Engine = "auto"
	}
	known := false
	for _, e := range Engines {
		known = known || q.Engine == e
	}
	if !known {
		return fmt.Errorf("flight: unknown engine %q (want auto, cpu or gpu)", q.Engine)
	}
	if q.Sources != nil && len(q.Sources) == 0 {
		return errors.New(`flight: "sources" is an empty list; leave it out to run from every vertex`)
	}
	if q.Delta < 0 {
		return fmt.Errorf("flight: delta %v is negative", q.Delta)
	}
	if err := q.QueryNarrowing.check(); err != nil {
		return err
	}
	return q.checkBetweenness()
}

// sourceStrings returns the sources as text, nil for every vertex.
func (q *Query) sourceStrings() []string {
	if q.Sources == nil {
		return nil
	}
	out := make([]string, len(q.Sources))
	for i, s := range q.Sources {
		out[i] = string(s)
	}
	return out
}

// ParseQuery decodes and normalizes a query. Unknown fields are refused so
// that a misspelt option is not silently ignored.
func ParseQuery(b []byte) (Query, error) {
	var q Query
	if err := decodeStrict(b, &q); err != nil {
		return q, fmt.Errorf("flight: malformed request: %w; want JSON like {\"graph\": \"name\", \"algorithm\": \"auto\", \"layout\": \"pairs\"}", err)
	}
	return q, q.normalize()
}

// parseUploadOptions decodes upload options; empty input means defaults.
// Direction is "undirected": true or "directed": false (either, or both
// when they agree).
func parseUploadOptions(b []byte) (UploadOptions, error) {
	var o uploadOptionsJSON
	if len(bytes.TrimSpace(b)) > 0 {
		if err := decodeStrict(b, &o); err != nil {
			return o.UploadOptions, fmt.Errorf("flight: malformed upload options: %w; want JSON like {\"src_col\": \"src\", \"dst_col\": \"dst\", \"weight_col\": \"weight\", \"directed\": true}", err)
		}
	}
	return o.options()
}

// parseUploadCommand decodes the command of a DoPut command descriptor.
func parseUploadCommand(b []byte) (string, UploadOptions, error) {
	var c uploadCommand
	if err := decodeStrict(b, &c); err != nil {
		return "", c.UploadOptions, fmt.Errorf("flight: malformed upload command: %w; want JSON like {\"graph\": \"name\", \"src_col\": \"src\"}", err)
	}
	if c.Graph == "" {
		return "", c.UploadOptions, errors.New(`flight: the upload command names no "graph"`)
	}
	o, err := c.options()
	return c.Graph, o, err
}

// decodeStrict decodes the JSON object b into the struct v. Keys must be
// v's JSON names exactly (encoding/json alone matches them without regard
// to case, and lets a repeated key win over the first), each at most once.
func decodeStrict(b []byte, v any) error {
	if err := checkKeys(b, jsonNames(reflect.TypeOf(v).Elem())); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// checkKeys checks the keys of the JSON object b against names: each known
// exactly, none twice. Whatever is not an object is left to the decoder.
func checkKeys(b []byte, names map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		switch {
		case !names[key]:
			return fmt.Errorf("unknown field %q%s (fields are matched exactly, in lower case)", key, suggestKey(key, names))
		case seen[key]:
			return fmt.Errorf("field %q appears twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// keyAliases are scipy's and networkx's names of ticket keys: a ticket
// written with theirs is told ours (where the request has that key).
var keyAliases = map[string]struct{ key, written, whose string }{
	"indices":             {"sources", `"sources"`, "scipy's"},
	"limit":               {"cutoff", `"cutoff"`, "scipy's"},
	"min_only":            {"layout", `"layout": "nearest"`, "scipy's"},
	"return_predecessors": {"with_predecessors", `"with_predecessors"`, "scipy's"},
	"method":              {"algorithm", `"algorithm"`, "scipy's and networkx's"},
	"target":              {"targets", `"targets"`, "networkx's"},
}

// suggestKey says which of names an unknown key probably meant: ours for
// another library's name, else the closest spelling (as Python's
// difflib.get_close_matches: a similarity of 0.6 or more, here 2·LCS over
// the lengths summed); "" when none is close.
func suggestKey(key string, names map[string]bool) string {
	if a, ok := keyAliases[key]; ok && names[a.key] {
		return fmt.Sprintf("; did you mean %s? %s is %s name", a.written, key, a.whose)
	}
	best, score := "", 0.0
	for name := range names {
		r := 2 * float64(lcs(strings.ToLower(key), name)) / float64(len(key)+len(name))
		if r < 0.6 {
			continue
		}
		if best == "" || r > score || (r == score && name < best) {
			best, score = name, r // ties: the first name in order, whatever the map's
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// lcs is the length of the longest common subsequence of a and b (bytes).
func lcs(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// jsonNames lists the JSON keys of struct type t, embedded structs' included.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for n := range jsonNames(f.Type) {
				names[n] = true
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		} else if f.IsExported() {
			names[f.Name] = true
		}
	}
	return names
}
