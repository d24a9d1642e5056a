package arrowio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The output formats, as WriteOptions.Format spells them.
const (
	outArrow   = "arrow"   // Arrow IPC file
	outArrows  = "arrows"  // Arrow IPC stream
	outParquet = "parquet" // Parquet
	outCSV     = "csv"     // comma-separated text
	outTSV     = "tsv"     // tab-separated text (edge tables only)
	outDIMACS  = "gr"      // DIMACS shortest-path graph (edge tables only)
)

// The compressions, as WriteOptions.Compression spells them.
const (
	CompressionNone = "none"
	CompressionZstd = "zstd"
	CompressionLZ4  = "lz4"
)

// parquetGroupValues bounds the values of one Parquet row group (per
// column); a matrix row counts n values. Parquet pages are written without
// dictionary encoding: on pairs results it made files larger under zstd
// (ids and distances in runs compress better plain) and writing slower.
const parquetGroupValues = 1 << 20

// WriteOptions configure CreateResult and WriteEdges. Zero value: format from
// the path's extension, IPC uncompressed, Parquet zstd, default allocator,
// "-" to os.Stdout.
type WriteOptions struct {
	// Format is "arrow" (IPC file; also "feather", "ipc"), "arrows" (IPC
	// stream), "parquet" (also "pq") or "csv"; WriteEdges also takes "tsv"
	// and "gr". "" takes it from the path's extension: .arrow, .feather,
	// .ipc, .arrows, .parquet, .pq, .csv (.tsv, .tab, .gr for edges). The
	// path "-" writes to Stdout, as "arrows" unless Format says otherwise.
	Format string
	// Compression is "none", "zstd" or "lz4" (LZ4_RAW in Parquet). ""
	// means none for IPC, so that pyarrow.memory_map reads an IPC file
	// without a copy, and zstd for Parquet. Text formats take only none.
	Compression string
	// Allocator holds the writers' buffers; nil means
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Stdout receives the output of the path "-"; nil means os.Stdout.
	Stdout io.Writer
	// Vertices gives the header of a matrix result written as CSV (one
	// column per vertex, named by its external id); other writers ignore it.
	Vertices *Vertices
	// MatrixRows, when above 0, is the number of rows a matrix result will
	// have. An uncompressed IPC file of the matrix layout whose output lives
	// in memory (a memfd passed as /dev/fd/N, a file on tmpfs) is then
	// written as one record batch in place, through a mapping of the file,
	// on every core (write_mapped.go); the records written must add up to
	// that many rows. Other outputs, and 0, keep the streaming writer.
	// pyarrow reads such a file as it is; arrow-go's readers refuse a
	// batch body over 256 MiB unless given ipc.WithBodySizeLimit(0).
	MatrixRows int
	// MatrixWrites says how the one-batch matrix's values reach the file:
	// MatrixWritesMapped ("" too) copies them into the mapping on every
	// core; MatrixWritesPrefill does too, and populates the pages of the
	// mapping ahead of the rows on half the cores meanwhile (for engines
	// that leave the cores idle: the GPU); MatrixWritesPositional writes
	// them with pwrite(2), one stream that the kernel copies without
	// mapping a page. Which is fastest depends on the machine's cost of a
	// page fault and its cores.
	MatrixWrites string
	// ResultPeer, when set, is a connected Unix socket to the process
	// that will read the result (the Python package, which started this
	// one and passed the socket in). A matrix that would be written as
	// one batch into a file in memory (MatrixRows) is then written into
	// that process's own memory instead, with process_vm_writev(2): a
	// memfd's pages cost more to populate than anonymous memory (on an
	// H100 host, 9.7 GB from 16 threads in 0.5-0.7 s against 4.2-5.9 s
	// into a memfd; R-MAT 16's distance_matrix 2.8 s against 3.8 s end to
	// end). On the socket, lines of text: this process sends "size N
	// VOFF VLEN" (the file's bytes, and where its values lie in it); the
	// peer answers "addr PID BASE [VBASE]" (hex addresses) for N bytes of
	// its memory, zeroed, at BASE in process PID, and, where it holds an
	// array of VLEN bytes for the values (Python's out=), VBASE: the
	// values go there, the rest of the file to BASE+offset, the values'
	// bytes there untouched. The rows go as they come; where the file
	// turns out longer than N, "grow M VOFF VLEN" asks for more, answered
	// as size is (the bytes so far kept, at the new BASE). At the end,
	// "done SIZE": the first SIZE bytes are the Arrow IPC file. Where the
	// peer cannot be written (no permission to, a refusal, no answer),
	// "fallback REASON" says so and the file gets the result as without
	// a peer. A run that fails closes the socket without "done".
	ResultPeer *os.File
}

