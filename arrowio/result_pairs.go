package arrowio

// The pairs layout's records of a block: its reachable cells, in row then
// vertex order, in records of at most maxRows rows. Building them (the id
// columns gathered, the cells scanned) takes one core about 45 million
// rows a second (BenchmarkPairs, int64 ids), under what a disk takes, so
// a block of several records builds them on up to maxPairsWorkers
// goroutines, each its own records from their first cells, and emits them
// in order. Records with paths, whose length the paths bound, are built
// one after the other.

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/graph"
)

// maxPairsWorkers bounds the goroutines that build one block's pairs
// records: four outrun a disk's write (about 3.6 GB/s of int64 pairs).
const maxPairsWorkers = 4

// pairsScratch is one builder goroutine's columns of dense ids, and the
// paths: every path's vertices in a row, and where each path starts
// (len rows + 1).
type pairsScratch struct {
	src, tgt, pred, rank  []int32
	pathVerts, pathStarts []int32
}

// pairsChunk is a record's cells: k reachable cells from cell first (row
// first / n, column first % n).
type pairsChunk struct{ first, k int }

// buildPairs emits the reachable cells of blk in records of at most
// b.maxRows rows.
func buildPairs[D graph.Number](b *ResultBuilder, blk *graph.Block, emit func(arrow.RecordBatch) error) error {
	dist := graph.DistOf[D](blk)
	inf := graph.Infinity[D]()
	if b.shape.Paths {
		return buildPairsSerial(b, blk, dist, inf, emit)
	}
	chunks := pairsChunks(dist, inf, blk.Width(), b.maxRows)
	workers := min(runtime.GOMAXPROCS(0), maxPairsWorkers, len(chunks))
	if workers <= 1 {
		for _, c := range chunks {
			rec, _, err := pairsOf(b, blk, dist, inf, &b.scratch, c.first, c.k)
			if err != nil {
				return err
			}
			err = emit(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		return nil
	}
	return buildPairsParallel(b, blk, dist, inf, chunks, workers, emit)
}

// pairsChunks cuts the reachable cells of dist (rows of n) into records
// of maxRows: each row's count (a loop without branches to mispredict),
// then a scan of the rows a record starts in.
func pairsChunks[D graph.Number](dist []D, inf D, n, maxRows int) []pairsChunk {
	var chunks []pairsChunk
	total, start := 0, 0 // reachable cells before this row; rank of the next record's first
	for r := 0; r*n < len(dist); r++ {
		row := dist[r*n : (r+1)*n]
		c := 0
		for _, d := range row {
			if d != inf {
				c++
			}
		}
		for start < total+c {
			rank := start - total
			for v, d := range row {
				if d != inf {
					if rank == 0 {
						chunks = append(chunks, pairsChunk{first: r*n + v})
						break
					}
					rank--
				}
			}
			start += maxRows
		}
		total += c
	}
	for i := range chunks {
		chunks[i].k = min(maxRows, total-i*maxRows)
	}
	return chunks
}

// buildPairsParallel builds chunks' records on workers goroutines, at most
// workers + 1 of them built and not yet emitted, and emits them in order;
// after an error, what was built and not emitted is released.
func buildPairsParallel[D graph.Number](b *ResultBuilder, blk *graph.Block, dist []D, inf D, chunks []pairsChunk, workers int,
	emit func(arrow.RecordBatch) error) error {
	type built struct {
		rec arrow.RecordBatch
		err error
	}
	out := make([]chan built, len(chunks))
	for i := range out {
		out[i] = make(chan built, 1)
	}
	// A slot is taken before a chunk's index, so that the chunk the
	// emitter waits for always holds one.
	slots := make(chan struct{}, workers+1)
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc pairsScratch
			for {
				select {
				case slots <- struct{}{}:
				case <-quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					<-slots
					return
				}
				rec, _, err := pairsOf(b, blk, dist, inf, &sc, chunks[i].first, chunks[i].k)
				out[i] <- built{rec, err}
			}
		}()
	}
	var err error
	for i := range chunks {
		r := <-out[i]
		<-slots
		if err = r.err; err == nil {
			err = emit(r.rec)
			r.rec.Release()
		}
		if err != nil {
			break
		}
	}
	close(quit)
	wg.Wait()
	for _, ch := range out {
		select {
		case r := <-ch:
			if r.rec != nil {
				r.rec.Release()
			}
		default:
		}
	}
	return err
}

