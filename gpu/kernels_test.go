package gpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// kernelSourcesHash recomputes what kernels/build.sh records: SHA-256 over
// the sorted *.cu and *.cuh files, each as its name, a newline, its length in
// bytes, a newline and its contents.
func kernelSourcesHash(dir string) (string, error) {
	var names []string
	for _, pat := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		names = append(names, m...)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no kernel sources in %s", dir)
	}
	sort.Slice(names, func(i, j int) bool { return filepath.Base(names[i]) < filepath.Base(names[j]) })
	h := sha256.New()
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n%d\n", filepath.Base(p), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func TestKernelImageMatchesSources(t *testing.T) {
	// go test runs in the package directory; a copied test binary may run
	// from the repository root.
	dir := "kernels"
	if _, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil {
		dir = filepath.Join("gpu", "kernels")
	}
	got, err := kernelSourcesHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := kernelSourceHash(); got != want {
		t.Fatalf("kernel sources hash to %s but the embedded image was built from %s: run gpu/kernels/build.sh", got, want)
	}
}

func TestKernelImageIsFatbin(t *testing.T) {
	if len(kernelImage) < 64 {
		t.Fatalf("embedded kernel image is %d bytes", len(kernelImage))
	}
	if !bytes.HasPrefix(kernelImage, fatbinMagic) {
		t.Fatalf("embedded kernel image starts with % x, want the fatbin magic % x", kernelImage[:4], fatbinMagic)
	}
}

// TestKernelImageNamesEveryKernel checks that every kernel the runner
// launches is in the image (the names are stored as text in the ELF parts).
func TestKernelImageNamesEveryKernel(t *testing.T) {
	var names []string
	for _, typ := range []string{"i32", "i64", "f32", "f64"} {
		for _, k := range []string{"dijkstra_", "delta_", "edge_", "bellman_ford_", "predecessors_", "stats_",
			"csr_scatter_", "csr_sort_", "csr_compact_"} {
			names = append(names, k+typ)
		}
	}
	names = append(names, "validity_i32", "validity_i64", "bfs_i32", "bfs_pred_i32", "bfs_level_i32", "bellman_ford_pred_i32", "bellman_ford_pred_f32",
		"csr_count", "csr_scan")
	for _, name := range names {
		if !bytes.Contains(kernelImage, append([]byte(name), 0)) {
			t.Errorf("kernel %s is not in the embedded image", name)
		}
	}
}
