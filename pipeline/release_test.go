package pipeline

import (
	"math/rand/v2"
	"testing"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestGraphRelease checks that Release on a graph without a device, left
// to the exit or not, does nothing but succeed.
func TestGraphRelease(t *testing.T) {
	for _, exits := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 19))
		g, err := LoadGraph(randomTable(rng, 20, 40, testgraphs.Int), LoadOptions{ExitAfter: exits})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Release(); err != nil || g.HoldsDevice() {
			t.Errorf("exits %v: Release = %v, holds a device %v", exits, err, g.HoldsDevice())
		}
	}
}
