package arrowio

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetGroups reads the row groups of a Parquet file side by side, and
// within each its columns, each column chunk in a goroutine of its own,
// and hands out their record batches in the file's order. parquetColumns
// reads one batch of every column at a time, which keeps at most as many
// cores busy as there are columns (three for an edge table), while the
// files pathctl gen and pyarrow write hold a row group per million rows.
// It holds whole row groups, so it reads only files whose row groups are
// small (parquetGroupMaxBytes), and reads ahead of the one being handed
// out at most parquetAheadBytes of them and at most runtime.GOMAXPROCS(0).
// R-MAT 20 (16 row groups of a million edges) on the 2-core development
// machine: read in 525-557 ms, 615-702 ms a batch of every column at a
// time (docs/benchmarks-history.md, "Parquet row groups read side by side (development
// machine)"). A panic of a decoder (a corrupt page) is caught and raised
// again in the caller's goroutine, as parquetColumns does, where
// recoverCorrupt turns it into an error naming the file.
type parquetGroups struct {
	fr     *pqarrow.FileReader
	leaves [][]int // per column, the leaves to read
	schema *arrow.Schema
	// mu serializes the opening of column readers, which read and cache
	// the file's metadata.
	mu sync.Mutex

	ctx     context.Context
	cancel  context.CancelFunc
	results []chan groupBatches // one per row group, buffered
	ahead   chan struct{}       // a slot per row group read and not yet handed out
	done    sync.WaitGroup      // the dispatcher and the row groups' readers

	next    int // the row group Next takes from
	pending []arrow.RecordBatch
	cur     arrow.RecordBatch
	err     error
}

// groupBatches is one row group read: its batches, or why not.
type groupBatches struct {
	batches []arrow.RecordBatch
	err     error
	panic   any
}

// parquetGroupMaxBytes is the largest row group, uncompressed, that
// parquetGroups holds whole: pathctl gen's of a million edges take 24 MB;
// older pyarrow wrote up to 64 million rows in one, which the batch
// reader streams instead.
const parquetGroupMaxBytes = 64 << 20

// parquetAheadBytes bounds the row groups, uncompressed, that
// parquetGroups reads ahead.
const parquetAheadBytes = 256 << 20

// readsRowGroupsInParallel says whether a Parquet read of row groups of
// these uncompressed sizes is worth parquetGroups: more than one, none
// above parquetGroupMaxBytes, and more than one CPU. It returns how many
// to read ahead.
func readsRowGroupsInParallel(sizes []int64) (int, bool) {
	if len(sizes) < 2 || runtime.GOMAXPROCS(0) < 2 {
		return 0, false
	}
	largest := max(slices.Max(sizes), 1)
	if largest > parquetGroupMaxBytes {
		return 0, false
	}
	return int(max(1, min(int64(runtime.GOMAXPROCS(0)), parquetAheadBytes/largest))), true
}

// newParquetGroups starts reading the groups row groups of fr's fields
// (indices into its schema, in the order their columns come in the
// batches), ahead of them at a time. Release it when done.
func newParquetGroups(ctx context.Context, fr *pqarrow.FileReader, fields []int, groups, ahead int) (*parquetGroups, error) {
	p := &parquetGroups{fr: fr}
	var schemaFields []arrow.Field
	for _, idx := range fields {
		f := &fr.Manifest.Fields[idx]
		schemaFields = append(schemaFields, *f.Field)
		p.leaves = append(p.leaves, appendLeaves(nil, f))
	}
	p.schema = arrow.NewSchema(schemaFields, nil)
	p.ctx, p.cancel = context.WithCancel(ctx)
	p.results = make([]chan groupBatches, groups)
	for g := range p.results {
		p.results[g] = make(chan groupBatches, 1)
	}
	p.ahead = make(chan struct{}, max(ahead, 1))
	p.done.Go(func() {
		for g := range groups {
			select {
			case p.ahead <- struct{}{}:
			case <-p.ctx.Done():
				return
			}
			p.done.Go(func() { p.results[g] <- p.readGroup(g) })
		}
	})
	return p, nil
}

