package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/testgraphs"
)

var errOOM = fmt.Errorf("%w (asked for 1 bytes)", ResultOutOfMemory.Err("cuMemAlloc_v2"))

// TestRunChunks checks the halving of runChunks with a fake block runner
// that runs out of memory above a number of sources; no device needed.
func TestRunChunks(t *testing.T) {
	errOther := errors.New("launch failed")
	for _, tc := range []struct {
		name      string
		k, fit    int
		limit     int   // chunks above limit run out of memory
		other     error // returned by every chunk when set
		releaseOK bool
		wantCalls [][2]int
		wantFit   int
		released  int    // calls of release
		wantErr   string // substring, "" for none
	}{
		{name: "fits", k: 7, limit: 7, releaseOK: true, wantCalls: [][2]int{{0, 7}}},
		{name: "halved once", k: 7, limit: 4, releaseOK: true, wantCalls: [][2]int{{0, 7}, {0, 4}, {4, 7}}, wantFit: 4, released: 1},
		{name: "known fit", k: 7, fit: 4, limit: 4, releaseOK: true, wantCalls: [][2]int{{0, 4}, {4, 7}}, wantFit: 4},
		{name: "known fit, halved again", k: 7, fit: 4, limit: 2, releaseOK: true,
			wantCalls: [][2]int{{0, 4}, {0, 2}, {2, 4}, {4, 6}, {6, 7}}, wantFit: 2, released: 1},
		{name: "halved still too large", k: 7, limit: 3, releaseOK: true, wantCalls: [][2]int{{0, 7}, {0, 4}},
			wantFit: 4, released: 1, wantErr: "halved to 4 sources"},
		{name: "one source", k: 1, limit: 0, releaseOK: true, wantCalls: [][2]int{{0, 1}}, wantErr: "CUDA_ERROR_OUT_OF_MEMORY"},
		{name: "other error", k: 7, limit: 7, other: errOther, releaseOK: true, wantCalls: [][2]int{{0, 7}}, wantErr: "launch failed"},
		{name: "release fails", k: 7, limit: 4, wantCalls: [][2]int{{0, 7}}, released: 1, wantErr: "release failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls [][2]int
			fit := tc.fit
			released := 0
			err := runChunks(tc.k, &fit, func() error {
				released++
				if !tc.releaseOK {
					return errors.New("release failed")
				}
				return nil
			}, func(lo, hi int) error {
				calls = append(calls, [2]int{lo, hi})
				if tc.other != nil {
					return tc.other
				}
				if hi-lo > tc.limit {
					return errOOM
				}
				return nil
			})
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", calls, tc.wantCalls)
			}
			if fit != tc.wantFit && tc.releaseOK {
				t.Errorf("fit %d, want %d", fit, tc.wantFit)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if released != tc.released {
				t.Errorf("released %d times, want %d", released, tc.released)
			}
		})
	}
}

// TestOutOfMemoryHalving makes the device refuse per-source buffers of more
// than 4 sources (a fault injected into alloc) and checks that blocks of 7
// halve and give the results of an unconstrained run, for Run and RunStats;
// then that a device refusing every block buffer gives an
// *OutOfMemoryError with the bytes asked and free.
func TestOutOfMemoryHalving(t *testing.T) {
	e := openEngine(t)
	t.Cleanup(func() { allocFault = nil })
	rng := newSeed(t)
	n := 333
	edges, _ := testgraphs.Random(rng, testgraphs.RandomOptions{N: n, M: 3 * n, Kind: testgraphs.Int, MaxWeight: 20})
	g, err := graph.Build(edges, graph.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sources := []graph.VertexID{0, 5, 9, 100, 200, 300, 332}
	for _, alg := range []graph.Algorithm{graph.Dijkstra, graph.BellmanFord} {
		t.Run(string(alg), func(t *testing.T) {
			allocFault = nil
			r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg, WithPredecessors: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			want := graph.NewBlock(sources, n, r.DistType(), true)
			if err := r.Run(context.Background(), want); err != nil {
				t.Fatal(err)
			}
			wantStats, err := r.RunStats(context.Background(), sources)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.dev.do(r.releaseBlock); err != nil {
				t.Fatal(err)
			}
			// The largest per-source row of the algorithm's buffers.
			l := layoutOf(alg, r.DistType(), true)
			rowBytes := int64(n * max(l.dist, l.aux, l.flags, l.pred))
			allocFault = func(size int64) bool { return size > 4*rowBytes }
			got := graph.NewBlock(sources, n, r.DistType(), true)
			poison(got)
			if err := r.Run(context.Background(), got); err != nil {
				t.Fatalf("Run with room for 4 sources: %v", err)
			}
			if r.buf.fit != 4 {
				t.Errorf("fit = %d after halving a block of 7, want 4", r.buf.fit)
			}
			if !sameBlock(got, want, alg != graph.BellmanFord) {
				t.Error("halved block differs from the whole block")
			}
			gotStats, err := r.RunStats(context.Background(), sources)
			if err != nil {
				t.Fatalf("RunStats with room for 4 sources: %v", err)
			}
			if fmt.Sprint(gotStats) != fmt.Sprint(wantStats) {
				t.Error("halved stats differ from the whole block's")
			}
			// Nothing fits now: the whole block and its half both fail.
			r.buf.fit = 0
			if err := e.dev.do(r.releaseBlock); err != nil {
				t.Fatal(err)
			}
			allocFault = func(size int64) bool { return size >= rowBytes }
			err = r.Run(context.Background(), graph.NewBlock(sources, n, r.DistType(), true))
			var oom *OutOfMemoryError
			if !errors.As(err, &oom) {
				t.Fatalf("Run with no room: err = %v, want an *OutOfMemoryError", err)
			}
			if oom.Sources != 4 || oom.Asked != 4*r.BytesPerSource() || oom.Free <= 0 {
				t.Errorf("OutOfMemoryError %+v: want 4 sources, %d bytes asked, some bytes free", oom, 4*r.BytesPerSource())
			}
			for _, part := range []string{"halved to 4 sources", "bytes free", "CUDA_ERROR_OUT_OF_MEMORY"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
			allocFault = nil
		})
	}
}
