package pipeline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// TestGraphBuiltOnFirstDevice checks that a graph built on the GPU is built
// on the first device of LoadOptions.Devices: a device that does not exist
// fails the gpu build naming it.
func TestGraphBuiltOnFirstDevice(t *testing.T) {
	n, err := gpuDriver.Count()
	if err != nil {
		t.Skip("no usable GPU: " + err.Error())
	}
	tbl := randomTable(rand.New(rand.NewPCG(19, 3)), 100, 400, testgraphs.Int)
	g, err := LoadGraph(tbl, LoadOptions{Engine: "gpu", Devices: []int{n - 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if g.device == nil || g.device.Ordinal() != n-1 {
		t.Errorf("graph built on %v, want device %d", g.device, n-1)
	}
	g.Close()
	_, err = LoadGraph(tbl, LoadOptions{Engine: "gpu", Devices: []int{n}})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), fmt.Sprintf("device %d", n)) {
		t.Errorf("build on device %d of %d: %v, want ErrUnavailable naming the device", n, n, err)
	}
}
