package arrowio

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pathctl/pathctl/graph"
)

// nearestPart is the fewest vertices one goroutine takes when the rows of
// the nearest layout are picked out: below it a goroutine costs more than
// the loop it would share.
const nearestPart = 1 << 16

// buildNearest emits the nearest layout of res: one record per window of
// b.maxRows vertices (so at most that many rows each), holding the window's
// reached vertices in vertex order. Within a window the rows are picked out
// on every core: each part of the window counts its reached vertices, the
// counts give each part its first row, then every part writes its rows.
func buildNearest[D graph.Number](b *ResultBuilder, res *graph.Nearest, emit func(arrow.RecordBatch) error) error {
	dist := res.Dist.([]D)
	n := len(res.Source)
	size := min(n, b.maxRows)
	vertex := make([]int32, size)
	source := make([]int32, size)
	ds := make([]D, size)
	for lo := 0; lo < n; lo += b.maxRows {
		hi := min(lo+b.maxRows, n)
		parts := max(1, min(runtime.GOMAXPROCS(0), (hi-lo)/nearestPart))
		per := (hi - lo + parts - 1) / parts
		first := make([]int, parts+1)
		forParts(parts, func(p int) {
			count := 0
			for _, s := range res.Source[min(lo+p*per, hi):min(lo+(p+1)*per, hi)] {
				if s >= 0 {
					count++
				}
			}
			first[p+1] = count
		})
		for p := range parts {
			first[p+1] += first[p]
		}
		forParts(parts, func(p int) {
			row := first[p]
			for v := min(lo+p*per, hi); v < min(lo+(p+1)*per, hi); v++ {
				if s := res.Source[v]; s >= 0 {
					vertex[row], source[row], ds[row] = int32(v), s, dist[v]
					row++
				}
			}
		})
		rows := first[parts]
		if rows == 0 {
			continue
		}
		vcol := b.ids.gather(vertex[:rows], b.mem)
		scol := b.ids.gather(source[:rows], b.mem)
		dcol := newFixed(DistArrowType(b.distType), ds[:rows], b.mem)
		rec := array.NewRecordBatch(b.schema, []arrow.Array{vcol, dcol, scol}, int64(rows))
		vcol.Release()
		dcol.Release()
		scol.Release()
		err := emit(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// forParts runs fn(p) for every p < parts, each on its own goroutine (on
// the caller's alone when parts is 1), and returns when all are done.
func forParts(parts int, fn func(p int)) {
	if parts == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p)
		}()
	}
	wg.Wait()
}
