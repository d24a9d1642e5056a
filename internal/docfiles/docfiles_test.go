package docfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write(dir, "doc.go", "// Package p.\n//\n//   - doc.go: this overview\n//   - a.go: the a\n//   - gone.go: removed\npackage p\n")
	write(dir, "a.go", "package p\n")
	write(dir, "b.go", "package p\n")
	write(dir, "b_test.go", "package p\n")
	err := Check(dir)
	if err == nil || !strings.Contains(err.Error(), "[b.go]") || !strings.Contains(err.Error(), "[gone.go]") {
		t.Fatalf("Check = %v, want b.go missing and gone.go stale", err)
	}
	write(dir, "doc.go", "// Package p.\n//\n//   - doc.go: this overview\n//   - a.go: the a\n//   - b.go: the b\npackage p\n")
	if err := Check(dir); err != nil {
		t.Fatalf("Check = %v, want nil", err)
	}
	write(dir, "doc.go", "// Package p.\npackage p\n")
	if err := Check(dir); err == nil {
		t.Fatal("Check of a doc.go without a list = nil")
	}
}
