package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReadmeSaysHowTheBinaryLinks: the README's word on how the binary links
// matches the binary. Built with CGO_ENABLED=0, it still asks for glibc's
// dynamic loader (purego loads libcuda through it), so it runs on glibc
// Linux but not on musl; the README must not call it static.
func TestReadmeSaysHowTheBinaryLinks(t *testing.T) {
	f, err := elf.Open(binPath)
	if err != nil {
		t.Skipf("the binary is not ELF on this platform: %v", err)
	}
	defer f.Close()
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	static := regexp.MustCompile(`(?i)binary is static|static \(` + "`" + `CGO_ENABLED=0` + "`" + `\)|static test binaries`)
	if !interp && len(libs) == 0 {
		t.Skip("this build is fully static; the README's glibc note does not apply")
	}
	t.Logf("interpreter %v, libraries %v", interp, libs)
	if m := static.Find(readme); m != nil {
		t.Errorf("README.md says %q, but the binary asks for a dynamic loader and %v", m, libs)
	}
	for _, want := range []string{"glibc", "musl"} {
		if !regexp.MustCompile(want).Match(readme) {
			t.Errorf("README.md does not say that the binary needs glibc and does not run on musl (no %q)", want)
		}
	}
}