// buildPairsSerial builds the records one after the other, each from
// where the last ended: a record with paths may end early.
func buildPairsSerial[D graph.Number](b *ResultBuilder, blk *graph.Block, dist []D, inf D, emit func(arrow.RecordBatch) error) error {
	total := 0
	for _, d := range dist {
		if d != inf {
			total++
		}
	}
	for pos, emitted := 0, 0; emitted < total; {
		rec, end, err := pairsOf(b, blk, dist, inf, &b.scratch, pos, min(b.maxRows, total-emitted))
		if err != nil {
			return err
		}
		emitted += int(rec.NumRows())
		pos = end
		err = emit(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// pairsOf builds the record of the next k reachable cells of blk from cell
// pos on (fewer where its paths fill it), in sc, and returns it with the
// cell after its last.
func pairsOf[D graph.Number](b *ResultBuilder, blk *graph.Block, dist []D, inf D, sc *pairsScratch, pos, k int) (arrow.RecordBatch, int, error) {
	n := blk.Width()
	sc.src = growInt32(sc.src, k)
	sc.tgt = growInt32(sc.tgt, k)
	if b.withPred {
		sc.pred = growInt32(sc.pred, k)
	}
	if b.shape.Rank {
		sc.rank = growInt32(sc.rank, k)
	}
	if b.shape.Paths {
		sc.pathVerts, sc.pathStarts = sc.pathVerts[:0], append(sc.pathStarts[:0], 0)
	}
	distBuf := memory.NewResizableBuffer(b.mem)
	distBuf.Resize(k * blk.Type.Size())
	out := arrow.GetData[D](distBuf.Bytes())[:k]
	// Scan row by row from pos until k cells are found.
	j := 0
	for j < k {
		r, v := pos/n, pos%n
		src := blk.Sources[r]
		row := dist[r*n : (r+1)*n]
		for ; v < n && j < k; v++ {
			if d := row[v]; d != inf {
				out[j] = d
				sc.src[j] = src
				sc.tgt[j] = blk.Target(r, v)
				if b.shape.Rank {
					sc.rank[j] = int32(v + 1)
				}
				if b.shape.Paths {
					if err := appendPath(blk, sc, r, sc.tgt[j]); err != nil {
						distBuf.Release()
						return nil, 0, err
					}
				}
				if b.withPred {
					sc.pred[j] = blk.Pred[r*n+v]
				}
				j++
				if b.shape.Paths && len(sc.pathVerts) >= b.maxPathVerts {
					k = j // the record is full of paths
				}
			}
		}
		pos = r*n + v
	}
	return b.pairsRecord(sc, k, distBuf), pos, nil
}

// appendPath appends the path from Sources[r] to target, walked back along
// row r of blk.PathPred, to sc's paths.
func appendPath(blk *graph.Block, sc *pairsScratch, r int, target int32) error {
	n := blk.NumVertices
	if len(blk.PathPred) != len(blk.Sources)*n {
		return fmt.Errorf("arrowio: a result with paths needs a block with %d full predecessor rows, got %d entries", len(blk.Sources), len(blk.PathPred))
	}
	pred := blk.PathPred[r*n : (r+1)*n]
	src := blk.Sources[r]
	start := len(sc.pathVerts)
	for v, steps := target, 0; ; steps++ {
		if steps > n {
			return fmt.Errorf("arrowio: the predecessors of source %d loop before reaching it from %d", src, target)
		}
		sc.pathVerts = append(sc.pathVerts, v)
		if v == src {
			break
		}
		if v = pred[v]; v < 0 {
			return fmt.Errorf("arrowio: vertex %d has no predecessor on its path from source %d", target, src)
		}
	}
	path := sc.pathVerts[start:]
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	sc.pathStarts = append(sc.pathStarts, int32(len(sc.pathVerts)))
	return nil
}

// pathColumn is the list<id> column of the k paths in sc.
func (b *ResultBuilder) pathColumn(sc *pairsScratch, k int) arrow.Array {
	values := b.ids.gather(sc.pathVerts, b.mem)
	defer values.Release()
	offsets := memory.NewResizableBuffer(b.mem)
	offsets.Resize((k + 1) * 4)
	copy(arrow.GetData[int32](offsets.Bytes()), sc.pathStarts[:k+1])
	data := array.NewData(arrow.ListOf(values.DataType()), k, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{values.Data()}, 0, 0)
	offsets.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// pairsRecord assembles a pairs record of k rows from sc and the filled
// distance buffer, whose reference it takes over.
func (b *ResultBuilder) pairsRecord(sc *pairsScratch, k int, distBuf *memory.Buffer) arrow.RecordBatch {
	cols := make([]arrow.Array, 0, 4)
	cols = append(cols, b.ids.gather(sc.src[:k], b.mem), b.ids.gather(sc.tgt[:k], b.mem))
	dd := array.NewData(DistArrowType(b.distType), k, []*memory.Buffer{nil, distBuf}, nil, 0, 0)
	distBuf.Release()
	cols = append(cols, array.MakeFromData(dd))
	dd.Release()
	if b.shape.Rank {
		cols = append(cols, newFixed(arrow.PrimitiveTypes.Int32, sc.rank[:k], b.mem))
	}
	if b.withPred {
		cols = append(cols, b.ids.gather(sc.pred[:k], b.mem))
	}
	if b.shape.Paths {
		cols = append(cols, b.pathColumn(sc, k))
	}
	rec := array.NewRecordBatch(b.schema, cols, int64(k))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