// The ways WriteOptions.MatrixWrites names.
const (
	MatrixWritesMapped     = "mapped"
	MatrixWritesPrefill    = "prefill"
	MatrixWritesPositional = "pwrite"
)

func (o *WriteOptions) allocator() memory.Allocator {
	if o.Allocator == nil {
		return memory.DefaultAllocator
	}
	return o.Allocator
}

// outputFormat resolves the format of path under o; edges allows the text
// formats of edge tables (tsv, gr).
func (o *WriteOptions) outputFormat(path string, edges bool) (string, error) {
	format := strings.ToLower(o.Format)
	switch format {
	case "feather", "ipc":
		format = outArrow
	case "pq":
		format = outParquet
	case "dimacs":
		format = outDIMACS
	case "":
		var err error
		if format, err = outputFormatFromPath(path); err != nil {
			return "", err
		}
	}
	switch format {
	case outArrow, outArrows, outParquet, outCSV:
		return format, nil
	case outTSV, outDIMACS:
		if edges {
			return format, nil
		}
		return "", fmt.Errorf("arrowio: %s: results are written as arrow, arrows, parquet or csv, not %s", path, format)
	}
	return "", fmt.Errorf("arrowio: %s: unknown output format %q (want arrow, arrows, parquet or csv)", path, o.Format)
}

// outputFormatFromPath maps an output file's extension to its format; "-"
// is an IPC stream. Compressed text (.gz, .zst) is refused: results are
// large, and Parquet compresses them far better.
func outputFormatFromPath(path string) (string, error) {
	if path == "-" {
		return outArrows, nil
	}
	base := strings.ToLower(filepath.Base(path))
	for _, suffix := range []string{".gz", ".zst", ".bz2", ".xz"} {
		if strings.HasSuffix(base, suffix) {
			return "", fmt.Errorf("arrowio: %s: compressed text output is not supported; write .parquet (zstd) or an uncompressed .csv", path)
		}
	}
	switch filepath.Ext(base) {
	case ".arrow", ".feather", ".ipc":
		return outArrow, nil
	case ".arrows":
		return outArrows, nil
	case ".parquet", ".pq":
		return outParquet, nil
	case ".csv":
		return outCSV, nil
	case ".tsv", ".tab":
		return outTSV, nil
	case ".gr":
		return outDIMACS, nil
	}
	return "", fmt.Errorf("arrowio: %s: unknown output extension %q (want .arrow, .feather, .arrows, .parquet or .csv, or name the format)", path, filepath.Ext(base))
}

// compression validates o.Compression for format.
func (o *WriteOptions) compression(path, format string) (string, error) {
	c := strings.ToLower(o.Compression)
	switch c {
	case "", CompressionNone, CompressionZstd, CompressionLZ4:
	default:
		return "", fmt.Errorf("arrowio: %s: unknown compression %q (want none, zstd or lz4)", path, o.Compression)
	}
	switch format {
	case outParquet:
		if c == "" {
			c = CompressionZstd
		}
	case outArrow, outArrows:
		if c == "" {
			c = CompressionNone
		}
	default:
		if c != "" && c != CompressionNone {
			return "", fmt.Errorf("arrowio: %s: %s output cannot be compressed (asked for %s); use parquet for compact output", path, format, c)
		}
		c = CompressionNone
	}
	return c, nil
}

// recordWriter is the format-specific part of a ResultWriter.
type recordWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

// ResultWriter writes record batches to a file atomically: into a temporary
// file beside it (".NAME.tmp-PID-HOST-*"), renamed to the path by Close.
// Until Close returns, a file already at the path is untouched. Abort removes
// the temporary file. A symbolic link is followed and its target replaced; a
// device or FIFO is written straight, without a temporary file (see
// outpath.go). Close after Abort and Abort after Close do nothing; Close
// after a failed Write still tries to finish the file, so call Abort when a
// Write fails. A ResultWriter is not safe for concurrent use.
type ResultWriter struct {
	path    string // the final path as given, or "-"
	target  string // the file replaced (path, its links followed) or written into
	direct  bool   // target is a device or FIFO, written without a temporary file
	format  string
	file    *os.File // the temporary file (or the device); nil for "-"
	buf     *bufio.Writer
	sink    *countingWriter
	rw      recordWriter
	done    bool
	written int64
}

