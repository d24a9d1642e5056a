package gpu

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pathctl/pathctl/graph"
)

// BenchmarkOverlap times overlapBlocks blocks of overlapSources sources per
// operation, run back to back without overlap (each block's Start is
// waited for before the next starts) and with it (block i+1 starts before
// block i is waited for, as the pipeline runs them), for auto's batched
// kernel (compute-bound) and bfs (copy-bound) on R-MAT scale 16. It reports
// per block the kernels' device time, the copy's device time
// (device to pinned memory, on the copy stream), the host time moving the
// pinned stage into the block, and the wall time; without overlap the wall
// time is about their sum, with it about the larger of the kernels and the
// two copies.
func BenchmarkOverlap(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	defer e.Close()
	bg := benchGraphs[0]
	g, err := graph.Build(bg.edges(), graph.BuildOptions{Undirected: bg.undirected})
	if err != nil {
		b.Fatal(err)
	}
	n := g.NumVertices
	k := min(overlapSources, n)
	for _, alg := range []graph.Algorithm{Batched, graph.BFS} {
		for _, overlap := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/n=%d/k=%d/blocks=%d/%s/overlap=%v", bg.name, n, k, overlapBlocks, alg, overlap), func(b *testing.B) {
				r, err := e.Prepare(context.Background(), g, graph.Request{Algorithm: alg})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				// Three host blocks: one being filled, one in flight, one
				// that the caller would be writing.
				var blocks [3]*graph.Block
				for i := range blocks {
					src := make([]graph.VertexID, k)
					for j := range src {
						src[j] = graph.VertexID((i*k + j) % n)
					}
					blocks[i] = graph.NewBlock(src, n, r.DistType(), false)
				}
				var t overlapTimes
				if _, err := runOverlapped(r, blocks[:], 2, overlap); err != nil { // warm-up
					b.Fatal(err)
				}
				for b.Loop() {
					got, err := runOverlapped(r, blocks[:], overlapBlocks, overlap)
					if err != nil {
						b.Fatal(err)
					}
					t.add(got)
				}
				per := float64(b.N * overlapBlocks)
				ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / per }
				b.ReportMetric(ms(t.kernel), "kernel-ms/block")
				b.ReportMetric(ms(t.copy), "copy-ms/block")
				b.ReportMetric(ms(t.move), "move-ms/block")
				b.ReportMetric(ms(t.wall), "wall-ms/block")
				b.ReportMetric(float64(k)*float64(n)*per/t.wall.Seconds(), "pairs/s")
				b.Logf("%s overlap=%v: per block kernel %.2f ms, copy %.2f ms, move %.2f ms, wall %.2f ms (%d blocks of %d sources)",
					alg, overlap, ms(t.kernel), ms(t.copy), ms(t.move), ms(t.wall), b.N*overlapBlocks, k)
			})
		}
	}
}

const (
	overlapSources = 2048
	overlapBlocks  = 8
)

// overlapTimes sums the times of the blocks of runOverlapped.
type overlapTimes struct{ kernel, copy, move, wall time.Duration }

func (t *overlapTimes) add(o overlapTimes) {
	t.kernel += o.kernel
	t.copy += o.copy
	t.move += o.move
	t.wall += o.wall
}

// runOverlapped runs count blocks through r, cycling through blocks: with
// overlap, block i+1 starts before block i is waited for; without, every
// block is waited for before the next starts.
func runOverlapped(r *Runner, blocks []*graph.Block, count int, overlap bool) (overlapTimes, error) {
	var t overlapTimes
	var prev *Pending
	finish := func(p *Pending) error {
		if err := p.Wait(); err != nil {
			return err
		}
		t.kernel += p.KernelTime()
		t.copy += p.CopyTime()
		t.move += p.MoveTime()
		return nil
	}
	start := time.Now()
	for i := range count {
		p, err := r.Start(context.Background(), blocks[i%len(blocks)])
		if err != nil {
			if prev != nil {
				_ = prev.Wait()
			}
			return t, err
		}
		if !overlap {
			if err := finish(p); err != nil {
				return t, err
			}
			continue
		}
		if prev != nil {
			if err := finish(prev); err != nil {
				_ = p.Wait()
				return t, err
			}
		}
		prev = p
	}
	if prev != nil {
		if err := finish(prev); err != nil {
			return t, err
		}
	}
	t.wall = time.Since(start)
	return t, nil
}
