package pipeline

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the module path; its packages live under the repository root.
const module = "github.com/pathctl/pathctl"

// TestImportsNoGPU checks that neither the pipeline nor the Flight server
// depends on package gpu or a package under it, directly or through
// another package of the module: they reach the devices through
// graph/seam.go and the driver the program registers. It follows the
// imports of the non-test files in the source tree (every build tag's),
// as go list -deps would, without the go command.
func TestImportsNoGPU(t *testing.T) {
	root := ".."
	seen := map[string]string{} // package -> the package that imports it
	queue := []string{module + "/pipeline", module + "/flight"}
	for _, p := range queue {
		seen[p] = ""
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		files, err := filepath.Glob(filepath.Join(root, strings.TrimPrefix(pkg, module), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(path, module+"/") {
					continue
				}
				if _, ok := seen[path]; !ok {
					seen[path] = pkg
					queue = append(queue, path)
				}
			}
		}
	}
	if _, ok := seen[module+"/graph"]; !ok {
		t.Fatalf("the walk found no package of the module: %v", seen)
	}
	for p, by := range seen {
		if p == module+"/gpu" || strings.HasPrefix(p, module+"/gpu/") {
			t.Errorf("%s imports %s: pipeline and flight must not depend on the GPU code", by, p)
		}
	}
}
