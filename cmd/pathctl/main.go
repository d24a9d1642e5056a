// Command pathctl computes shortest paths on graphs stored as Arrow,
// Parquet, CSV or DIMACS edge tables, on a GPU where one is usable and on
// every CPU core otherwise. Run `pathctl help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Lazy module loading (CUDA 11.7+ drivers, the default of Linux drivers
	// since 12.2) loads a kernel's code when it is first resolved, and the
	// GPU engine resolves each kernel on its first launch: the device opens
	// without loading the kernels a run does not launch. The driver reads
	// the variable at cuInit; a value the user set is kept.
	if _, set := os.LookupEnv("CUDA_MODULE_LOADING"); !set {
		os.Setenv("CUDA_MODULE_LOADING", "LAZY")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mainWith(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr, startOptions{exits: true})
	stop()
	os.Exit(code)
}
