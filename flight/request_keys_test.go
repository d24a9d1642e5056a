package flight

import (
	"strings"
	"testing"
)

// An unknown ticket or upload key names the key probably meant: the
// closest spelling, or ours for scipy's and networkx's names.
func TestUnknownKeySuggestion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"graph": "g", "sorces": [1]}`, `unknown field "sorces"; did you mean "sources"?`},
		{`{"graph": "g", "layuot": "matrix"}`, `unknown field "layuot"; did you mean "layout"?`},
		{`{"graph": "g", "algo": "bfs"}`, `unknown field "algo"; did you mean "algorithm"?`},
		{`{"graph": "g", "Cutoff": 3}`, `unknown field "Cutoff"; did you mean "cutoff"?`},
		{`{"graph": "g", "indices": [1]}`, `unknown field "indices"; did you mean "sources"? indices is scipy's name`},
		{`{"graph": "g", "limit": 3}`, `unknown field "limit"; did you mean "cutoff"? limit is scipy's name`},
		{`{"graph": "g", "min_only": true}`, `unknown field "min_only"; did you mean "layout": "nearest"? min_only is scipy's name`},
		{`{"graph": "g", "return_predecessors": true}`, `did you mean "with_predecessors"? return_predecessors is scipy's name`},
		{`{"graph": "g", "colour": "red"}`, `unknown field "colour" (fields are matched exactly`},
	} {
		_, err := ParseQuery([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseQuery(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	// An upload has no sources: scipy's indices gets no suggestion there,
	// a misspelt column option does.
	if _, err := parseUploadOptions([]byte(`{"indices": [1]}`)); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("upload with indices: %v, want an unknown field without a suggestion", err)
	}
	if _, err := parseUploadOptions([]byte(`{"src_column": "a"}`)); err == nil || !strings.Contains(err.Error(), `did you mean "src_col"?`) {
		t.Errorf("upload with src_column: %v, want a suggestion of src_col", err)
	}
}
