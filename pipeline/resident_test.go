package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
)

// fakeResident is a ResidentRunner over fakeAsync: ComputeResident logs
// the device block and can refuse one as too large; the block's Start
// fills rows as fakeAsync does, from the device block's sources.
type fakeResident struct {
	*fakeAsync
	computes  [][]graph.VertexID
	tooLarge  int // device block refused with ErrResidentTooLarge; -1 for none
	startFail int // host block (counted over every resident Start) that fails; -1 for none
	rstarts   int
}

type fakeDeviceBlock struct {
	f       *fakeResident
	sources []graph.VertexID
}

func (f *fakeResident) ComputeResident(ctx context.Context, sources []graph.VertexID) (graph.ResidentBlock, error) {
	i := len(f.computes)
	f.computes = append(f.computes, sources)
	if i == f.tooLarge {
		return nil, fmt.Errorf("%w: fake", graph.ErrResidentTooLarge)
	}
	return &fakeDeviceBlock{f, sources}, nil
}

func (b *fakeDeviceBlock) Start(ctx context.Context, lo, hi int, out *graph.Block) (graph.Waiter, error) {
	f := b.f
	i := f.rstarts
	f.rstarts++
	for r, s := range out.Sources {
		if s != b.sources[lo+r] {
			return nil, fmt.Errorf("host block row %d is source %d, device row %d is %d", r, s, lo+r, b.sources[lo+r])
		}
	}
	if i == f.startFail {
		return nil, errors.New("fake resident start failed")
	}
	return f.fakeAsync.Start(ctx, out)
}

// TestRunBlocksResident checks the device blocks of a ResidentRunner:
// consecutive host blocks share one device block of at most residentMax
// sources, every host block reaches the sink in order with its rows, a
// device block that does not fit sends the rest through Start, and a
// failed Start leaves nothing unwaited.
func TestRunBlocksResident(t *testing.T) {
	const n, size, nblocks = 5, 2, 6
	sources := allSources(size * nblocks)
	blocks := PlanBlocks(len(sources), 1, 0, size)
	for _, c := range []struct {
		name                string
		tooLarge, startFail int
		wantComputes        [][2]int // the device blocks asked for
		wantErr             bool
	}{
		{"grouped", -1, -1, [][2]int{{0, 4}, {4, 8}, {8, 12}}, false},
		{"too large", 1, -1, [][2]int{{0, 4}, {4, 8}}, false},
		{"start fails", -1, 3, [][2]int{{0, 4}, {4, 8}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			f := &fakeResident{fakeAsync: newFakeAsync(n, 2*nblocks), tooLarge: c.tooLarge, startFail: c.startFail}
			opt := Options{Query: Query{Layout: arrowio.LayoutPairs}}
			var sunk int
			err := runBlocks(context.Background(), fakeGraph(t, n), f, opt, schedule{residentMax: 5}, sources, blocks, func(res blockResult) error {
				i := sunk
				sunk++
				if res.end != blocks[i].End {
					return fmt.Errorf("sink %d got block ending at %d, want %d", i, res.end, blocks[i].End)
				}
				if err := checkFakeRows(res.block); err != nil {
					return fmt.Errorf("block %d: %w", i, err)
				}
				return nil
			})
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, c.wantErr)
			}
			if !c.wantErr && sunk != nblocks {
				t.Errorf("sink got %d blocks, want %d", sunk, nblocks)
			}
			if len(f.computes) != len(c.wantComputes) {
				t.Fatalf("device blocks %v, want %v", f.computes, c.wantComputes)
			}
			for i, w := range c.wantComputes {
				got := f.computes[i]
				if len(got) != w[1]-w[0] || got[0] != graph.VertexID(w[0]) {
					t.Errorf("device block %d holds %v, want sources [%d, %d)", i, got, w[0], w[1])
				}
			}
			f.checkAllWaited(t, base)
		})
	}
	// Without room for more than one host block, the producer starts ahead.
	f := &fakeResident{fakeAsync: newFakeAsync(n, nblocks), tooLarge: -1, startFail: -1}
	err := runBlocks(context.Background(), fakeGraph(t, n), f, Options{Query: Query{Layout: arrowio.LayoutPairs}}, schedule{residentMax: size}, sources, blocks,
		func(blockResult) error { return nil })
	if err != nil || len(f.computes) != 0 {
		t.Errorf("residentMax of one host block: err %v, %d device blocks", err, len(f.computes))
	}
}

// pinnedResident is a fakeResident that also pins host memory.
type pinnedResident struct {
	*fakeResident
	*fakePinner
}

// TestRunBlocksResidentPinned runs the matrix layout's pool over a
// ResidentRunner that pins: every block's rows reach the records, the pool
// pins at most blockPoolMax arrays and unpins all of them by the end, and
// where the device block does not fit, the split host blocks are merged
// back to computeMax before they compute on their own.
func TestRunBlocksResidentPinned(t *testing.T) {
	const n, piece, computeMax, total = 5, 2, 6, 24
	sources := allSources(total)
	blocks := splitBlocks(PlanBlocks(total, 1, 0, computeMax), piece)
	for _, tooLarge := range []int{-1, 0} {
		t.Run(fmt.Sprintf("tooLarge=%d", tooLarge), func(t *testing.T) {
			base := runtime.NumGoroutine()
			f := &fakeResident{fakeAsync: newFakeAsync(n, 2*len(blocks)), tooLarge: tooLarge, startFail: -1}
			pin := &fakePinner{pinned: map[*byte]int{}}
			var sizes []int
			opt := Options{Query: Query{Layout: arrowio.LayoutMatrix}}
			sched := schedule{residentMax: total, computeMax: computeMax}
			sched.buildRecords = func(blk *graph.Block) ([]arrow.RecordBatch, error) {
				sizes = append(sizes, len(blk.Sources))
				if err := checkFakeRows(blk); err != nil {
					return nil, err
				}
				d := blk.Dist.([]int32)
				if len(blk.Valid) != (len(d)+7)/8 {
					return nil, fmt.Errorf("block of %d entries has %d bytes of bitmap room", len(d), len(blk.Valid))
				}
				blk.Recycle() // the records are released at once
				return []arrow.RecordBatch{}, nil
			}
			err := runBlocks(context.Background(), fakeGraph(t, n), pinnedResident{f, pin}, opt, sched, sources, blocks,
				func(blockResult) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			want := len(blocks)
			if tooLarge == 0 {
				want = total / computeMax
			}
			if len(sizes) != want {
				t.Fatalf("%d blocks computed (sizes %v), want %d", len(sizes), sizes, want)
			}
			if pin.calls == 0 || pin.calls > blockPoolMax || len(pin.pinned) != 0 {
				t.Errorf("%d arrays pinned, %d left pinned; want 1..%d and none left", pin.calls, len(pin.pinned), blockPoolMax)
			}
			f.checkAllWaited(t, base)
		})
	}
}
