package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// maxReadmeLines bounds README.md: the first five minutes, the commands
// and layouts, and Python, Flight and Spark in brief; the reference is
// docs/.
const maxReadmeLines = 300

// TestReadmeIsShort: README.md stays at most maxReadmeLines lines.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move detail to docs/", n, maxReadmeLines)
	}
}
