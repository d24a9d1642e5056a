// Package layout holds the module's checks of its own shape: a type's
// methods live in a few files, and no hand-written file grows past what
// one reader holds.
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	maxMethodFiles = 4   // files holding one type's methods
	maxMethods     = 30  // methods of one type
	maxLines       = 650 // lines of a hand-written non-test Go file
)

// sources maps each package directory of the module to its hand-written
// non-test Go files (generated files, which say so in their first line,
// are left out).
func sources(t *testing.T, root string) map[string][]string {
	t.Helper()
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "python" || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if strings.Contains(first, "Code generated") {
			return nil
		}
		dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestTypesAndFilesStaySmall checks every package of the module: no type
// has methods in more than maxMethodFiles files or more than maxMethods
// methods, and no file is longer than maxLines lines.
func TestTypesAndFilesStaySmall(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := sources(t, root)
	if len(dirs) < 10 {
		t.Fatalf("found %d package directories under %s: the walk is wrong", len(dirs), root)
	}
	for dir, files := range dirs {
		fset := token.NewFileSet()
		methodFiles := map[string]map[string]bool{}
		methods := map[string]int{}
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if lines := fset.File(f.Pos()).LineCount(); lines > maxLines {
				t.Errorf("%s: %d lines, more than %d: split it by concern", path, lines, maxLines)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
					continue
				}
				typ := receiverName(fn.Recv.List[0].Type)
				if methodFiles[typ] == nil {
					methodFiles[typ] = map[string]bool{}
				}
				methodFiles[typ][filepath.Base(path)] = true
				methods[typ]++
			}
		}
		for typ, in := range methodFiles {
			if len(in) > maxMethodFiles {
				names := make([]string, 0, len(in))
				for n := range in {
					names = append(names, n)
				}
				sort.Strings(names)
				t.Errorf("%s: type %s has methods in %d files (%s), more than %d", dir, typ, len(in), strings.Join(names, ", "), maxMethodFiles)
			}
			if methods[typ] > maxMethods {
				t.Errorf("%s: type %s has %d methods, more than %d: give a role its own type", dir, typ, methods[typ], maxMethods)
			}
		}
	}
}

// receiverName is the type name of a receiver: T of T, *T, T[K] or *T[K].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