// CreateResult opens a writer of records of schema to path. Records passed
// to Write must have schema's fields (metadata may differ); schema's
// metadata is what the file carries.
//
// It fails on an unknown format or compression, on a schema the format cannot
// hold (CSV needs primitive columns, or the source and fixed_size_list
// distance of the matrix layout with WriteOptions.Vertices), and when the
// temporary file cannot be created.
func CreateResult(path string, schema *arrow.Schema, opt WriteOptions) (*ResultWriter, error) {
	format, err := opt.outputFormat(path, false)
	if err != nil {
		return nil, err
	}
	if path == "-" && opt.Format == "" {
		format = outArrows
	}
	comp, err := opt.compression(path, format)
	if err != nil {
		return nil, err
	}
	if format == outCSV {
		if err := checkCSVSchema(path, schema, opt.Vertices); err != nil {
			return nil, err
		}
	}
	w, err := openSink(path, opt)
	if err != nil {
		return nil, err
	}
	w.format = format
	switch opt.MatrixWrites {
	case "", MatrixWritesMapped, MatrixWritesPrefill, MatrixWritesPositional:
	default:
		w.discard()
		return nil, fmt.Errorf("arrowio: %s: matrix writes %q: want %s, %s or %s", path, opt.MatrixWrites,
			MatrixWritesMapped, MatrixWritesPrefill, MatrixWritesPositional)
	}
	if opt.MatrixRows > 0 && format == outArrow && comp == CompressionNone && isMatrixSchema(schema) {
		if w.mapMatrix(schema, opt); w.rw != nil {
			return w, nil
		}
	}
	if w.rw, err = newRecordWriter(w.sink, format, comp, schema, opt); err != nil {
		w.discard()
		return nil, fmt.Errorf("arrowio: %s: %w", path, err)
	}
	return w, nil
}

// mapMatrix sets w up to write a matrix as one record batch into a mapping
// of its file, where the file lives in memory and can be opened for
// reading and writing, and can be sized and mapped; elsewhere it leaves
// w.rw nil, for the streaming writer.
func (w *ResultWriter) mapMatrix(schema *arrow.Schema, opt WriteOptions) {
	if w.file == nil || !inMemoryFile(w.file) {
		return
	}
	f := w.file
	if w.direct {
		// The descriptor's file (a memfd) was opened write-only; a shared
		// mapping needs it readable too.
		rw, err := os.OpenFile(w.target, os.O_RDWR, 0)
		if err != nil {
			return
		}
		f = rw
	}
	var m *mappedMatrix
	if opt.ResultPeer != nil {
		// Where the peer cannot be written, the file is mapped as without one.
		m, _ = newPeerMatrix(f, opt.ResultPeer, schema, opt.MatrixRows, opt.allocator())
	}
	if m == nil {
		var err error
		if m, err = newMappedMatrix(f, schema, opt.MatrixRows, opt.allocator()); err != nil {
			// No room to size or map the file (a tmpfs quota, an address
			// space limit): the streaming writer needs neither.
			_ = f.Truncate(0)
			if f != w.file {
				f.Close()
			}
			return
		}
		if opt.MatrixWrites == MatrixWritesPrefill {
			m.startPrefill(max(1, runtime.GOMAXPROCS(0)/2))
		}
	}
	m.positional = opt.MatrixWrites == MatrixWritesPositional
	if f != w.file {
		w.file.Close()
		w.file = f
	}
	w.rw = m
}

// openSink creates the temporary file of path (or takes Stdout for "-").
func openSink(path string, opt WriteOptions) (*ResultWriter, error) {
	w := &ResultWriter{path: path}
	var out io.Writer
	if path == "-" {
		out = opt.Stdout
		if out == nil {
			out = os.Stdout
		}
	} else {
		target, err := resolveOutput(path)
		if err != nil {
			return nil, err
		}
		w.target, w.direct = target.path, target.direct
		if target.direct {
			f, err := os.OpenFile(target.path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, fmt.Errorf("arrowio: %s: %w", path, err)
			}
			w.file, out = f, f
		} else {
			dir, base := filepath.Split(target.path)
			if dir == "" {
				dir = "."
			}
			removeStaleTemps(dir)
			f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
			if err != nil {
				return nil, fmt.Errorf("arrowio: %s: %w", path, err)
			}
			w.file = f
			out = &writeBehind{f: f}
		}
	}
	w.buf = bufio.NewWriterSize(out, 1<<20)
	w.sink = &countingWriter{w: w.buf}
	return w, nil
}

