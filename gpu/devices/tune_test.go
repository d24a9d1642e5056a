package devices

import (
	"testing"

	"github.com/pathctl/pathctl/gpu"
	"github.com/pathctl/pathctl/graph"
)

// TestOpenGroupTunes checks that every engine OpenGroup opens carries the
// run's tuning (adapters of no device here: only what they carry is
// looked at).
func TestOpenGroupTunes(t *testing.T) {
	d := Driver{
		count: func() (int, error) { return 2, nil },
		open:  func(int) (graph.Engine, error) { return Engine{}, nil },
	}
	for _, spec := range []string{"", "order=bfs"} {
		tunedWant := spec != ""
		eng, err := d.OpenGroup([]int{0, 1}, nil, nil, spec, Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range eng.(*Group).Slots() {
			if ge, ok := s.Engine.(Engine); !ok || (ge.Tune != gpu.Tuning{}) != tunedWant {
				t.Errorf("Tune %q: device %s does not carry the run's tuning", spec, s.Label)
			}
		}
	}
}
