package arrowio

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetColumns reads the columns of a Parquet file side by side, one
// goroutine per column for each batch, and joins them into record batches
// as one reader of all of them would. Decompressing the pages (zstd, in
// the files pathctl gen and pyarrow write) is most of a read, and each
// column's pages decompress independently: on R-MAT 16 (1M rows, three
// columns) the read takes about the time of its largest column.
//
// pqarrow's own parallel mode (ArrowReadProperties.Parallel) does the same
// in goroutines where a panic of the decoder on a corrupt page would end
// the process; here the panic is caught and raised again in the caller's
// goroutine, where recoverCorrupt turns it into an error naming the file.
type parquetColumns struct {
	schema  *arrow.Schema
	readers []array.RecordReader // one column each
	cur     arrow.RecordBatch
	err     error
}

// newParquetColumns opens one record reader per field of fields (indices
// into fr's schema, in the order their columns come in the batches).
// Release it when done.
func newParquetColumns(ctx context.Context, fr *pqarrow.FileReader, fields []int) (*parquetColumns, error) {
	p := &parquetColumns{}
	var schemaFields []arrow.Field
	for _, idx := range fields {
		rr, err := fr.GetRecordReader(ctx, appendLeaves(nil, &fr.Manifest.Fields[idx]), nil)
		if err != nil {
			p.Release()
			return nil, err
		}
		p.readers = append(p.readers, rr)
		if rr.Schema().NumFields() != 1 {
			p.Release()
			return nil, fmt.Errorf("column %d reads as %d columns", idx, rr.Schema().NumFields())
		}
		schemaFields = append(schemaFields, rr.Schema().Field(0))
	}
	p.schema = arrow.NewSchema(schemaFields, nil)
	return p, nil
}

// readsColumnsInParallel says whether a Parquet read of fields columns
// is worth a goroutine per column: more than one column, and more than one
// CPU to run them on.
func readsColumnsInParallel(fields int) bool {
	return fields > 1 && runtime.GOMAXPROCS(0) > 1
}

func (p *parquetColumns) Schema() *arrow.Schema          { return p.schema }
func (p *parquetColumns) RecordBatch() arrow.RecordBatch { return p.cur }
func (p *parquetColumns) Err() error                     { return p.err }
func (p *parquetColumns) Retain()                        {}

// Record is RecordBatch under its deprecated name, which the interface keeps.
func (p *parquetColumns) Record() arrow.RecordBatch { return p.cur }

// Release releases the batch in hand and the column readers.
func (p *parquetColumns) Release() {
	p.releaseCurrent()
	for _, rr := range p.readers {
		rr.Release()
	}
	p.readers = nil
}

func (p *parquetColumns) releaseCurrent() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
}

// Next reads the next batch of every column, each in a goroutine, and
// joins them. A column reader's error ends the read (Err); a panic in one
// is raised again here, after the others have stopped.
func (p *parquetColumns) Next() bool {
	p.releaseCurrent()
	if p.err != nil || len(p.readers) == 0 {
		return false
	}
	n := len(p.readers)
	cols := make([]arrow.Array, n)
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for i, rr := range p.readers {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			if !rr.Next() {
				errs[i] = rr.Err()
				return
			}
			cols[i] = rr.RecordBatch().Column(0)
			cols[i].Retain()
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, v := range panics {
		if v != nil {
			panic(v)
		}
	}
	for i, err := range errs {
		if err != nil {
			p.err = fmt.Errorf("column %q: %w", p.schema.Field(i).Name, err)
			return false
		}
	}
	ended := 0
	for _, c := range cols {
		if c == nil {
			ended++
		}
	}
	switch {
	case ended == n:
		return false
	case ended > 0:
		p.err = fmt.Errorf("the columns end at different rows")
		return false
	}
	p.cur, p.err = joinColumns(p.schema, cols)
	return p.err == nil
}

// joinColumns makes one record batch of schema from a batch of each of
// its columns, which must hold as many values.
func joinColumns(schema *arrow.Schema, cols []arrow.Array) (arrow.RecordBatch, error) {
	rows := cols[0].Len()
	for i, c := range cols {
		if c.Len() != rows {
			return nil, fmt.Errorf("column %q has %d values in a batch where %q has %d", schema.Field(i).Name, c.Len(), schema.Field(0).Name, rows)
		}
	}
	return array.NewRecordBatch(schema, cols, int64(rows)), nil
}