func newRecordWriter(sink io.Writer, format, comp string, schema *arrow.Schema, opt WriteOptions) (recordWriter, error) {
	mem := opt.allocator()
	switch format {
	case outArrow, outArrows:
		opts := []ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(mem)}
		switch comp {
		case CompressionZstd:
			opts = append(opts, ipc.WithZstd())
		case CompressionLZ4:
			opts = append(opts, ipc.WithLZ4())
		}
		if format == outArrows {
			return ipc.NewWriter(sink, opts...), nil
		}
		return ipc.NewFileWriter(sink, opts...)
	case outParquet:
		codec := compress.Codecs.Zstd
		switch comp {
		case CompressionNone:
			codec = compress.Codecs.Uncompressed
		case CompressionLZ4:
			codec = compress.Codecs.Lz4Raw
		}
		rows := int64(parquetGroupValues)
		for _, f := range schema.Fields() {
			if l, ok := f.Type.(*arrow.FixedSizeListType); ok && l.Len() > 0 {
				rows = max(1, min(rows, parquetGroupValues/int64(l.Len())))
			}
		}
		return newParquetWriter(sink, schema, codec, rows, mem)
	case outCSV, outTSV:
		comma := ','
		if format == outTSV {
			comma = '\t'
		}
		if isMatrixSchema(schema) {
			return newMatrixCSVWriter(sink, schema, opt.Vertices, comma), nil
		}
		return &tableCSVWriter{w: sink, schema: schema, comma: byte(comma)}, nil
	}
	return nil, fmt.Errorf("no writer for format %s", format)
}

// Write appends rec to the output. A failed Write leaves the output unusable:
// call Abort.
func (w *ResultWriter) Write(rec arrow.RecordBatch) error {
	if w.done {
		return fmt.Errorf("arrowio: %s: write after close", w.path)
	}
	if err := w.rw.Write(rec); err != nil {
		return fmt.Errorf("arrowio: %s: %w", w.path, err)
	}
	return nil
}

// Close finishes the output (footer, flush, fsync) and renames the temporary
// file to the path. When any step fails, the temporary file is removed, the
// path is left as it was, and the error is returned. Close after Close or
// Abort returns nil.
func (w *ResultWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	err := w.rw.Close()
	if ferr := w.buf.Flush(); err == nil {
		err = ferr
	}
	w.written = w.sink.n
	if m, ok := w.rw.(*mappedMatrix); ok {
		w.written = m.bytesWritten()
	}
	if w.file == nil {
		if err != nil {
			return fmt.Errorf("arrowio: %s: %w", w.path, err)
		}
		return nil
	}
	if w.direct {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("arrowio: %s: %w", w.path, err)
		}
		return nil
	}
	tmp := w.file.Name()
	if err == nil {
		err = w.file.Sync()
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		mode := os.FileMode(0o644)
		if fi, serr := os.Stat(w.target); serr == nil && fi.Mode().IsRegular() {
			mode = fi.Mode().Perm()
		}
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, w.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("arrowio: %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the output: the temporary file is removed and the path is
// left as it was. On "-", a device or a FIFO nothing more is written (a
// stream cut short lacks its end marker, so readers see it as truncated);
// what was written there stays. Abort after Close or
// Abort returns nil.
func (w *ResultWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.discard()
}

// discard releases the format writer into io.Discard and removes the
// temporary file.
func (w *ResultWriter) discard() error {
	w.written = w.sink.n
	w.sink.w = io.Discard
	if m, ok := w.rw.(*mappedMatrix); ok {
		m.abort() // empties the file: a direct output keeps no half matrix
	} else if w.rw != nil {
		_ = w.rw.Close() // frees its buffers; its output goes nowhere
	}
	if w.file == nil {
		return nil
	}
	tmp := w.file.Name()
	_ = w.file.Close()
	if w.direct {
		return nil
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("arrowio: %s: removing %s: %w", w.path, tmp, err)
	}
	return nil
}

// InPeer reports whether the result goes into the memory of the
// WriteOptions.ResultPeer process rather than into the file.
func (w *ResultWriter) InPeer() bool {
	m, ok := w.rw.(*mappedMatrix)
	return ok && m.peer != nil
}

// BytesWritten is the number of bytes written so far (buffered output
// included); after Close, the size of the file.
func (w *ResultWriter) BytesWritten() int64 {
	if w.done {
		return w.written
	}
	if m, ok := w.rw.(*mappedMatrix); ok {
		return m.valuesOff + int64(m.row*m.width*m.elem)
	}
	return w.sink.n
}

// Format is the resolved output format ("arrow", "arrows", "parquet" or
// "csv").
func (w *ResultWriter) Format() string { return w.format }

// countingWriter counts what passes through to w. It is deliberately not an
// io.Closer, so that no format writer closes the file under it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
