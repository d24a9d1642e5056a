// Command kerneltable writes the gpu package's table of kernel entry points
// from the CUDA sources; gpu/kernels/build.sh runs it:
//
//	go run ./internal/cmd/kerneltable -dir gpu/kernels -o gpu/kernels_gen.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/pathctl/pathctl/internal/kerneltable"
)

func main() {
	dir := flag.String("dir", "gpu/kernels", "directory of the kernel sources")
	out := flag.String("o", "gpu/kernels_gen.go", "Go file to write")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	t, err := kerneltable.Parse(dir)
	if err != nil {
		return err
	}
	src, err := t.Go()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("kerneltable: %w", err)
	}
	return nil
}
