package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandsImportNoGPU checks that the commands reach the GPU only
// through pipeline: no file of the package but the engine wiring
// (engines.go, where there is one) imports package gpu or a package under
// it.
func TestCommandsImportNoGPU(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "engines.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "github.com/pathctl/pathctl/gpu" || strings.HasPrefix(path, "github.com/pathctl/pathctl/gpu/") {
				t.Errorf("%s imports %s; the commands reach the GPU through pipeline", name, path)
			}
		}
	}
}
