package devices

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/gpu"
)

// TestBudgetOfFree checks that a GPU's budget moves in steps: free memory
// a few megabytes apart (two devices alike, one device in two runs) gives
// the same budget, hence the same blocks, and a small device keeps 80 %.
func TestBudgetOfFree(t *testing.T) {
	const gib = int64(1) << 30
	a, b := budgetOfFree(140*gib-300<<20), budgetOfFree(140*gib-303<<20)
	if a != b || a%budgetGranule != 0 || a > 140*gib*4/5 || a < 140*gib*4/5-budgetGranule {
		t.Errorf("budgets of free memory 3 MiB apart: %d and %d; want one multiple of %d within a step of 80 %%", a, b, budgetGranule)
	}
	if got := budgetOfFree(gib / 2); got != gib/2/5*4 {
		t.Errorf("budget of 512 MiB free = %d, want 80 %%", got)
	}
}

// TestNearestDeclined checks that the GPU runner says how many nearest
// the device selects, for the run's description.
func TestNearestDeclined(t *testing.T) {
	if got := (gpuRunner{}).NearestDeclined(); !strings.Contains(got, "K up to "+strconv.Itoa(gpu.MaxDeviceNearest)+",") {
		t.Errorf("NearestDeclined = %q, want it to name K up to %d", got, gpu.MaxDeviceNearest)
	}
}
