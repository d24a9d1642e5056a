package graph

import (
	"context"
	"testing"
)

// sizingRunner is a Runner of fixed bytes per source; async and stats
// make the sizingRunner kinds below.
type sizingRunner struct{ per int64 }

func (r sizingRunner) DistType() DistType                { return DistInt32 }
func (r sizingRunner) BytesPerSource() int64             { return r.per }
func (r sizingRunner) Run(context.Context, *Block) error { return nil }
func (r sizingRunner) Close() error                      { return nil }

type asyncSizingRunner struct{ sizingRunner }

func (r asyncSizingRunner) Start(context.Context, *Block) (Waiter, error) { return nil, nil }

type statsSizingRunner struct {
	asyncSizingRunner
	statsPer, fixed int64
}

func (r statsSizingRunner) RunStats(context.Context, []VertexID) (*Stats, error) { return nil, nil }
func (r statsSizingRunner) StatsBytesPerSource() int64                           { return r.statsPer }
func (r statsSizingRunner) StatsFixedBytes() int64                               { return r.fixed }

// TestSizingOf checks the one rule of block sizes: the blocks in flight
// by the runner's kind, the bytes per source and the fixed bytes of
// stats on the device, and the sources a budget holds.
func TestSizingOf(t *testing.T) {
	plain := sizingRunner{per: 100}
	async := asyncSizingRunner{plain}
	stats := statsSizingRunner{async, 40, 600}
	cases := []struct {
		name   string
		r      Runner
		stats  bool
		budget int64
		want   BlockSizing
		most   int
	}{
		{"plain", plain, false, 1000, BlockSizing{PerSource: 100, InFlight: 2}, 5},
		{"plain stats on the host", plain, true, 1000, BlockSizing{PerSource: 100, InFlight: 2}, 5},
		{"async", async, false, 1000, BlockSizing{PerSource: 100, InFlight: 3}, 3},
		{"stats runner, pairs", stats, false, 1000, BlockSizing{PerSource: 100, InFlight: 3}, 3},
		// 1000 less 600 fixed is under half: half of it, over 40 a source.
		{"stats on the device", stats, true, 1000, BlockSizing{StatsOnDevice: true, PerSource: 40, FixedBytes: 600, InFlight: 1}, 12},
		{"a budget below one source", plain, false, 10, BlockSizing{PerSource: 100, InFlight: 2}, 1},
		{"no budget", plain, false, 0, BlockSizing{PerSource: 100, InFlight: 2}, 0},
	}
	for _, c := range cases {
		got := SizingOf(c.r, c.stats)
		if got != c.want {
			t.Errorf("%s: SizingOf = %+v, want %+v", c.name, got, c.want)
		}
		if most := got.MaxSources(got.Usable(c.budget)); most != c.most {
			t.Errorf("%s: %d sources in a budget of %d, want %d", c.name, most, c.budget, c.most)
		}
	}
	if got := (BlockSizing{InFlight: 2}).MaxSources(1 << 20); got != 0 {
		t.Errorf("sources that cost nothing: %d, want 0 (unbounded)", got)
	}
}
