package pipeline

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoGPU checks that neither the pipeline nor the Flight server
// depends on package gpu or a package under it: they reach the devices
// through graph/seam.go and the driver the program registers.
func TestImportsNoGPU(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "../flight").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/pathctl/pathctl/gpu" || strings.HasPrefix(pkg, "github.com/pathctl/pathctl/gpu/") {
			t.Errorf("pipeline or flight depends on %s", pkg)
		}
	}
	if !strings.Contains(string(out), "github.com/pathctl/pathctl/graph") {
		t.Errorf("go list -deps named no package of the module:\n%s", out)
	}
}
