package testgraphs

import (
	"flag"
	"math/rand/v2"
	"testing"
)

// seedFlag is the -seed flag of every test binary that imports this
// package: the seed that replays a failed run's random graphs.
var seedFlag = flag.Uint64("seed", 0, "seed of the tests' random graphs (testgraphs.Seed); 0 draws a fresh one")

// Seed returns the seed of t's random graphs: the -seed flag's value where
// it is set, else a fresh one. When t fails, it logs the seed and the
// command line that replays it, so that a failure seen once can be run
// again (go test ./PKG -run NAME -seed N).
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := *seedFlag
	for seed == 0 {
		seed = rand.Uint64()
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random graphs drawn with seed %d; replay with -run '%s' -seed %d", seed, t.Name(), seed)
		}
	})
	return seed
}

// Rand returns a generator for t's random graphs: a PCG of Seed(t) and
// stream (tests that draw several generators give each its own stream, and
// one -seed replays them all).
func Rand(t testing.TB, stream uint64) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(Seed(t), stream))
}
