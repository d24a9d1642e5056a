package main

import (
	"strings"
	"testing"
)

// TestVerifySamples: --samples -1 is a usage error of one line (it
// panicked); --samples 0 checks every source and says how many (it said
// "from 0 sources"), as does a count above the vertices (issue 37, point 11).
func TestVerifySamples(t *testing.T) {
	in := writeFile(t, t.TempDir(), "g.csv", "src,dst,weight\n1,2,3\n2,3,4\n3,4,1\n")
	oneErrorLine(t, pathctl(t, nil, "verify", in, "--samples", "-1"), exitUsage, "--samples -1")
	for _, c := range []struct{ samples, want string }{
		{"0", "16 distances from 4 sources (every source) match"},
		{"9", "16 distances from 4 sources (every source) match"},
		{"2", "8 distances from 2 sources match"},
	} {
		r := pathctl(t, nil, "verify", in, "--engine", "cpu", "--samples", c.samples)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("--samples %s: exit %d, stdout %q, stderr %q; want %q", c.samples, r.code, r.stdout, r.stderr, c.want)
		}
	}
}
