package devices

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
)

// TestBlockQueue checks the queue alone: a job taken whole, a device
// cutting a chunk larger than its budget, a shared job cut among the idle
// devices, a failed device's chunk taken next by another, a busy device
// leaving a job to an idle one, and the last failure failing what is left.
func TestBlockQueue(t *testing.T) {
	newJob := func() *deviceJob { return &deviceJob{ctx: context.Background(), done: make(chan struct{})} }
	q := newBlockQueue(2, nil)
	j := newJob()
	if err := q.push(j, 100, false, nil); err != nil {
		t.Fatal(err)
	}
	// A device whose budget holds 20 rows cuts 16 (a multiple of 8).
	c, got, _ := q.take(0, 20, true)
	if !got || c.lo != 0 || c.hi != 16 {
		t.Fatalf("first chunk [%d, %d), want [0, 16)", c.lo, c.hi)
	}
	q.giveBack(0, c, errors.New("device A broke"))
	c2, _, _ := q.take(1, 0, true)
	if c2.lo != 0 || c2.hi != 16 {
		t.Fatalf("after a failure the next chunk is [%d, %d), want the failed [0, 16)", c2.lo, c2.hi)
	}
	j.finish(nil, 0, 0)
	c3, _, _ := q.take(1, 0, true)
	if c3.lo != 16 || c3.hi != 100 {
		t.Fatalf("chunk [%d, %d), want the rest of the job whole, [16, 100)", c3.lo, c3.hi)
	}
	j.finish(nil, 0, 0)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}

	// A device holding a block takes no second while another is idle,
	// even one not yet waiting; once none is, it takes it.
	q2 := newBlockQueue(3, nil)
	j2, j3 := newJob(), newJob()
	if err := q2.push(j2, 64, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := q2.push(j3, 64, false, nil); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := q2.take(0, 0, true); c.job != j2 || c.hi-c.lo != 64 {
		t.Fatalf("first device took [%d, %d), want the first job whole", c.lo, c.hi)
	}
	if _, got, open := q2.take(0, 0, false); got || !open {
		t.Errorf("a busy device took a job while two devices are idle")
	}
	if c, _, _ := q2.take(1, 0, true); c.job != j3 {
		t.Fatal("second device did not take the second job")
	}
	j4 := newJob()
	if err := q2.push(j4, 64, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, got, _ := q2.take(0, 0, false); got {
		t.Errorf("a busy device took a job while the third is idle")
	}
	if c, _, _ := q2.take(2, 0, true); c.job != j4 {
		t.Fatal("third device did not take the third job")
	}
	j5 := newJob()
	if err := q2.push(j5, 64, false, nil); err != nil {
		t.Fatal(err)
	}
	if c, got, _ := q2.take(0, 0, false); !got || c.job != j5 {
		t.Errorf("a busy device left a job no device is idle for")
	}

	// A shared job is cut among the idle devices: the first to take it
	// takes its part (rounded up to a multiple of 8), the last the rest.
	q3 := newBlockQueue(3, nil)
	j6 := newJob()
	if err := q3.push(j6, 100, true, nil); err != nil {
		t.Fatal(err)
	}
	var rows []int
	for w := range 3 {
		c, _, _ := q3.take(w, 0, true)
		rows = append(rows, c.hi-c.lo)
		j6.finish(nil, 0, 0)
	}
	if !slices.Equal(rows, []int{40, 32, 28}) {
		t.Errorf("a shared job of 100 rows among three idle devices gave %v, want [40 32 28]", rows)
	}
	if err := j6.Wait(); err != nil {
		t.Fatal(err)
	}

	// A job queued in parts (cut at multiples of 8), each taken whole.
	j8 := newJob()
	if err := q3.push(j8, 100, false, []int{40, 80}); err != nil {
		t.Fatal(err)
	}
	rows = rows[:0]
	for w := range 3 {
		c, _, _ := q3.take(w, 0, true)
		rows = append(rows, c.hi-c.lo)
		j8.finish(nil, 0, 0)
	}
	if !slices.Equal(rows, []int{40, 40, 20}) {
		t.Errorf("a job of 100 rows in three parts gave %v, want [40 40 20]", rows)
	}
	if err := j8.Wait(); err != nil {
		t.Fatal(err)
	}

	// The last device to fail fails what is left, with every error.
	j7 := newJob()
	if err := q.push(j7, 40, false, nil); err != nil {
		t.Fatal(err)
	}
	c7, _, _ := q.take(1, 100, true)
	q.giveBack(1, c7, errors.New("device B broke"))
	if err := j7.Wait(); err == nil || !strings.Contains(err.Error(), "A broke") || !strings.Contains(err.Error(), "B broke") {
		t.Errorf("job after every device failed: %v", err)
	}
	if err := q.push(newJob(), 4, false, nil); err == nil {
		t.Error("a queue without devices took a job")
	}
	q.close()
	if _, got, open := q.take(1, 0, true); got || open {
		t.Error("a closed queue gave a chunk")
	}
	q2.close()
	q3.close()
}

// TestTailCuts checks where blocks are cut among the devices: in the last
// round only, into ranges of equal rows per device, at multiples of 8.
func TestTailCuts(t *testing.T) {
	blocksOf := func(sizes ...int) []graph.SourceBlock {
		var out []graph.SourceBlock
		start := 0
		for _, s := range sizes {
			out = append(out, graph.SourceBlock{Start: start, End: start + s})
			start += s
		}
		return out
	}
	for _, c := range []struct {
		name    string
		blocks  []graph.SourceBlock
		devices int
		want    [][]int
	}{
		{"three equal on two", blocksOf(80, 80, 80), 2, [][]int{nil, nil, {40}}},
		{"four equal on two", blocksOf(100, 100, 100, 100), 2, [][]int{nil, nil, nil, nil}},
		{"four, the last a remainder, on two", blocksOf(57142, 57142, 57142, 38600), 2, [][]int{nil, nil, {47864}, nil}},
		{"one on three", blocksOf(100), 3, [][]int{{32, 64}}},
		{"nine on two", blocksOf(45, 45, 45, 45, 45, 45, 45, 45, 40), 2, [][]int{nil, nil, nil, nil, nil, nil, nil, nil, {16}}},
		{"two even on two", blocksOf(87208, 87195), 2, [][]int{nil, nil}},
		{"two nearly even on two", blocksOf(90000, 84403), 2, [][]int{nil, nil}},
		{"two uneven on two", blocksOf(147000, 27403), 2, [][]int{{87200}, nil}},
		{"five on one", blocksOf(10, 10, 10, 10, 10), 1, [][]int{nil, nil, nil, nil, nil}},
	} {
		r := &devicesRunner{workers: make([]*deviceWorker, c.devices)}
		for i := range c.blocks {
			if got := r.TailCuts(i, c.blocks); !slices.Equal(got, c.want[i]) {
				t.Errorf("%s: block %d cut at %v, want %v", c.name, i, got, c.want[i])
			}
		}
	}
}