// readGroupFault, when set (by tests), is called before column c of row
// group g is read: an error fails the read there, and a panic stands for
// a decoder's on a corrupt page.
var readGroupFault func(g, c int) error

// readGroup reads row group g, each column in a goroutine, and joins the
// columns' batches.
func (p *parquetGroups) readGroup(g int) (out groupBatches) {
	n := len(p.leaves)
	cols := make([][]arrow.Array, n)
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() {
			defer func() { panics[c] = recover() }()
			if readGroupFault != nil {
				if errs[c] = readGroupFault(g, c); errs[c] != nil {
					return
				}
			}
			p.mu.Lock()
			rr, err := p.fr.GetRecordReader(p.ctx, p.leaves[c], []int{g})
			p.mu.Unlock()
			if err != nil {
				errs[c] = err
				return
			}
			defer rr.Release()
			for rr.Next() {
				a := rr.RecordBatch().Column(0)
				a.Retain()
				cols[c] = append(cols[c], a)
			}
			errs[c] = rr.Err()
		})
	}
	wg.Wait()
	defer func() {
		for _, col := range cols {
			for _, a := range col {
				a.Release()
			}
		}
	}()
	for _, v := range panics {
		if v != nil {
			return groupBatches{panic: v}
		}
	}
	for c, err := range errs {
		if err != nil {
			return groupBatches{err: fmt.Errorf("row group %d, column %q: %w", g, p.schema.Field(c).Name, err)}
		}
	}
	for c, col := range cols {
		if len(col) != len(cols[0]) {
			return groupBatches{err: fmt.Errorf("row group %d: column %q reads in %d batches, %q in %d", g, p.schema.Field(c).Name, len(col), p.schema.Field(0).Name, len(cols[0]))}
		}
	}
	arrays := make([]arrow.Array, n)
	for b := range cols[0] {
		for c := range n {
			arrays[c] = cols[c][b]
		}
		rec, err := joinColumns(p.schema, arrays)
		if err != nil {
			out.release()
			return groupBatches{err: fmt.Errorf("row group %d: %w", g, err)}
		}
		out.batches = append(out.batches, rec)
	}
	return out
}

// release releases the batches of a row group read.
func (b *groupBatches) release() {
	for _, rec := range b.batches {
		rec.Release()
	}
	b.batches = nil
}

func (p *parquetGroups) Schema() *arrow.Schema          { return p.schema }
func (p *parquetGroups) RecordBatch() arrow.RecordBatch { return p.cur }
func (p *parquetGroups) Err() error                     { return p.err }
func (p *parquetGroups) Retain()                        {}

// Record is RecordBatch under its deprecated name, which the interface keeps.
func (p *parquetGroups) Record() arrow.RecordBatch { return p.cur }

// Next hands out the next batch, waiting for its row group where it is
// still being read. A row group's error ends the read (Err); a decoder's
// panic is raised again here, once the other readers have stopped.
func (p *parquetGroups) Next() bool {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	for len(p.pending) == 0 {
		if p.err != nil || p.next == len(p.results) {
			return false
		}
		res := <-p.results[p.next]
		p.next++
		<-p.ahead
		if res.panic != nil {
			p.stop()
			panic(res.panic)
		}
		if res.err != nil {
			p.err = res.err
			p.stop()
			return false
		}
		p.pending = res.batches
	}
	p.cur, p.pending = p.pending[0], p.pending[1:]
	return true
}

// stop cancels the reads still to come and waits for those under way,
// releasing what they read.
func (p *parquetGroups) stop() {
	p.cancel() // (the dispatcher waiting for a slot stops too)
	p.done.Wait()
	for _, ch := range p.results[p.next:] {
		select {
		case res := <-ch:
			res.release()
		default:
		}
	}
	p.next = len(p.results)
}

// Release releases the batch in hand and every batch read ahead.
func (p *parquetGroups) Release() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	for _, rec := range p.pending {
		rec.Release()
	}
	p.pending = nil
	if p.next < len(p.results) {
		p.stop()
	}
}
