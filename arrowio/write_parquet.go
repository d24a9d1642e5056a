package arrowio

// The Parquet result writer. Records are gathered into row groups of up to
// a fixed number of rows; each group's column chunks are then encoded and
// compressed side by side, one goroutine a column, into the group's
// buffers, which the group's close copies into the file in column order.
// Encoding, zstd above all, is what a Parquet result costs (one core
// reached about 11 million pairs rows a second), so a result of c flat
// columns is written up to c times as fast on c cores. The file is what
// pqarrow's FileWriter writes (the same Parquet schema and ARROW:schema
// metadata, the same pages); a schema with a nested, dictionary or other
// column whose levels pqarrow's path builder computes goes through that
// FileWriter as a whole.

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetZstdLevel is the zstd level of Parquet results: 1, Arrow C++'s
// (and so pyarrow's and Spark's native readers') default, about twice
// the speed of arrow-go's default level 3 for files about 10 % larger.
const parquetZstdLevel = 1

// parquetProperties are the writer's properties of a Parquet result:
// codec, row groups of at most rows rows, no dictionary pages.
func parquetProperties(codec compress.Compression, rows int64, mem memory.Allocator) (*parquet.WriterProperties, pqarrow.ArrowWriterProperties) {
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(rows),
		parquet.WithDictionaryDefault(false),
	}
	if codec == compress.Codecs.Zstd {
		opts = append(opts, parquet.WithCompressionLevel(parquetZstdLevel))
	}
	return parquet.NewWriterProperties(opts...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem))
}

// newSerialParquetWriter writes schema's records to sink through
// pqarrow's FileWriter, one column after another.
func newSerialParquetWriter(sink io.Writer, schema *arrow.Schema, codec compress.Compression, rows int64, mem memory.Allocator) (recordWriter, error) {
	props, arrProps := parquetProperties(codec, rows, mem)
	fw, err := pqarrow.NewFileWriter(schema, sink, props, arrProps)
	if err != nil {
		return nil, err
	}
	return serialParquetWriter{fw}, nil
}

// newParquetWriter writes schema's records to sink as Parquet, compressed
// with codec, in row groups of at most rows rows: a flat schema's columns
// side by side, any other through newSerialParquetWriter.
func newParquetWriter(sink io.Writer, schema *arrow.Schema, codec compress.Compression, rows int64, mem memory.Allocator) (recordWriter, error) {
	if !flatParquetSchema(schema) {
		return newSerialParquetWriter(sink, schema, codec, rows, mem)
	}
	props, arrProps := parquetProperties(codec, rows, mem)
	pqSchema, err := pqarrow.ToParquet(schema, props, arrProps)
	if err != nil {
		return nil, err
	}
	meta := make(metadata.KeyValueMetadata, 0, schema.Metadata().Len()+1)
	for i, k := range schema.Metadata().Keys() {
		meta.Append(k, schema.Metadata().Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, mem)))
	w, err := file.NewParquetWriterWithError(sink, pqSchema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &parquetWriter{w: w, schema: schema, arrProps: arrProps, rows: rows}, nil
}

// flatParquetSchema says whether every field of schema is a leaf that
// WriteArrowToColumn takes as it is: a number, a boolean or a string, at
// most one definition level (nullable or not) and no repetition.
func flatParquetSchema(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		switch f.Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
			arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
			arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.STRING, arrow.BINARY:
		default:
			return false
		}
	}
	return schema.NumFields() > 0
}

// serialParquetWriter is pqarrow's FileWriter, buffering small records
// into row groups of up to the writer's maximum row count.
type serialParquetWriter struct{ fw *pqarrow.FileWriter }

func (p serialParquetWriter) Write(rec arrow.RecordBatch) error { return p.fw.WriteBuffered(rec) }
func (p serialParquetWriter) Close() error                      { return p.fw.Close() }

// parquetWriter holds the records of the row group being gathered and
// encodes a group's columns side by side once it is full.
type parquetWriter struct {
	w        *file.Writer
	schema   *arrow.Schema
	arrProps pqarrow.ArrowWriterProperties
	rows     int64
	// The group being gathered: retained records (or slices of them) of
	// held rows in all, fewer than rows.
	held    []arrow.RecordBatch
	heldLen int64
	err     error
	closed  bool
}

func (p *parquetWriter) Write(rec arrow.RecordBatch) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("parquet: write after close")
	}
	if !rec.Schema().Equal(p.schema) {
		return fmt.Errorf("parquet: record schema %s does not match the writer's %s", rec.Schema(), p.schema)
	}
	for off := int64(0); off < rec.NumRows(); {
		n := min(rec.NumRows()-off, p.rows-p.heldLen)
		p.held = append(p.held, rec.NewSlice(off, off+n))
		p.heldLen += n
		off += n
		if p.heldLen == p.rows {
			if err := p.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes the held records as one row group, each column encoded by
// a goroutine of its own, and releases them.
func (p *parquetWriter) flush() error {
	defer p.release()
	if p.heldLen == 0 {
		return nil
	}
	rg, err := p.w.AppendBufferedRowGroupChecked()
	if err != nil {
		return p.fail(err)
	}
	errs := make([]error, p.schema.NumFields())
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = p.writeColumn(rg, i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return p.fail(err)
		}
	}
	if err := rg.Close(); err != nil {
		return p.fail(err)
	}
	return nil
}

// writeColumn encodes column i of the held records into rg's chunk i.
// Each goroutine has a write context of its own: pqarrow's keeps a
// scratch buffer.
func (p *parquetWriter) writeColumn(rg file.BufferedRowGroupWriter, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet: column %q: %v", p.schema.Field(i).Name, r)
		}
	}()
	cw, err := rg.Column(i)
	if err != nil {
		return err
	}
	ctx := pqarrow.NewArrowWriteContext(context.Background(), &p.arrProps)
	nullable := p.schema.Field(i).Nullable
	var def []int16
	for _, rec := range p.held {
		col := rec.Column(i)
		def = def[:0]
		if nullable {
			def = definitionLevels(def, col)
		}
		if err := pqarrow.WriteArrowToColumn(ctx, cw, col, def, nil, nullable); err != nil {
			return fmt.Errorf("parquet: column %q: %w", p.schema.Field(i).Name, err)
		}
	}
	return nil
}

// definitionLevels appends col's definition levels to def: 1 where a
// value is present, 0 where it is null.
func definitionLevels(def []int16, col arrow.Array) []int16 {
	for j := range col.Len() {
		if col.IsValid(j) {
			def = append(def, 1)
		} else {
			def = append(def, 0)
		}
	}
	return def
}

func (p *parquetWriter) release() {
	for _, r := range p.held {
		r.Release()
	}
	p.held, p.heldLen = p.held[:0], 0
}

// fail keeps the first error: a writer that failed writes nothing more.
func (p *parquetWriter) fail(err error) error {
	if p.err == nil {
		p.err = err
	}
	return p.err
}

// Close writes the last row group and the footer.
func (p *parquetWriter) Close() error {
	if p.closed {
		return p.err
	}
	p.closed = true
	if p.err != nil {
		p.release()
		return p.err
	}
	if err := p.flush(); err != nil {
		return err
	}
	return p.fail(p.w.Close())
}
