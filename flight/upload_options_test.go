package flight

import (
	"encoding/json"
	"testing"
)

// FuzzParseUploadOptions: options that parse say the same when written
// back as the sidecar stores them (UploadOptions' JSON) and parsed again,
// and a "directed" key that was accepted is what the options hold.
func FuzzParseUploadOptions(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"directed": false}`, `{"undirected": true}`, `{"directed": true, "undirected": true}`,
		`{"directed": false, "undirected": true, "src_col": "a", "dist_type": "int64"}`, `{"Directed": false}`, `{"directed": 0}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseUploadOptions(b)
		if err != nil {
			return
		}
		stored, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseUploadOptions(stored)
		if err != nil || again != o {
			t.Fatalf("%s parses to %+v, stored as %s, which parses to %+v, %v", b, o, stored, again, err)
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(b, &keys) != nil {
			return
		}
		var directed bool
		if raw, ok := keys["directed"]; ok && json.Unmarshal(raw, &directed) == nil && directed == o.Undirected {
			t.Fatalf("%s: \"directed\": %v accepted as undirected %v", b, directed, o.Undirected)
		}
	})
}
