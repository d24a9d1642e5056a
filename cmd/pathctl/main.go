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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
