package arrowio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pathctl/pathctl/graph"
)

// The input formats, as ReadOptions.Format and FormatFromPath spell them.
const (
	FormatParquet     = "parquet"
	FormatArrowFile   = "arrow"  // Arrow IPC file (also .feather)
	FormatArrowStream = "arrows" // Arrow IPC stream
	FormatCSV         = "csv"
	FormatTSV         = "tsv"
	FormatDIMACS      = "gr" // DIMACS shortest-path challenge graph
)

// ReadOptions configure the edge readers. Zero value: format from the file
// extension, columns "src", "dst" and "weight" (weight optional), default
// allocator.
type ReadOptions struct {
	// Format is "parquet", "arrow" (IPC file; also .feather), "arrows" (IPC
	// stream), "csv", "tsv" or "gr" (DIMACS); "" takes it from the file
	// extension (see FormatFromPath).
	Format string
	// SrcCol, DstCol and WeightCol name the columns; "" means "src", "dst"
	// and "weight". A weight column named here must exist; the default one
	// is optional.
	SrcCol, DstCol, WeightCol string
	// Unweighted ignores any weight column: every edge weighs 1 (hop counts).
	// Without it, and with no WeightCol, a table that has no column
	// "weight" but exactly one numeric column besides the ids takes that
	// one as the weight, and EdgeTable.WeightNote says so.
	Unweighted bool
	// Allocator holds the Arrow buffers while reading; nil means
	// memory.DefaultAllocator. Nothing stays allocated after a read.
	Allocator memory.Allocator
	// MaxVertices bounds the vertex counts a file declares without holding
	// them: the N of a DIMACS problem line, whose vertices 1..N (isolated
	// ones included) are allocated from the header alone. 0 means
	// DefaultMaxVertices; ids beyond int32 are refused whatever it says.
	// Counts a file holds (distinct ids of its rows) are not bounded here:
	// their memory is the file's own size.
	MaxVertices int
	// Context, when set, ends a read early: readers check it between
	// record batches (Parquet row groups, IPC batches) and every
	// readerCheckRows rows of text, and return an error wrapping its
	// cause (context.Canceled on Ctrl-C). nil never ends a read.
	Context context.Context
	// MaxDecodedBytes bounds what the buffers of an Arrow IPC input
	// decode to (compressed buffers at their declared uncompressed
	// length), checked before anything is allocated for them; 0 means the
	// machine's physical memory (or defaultMaxDecodedBytes where unknown).
	MaxDecodedBytes int64

	// vertexTable reads a vertex table (ReadVertices): SrcCol names its id
	// column, or "" chooses it (see vertexColumn).
	vertexTable bool
}

// defaultMaxDecodedBytes bounds decoded IPC input where the machine's
// memory is unknown.
const defaultMaxDecodedBytes = 64 << 30

func (o *ReadOptions) maxDecodedBytes() int64 {
	if o.MaxDecodedBytes > 0 {
		return o.MaxDecodedBytes
	}
	if m := PhysicalMemory(); m > 0 {
		return m
	}
	return defaultMaxDecodedBytes
}

// DefaultMaxVertices is ReadOptions.MaxVertices when 0: 2^26 vertices, 0.5
// GiB of ids, more than the largest DIMACS road graph (USA, 23.9M).
const DefaultMaxVertices = 1 << 26

// readerCheckRows is how many text rows a reader reads between two looks
// at ReadOptions.Context: a few milliseconds of parsing.
const readerCheckRows = 1 << 16

func (o *ReadOptions) maxVertices() int {
	if o.MaxVertices <= 0 {
		return DefaultMaxVertices
	}
	return o.MaxVertices
}

// interrupted returns the context's error, wrapped with name, once it is
// done; nil while the read may go on.
func (o *ReadOptions) interrupted(name string) error {
	if o.Context == nil {
		return nil
	}
	if err := o.Context.Err(); err != nil {
		return fmt.Errorf("arrowio: %s: reading stopped: %w", name, context.Cause(o.Context))
	}
	return nil
}

// defaultWeightCol is the weight column read when none is named.
const defaultWeightCol = "weight"

func (o *ReadOptions) srcCol() string { return orDefault(o.SrcCol, "src") }
func (o *ReadOptions) dstCol() string { return orDefault(o.DstCol, "dst") }
func (o *ReadOptions) weightCol() string {
	return orDefault(o.WeightCol, defaultWeightCol)
}

func (o *ReadOptions) allocator() memory.Allocator {
	if o.Allocator == nil {
		return memory.DefaultAllocator
	}
	return o.Allocator
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// EdgeTable is an edge list over dense vertex ids with the dictionary that
// maps them back to the input's external ids.
type EdgeTable struct {
	// Edges holds dense ids and one weight slice (IntWeights for any integer
	// weight type, Float32Weights for float32 and float16, Float64Weights for
	// float64) or none for an unweighted table.
	Edges graph.Edges
	// Vertices maps dense id i to the i-th smallest external id.
	Vertices *Vertices
	// WeightType is the input weight column's type, nil when unweighted.
	WeightType arrow.DataType
	// Name is the file name (or "-", or the stream name) used in messages.
	Name string
	// WeightGuessed is the column taken as the weight although
	// ReadOptions did not name it (see ReadOptions.Unweighted); "" when
	// the weight column was named, is called "weight", or there is none.
	WeightGuessed string
	// WeightNote, when not "", is one sentence for the user on how the
	// weight was chosen without being named: the column taken, or the
	// numeric columns left unused while distances count edges. Every
	// surface shows it (the CLI on stderr as "pathctl: note: ...").
	WeightNote string
}

// FormatFromPath returns the format of a file from its extension:
// .parquet/.pq -> "parquet", .arrow/.feather/.ipc -> "arrow", .arrows ->
// "arrows", .csv -> "csv", .tsv/.tab -> "tsv", .gr -> "gr". A trailing .gz or
// .zst is stripped first (compressed text formats). "-" (standard input or
// output) is an Arrow IPC stream, "arrows".
func FormatFromPath(path string) (string, error) {
	if path == "-" {
		return FormatArrowStream, nil
	}
	base := strings.ToLower(filepath.Base(path))
	compressed := false
	for _, suffix := range []string{".gz", ".zst"} {
		if strings.HasSuffix(base, suffix) {
			base = strings.TrimSuffix(base, suffix)
			compressed = true
			break
		}
	}
	var format string
	switch filepath.Ext(base) {
	case ".parquet", ".pq":
		format = FormatParquet
	case ".arrow", ".feather", ".ipc":
		format = FormatArrowFile
	case ".arrows":
		format = FormatArrowStream
	case ".csv":
		format = FormatCSV
	case ".tsv", ".tab":
		format = FormatTSV
	case ".gr":
		format = FormatDIMACS
	default:
		return "", fmt.Errorf("arrowio: %s: unknown file extension %q (want .parquet, .arrow, .feather, .arrows, .csv, .tsv or .gr, or name the format)", path, filepath.Ext(base))
	}
	if compressed && !isTextFormat(format) {
		return "", fmt.Errorf("arrowio: %s: only csv, tsv and gr files may be .gz or .zst compressed", path)
	}
	return format, nil
}

// ParseFormat checks a format name; it accepts the names FormatFromPath
// returns and the aliases "feather", "ipc", "pq", "dimacs".
func ParseFormat(s string) (string, error) {
	switch strings.ToLower(s) {
	case FormatParquet, "pq":
		return FormatParquet, nil
	case FormatArrowFile, "feather", "ipc":
		return FormatArrowFile, nil
	case FormatArrowStream:
		return FormatArrowStream, nil
	case FormatCSV:
		return FormatCSV, nil
	case FormatTSV:
		return FormatTSV, nil
	case FormatDIMACS, "dimacs":
		return FormatDIMACS, nil
	}
	return "", fmt.Errorf("arrowio: unknown format %q (want parquet, arrow, arrows, csv, tsv or gr)", s)
}

func isTextFormat(f string) bool { return f == FormatCSV || f == FormatTSV || f == FormatDIMACS }

func (o *ReadOptions) format(name string) (string, error) {
	if o.Format != "" {
		f, err := ParseFormat(o.Format)
		if err != nil {
			return "", fmt.Errorf("arrowio: %s: %s", name, strings.TrimPrefix(err.Error(), "arrowio: "))
		}
		return f, nil
	}
	return FormatFromPath(name)
}

// ReadEdges reads an edge table from a file; "-" reads standard input, as an
// Arrow IPC stream unless opt.Format names another format. It takes the
// format from the extension when opt.Format is "". Parquet and Arrow IPC
// files are read in place, record batch by batch; text formats are
// decompressed on the fly when gzip or zstd compressed (recognised by their
// magic numbers).
//
// Ids are any Arrow integer type or strings (utf8, large_utf8, string_view,
// or a dictionary of them); src and dst must be of one kind, and integer
// types of different widths widen to one. Weights are any integer type
// (read as int64; uint64 above MaxInt64 fails) or float16, float32 (read as
// float32) or float64. CSV and TSV need a header row; their ids are int64
// when every id is an integer (spaces around it aside) and strings, kept
// verbatim, otherwise, their weights int64
// when every weight is an integer and float64 otherwise. DIMACS graphs have
// the vertices 1..N, isolated ones included, and int64 weights.
//
// Dense ids follow the ascending order of the external ids (numeric, uint64
// as unsigned, strings byte-wise). Building the dictionary takes O(m) when
// integer ids span a range within a few times the edge count, O(m) radix
// sorting otherwise, and one hash lookup per string id.
//
// Options that name one column twice (src and dst, or the weight and an
// id) are refused before the file is opened, with an error matching
// ErrSameColumn.
//
// It fails on a missing or mistyped column, a null id or weight, a NaN or
// infinite weight, more distinct vertices than int32 ids hold, or a
// truncated or corrupt file. Errors are one line prefixed "arrowio: " and
// name the file, the column and the row (0-based over the whole table for
// columnar formats, "line N" counting the header as line 1 for text).
func ReadEdges(path string, opt ReadOptions) (*EdgeTable, error) {
	if err := opt.checkColumns(path); err != nil {
		return nil, err
	}
	if path == "-" {
		return ReadEdgesFrom(os.Stdin, "-", opt)
	}
	format, err := opt.format(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("arrowio: %w", err)
	}
	defer f.Close()
	switch format {
	case FormatParquet, FormatArrowFile:
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("arrowio: %w", err)
		}
		return readSeekable(f, st.Size(), format, path, opt)
	}
	return readStream(f, format, path, opt)
}

// ReadEdgesFrom reads an edge table from r; name is used in messages and, when
// opt.Format is "", for the format. Parquet and Arrow IPC files need random
// access: r is buffered in memory for them unless it is an io.ReaderAt and
// io.Seeker.
func ReadEdgesFrom(r io.Reader, name string, opt ReadOptions) (*EdgeTable, error) {
	if err := opt.checkColumns(name); err != nil {
		return nil, err
	}
	format, err := opt.format(name)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatParquet, FormatArrowFile:
		if rs, ok := r.(readAtSeeker); ok {
			size, err := rs.Seek(0, io.SeekEnd)
			if err == nil {
				return readSeekable(rs, size, format, name, opt)
			}
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("arrowio: %s: %w", name, err)
		}
		return readSeekable(bytes.NewReader(data), int64(len(data)), format, name, opt)
	}
	return readStream(r, format, name, opt)
}

type readAtSeeker interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// recoverCorrupt turns a panic inside a decoder (arrow-go's IPC and Parquet
// readers assume well-formed metadata in places) into an error naming the
// file.
func recoverCorrupt(name string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("arrowio: %s: corrupt or truncated file: %v", name, r)
	}
}

func readSeekable(r readAtSeeker, size int64, format, name string, opt ReadOptions) (t *EdgeTable, err error) {
	defer recoverCorrupt(name, &err)
	mem := opt.allocator()
	switch format {
	case FormatArrowFile:
		// pyarrow users often name IPC streams .arrow: read what the bytes are.
		magic := make([]byte, len(arrowFileMagic))
		if n, _ := r.ReadAt(magic, 0); n == len(magic) && string(magic) != arrowFileMagic {
			return readStream(io.NewSectionReader(r, 0, size), FormatArrowStream, name, opt)
		}
		if err := checkFileFooter(r, size); err != nil {
			return nil, fmt.Errorf("arrowio: %s: not a readable Arrow IPC file: %w", name, err)
		}
		rows, err := checkFileBlocks(r, size, opt.maxDecodedBytes())
		if err != nil {
			return nil, ipcSizeError(name, "file", err)
		}
		fr, err := ipc.NewFileReader(r, ipc.WithAllocator(mem), ipc.WithBodySizeLimit(0))
		if err != nil {
			return nil, fmt.Errorf("arrowio: %s: not a readable Arrow IPC file: %w", name, err)
		}
		defer fr.Close()
		recs := &ipcFileRecords{fr: fr}
		defer recs.Release()
		// Reserve for the rows the batches declare, unless that is more
		// than the file could plausibly hold (corrupt metadata).
		return edgesFromRecords(recs, name, opt, min(rows, 8*size))
	case FormatParquet:
		return readParquet(r, size, name, opt)
	}
	return nil, fmt.Errorf("arrowio: %s: format %q is not a random-access format", name, format)
}

func readStream(r io.Reader, format, name string, opt ReadOptions) (t *EdgeTable, err error) {
	defer recoverCorrupt(name, &err)
	if isTextFormat(format) {
		dr, closeFn, err := decompress(r, name)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		if format == FormatDIMACS {
			return readDIMACS(dr, name, opt)
		}
		return readDelimited(dr, name, format, opt)
	}
	if format != FormatArrowStream {
		return nil, fmt.Errorf("arrowio: %s: format %q needs a file", name, format)
	}
	size := inputSize(r) // before the buffered reader reads ahead
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(len(arrowFileMagic)); string(magic) == arrowFileMagic {
		// An IPC file where a stream was expected (standard input, .arrows):
		// it needs random access, so buffer it.
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fmt.Errorf("arrowio: %s: %w", name, err)
		}
		return readSeekable(bytes.NewReader(data), int64(len(data)), FormatArrowFile, name, opt)
	}
	// The checked message reader bounds each message before arrow-go
	// allocates for it (see read_ipccheck.go).
	msgs := newCheckedMessageReader(br, ipcBodySizeLimit, opt.maxDecodedBytes(), size)
	defer msgs.Release()
	sr, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(opt.allocator()))
	if err != nil {
		return nil, ipcSizeError(name, "stream", err)
	}
	defer sr.Release()
	return edgesFromRecords(sr, name, opt, streamRowsHint(sr.Schema(), size))
}

// streamRowsHint is the most rows an IPC stream of size bytes (-1:
// unknown) with schema can hold, where every column has a fixed width: a
// row takes at least their bytes. Reserving for it keeps the edge columns
// from growing as they are appended to (R-MAT 20 from a stream file, 2-core
// development machine: read in 1.6-1.7 s before, 0.40 s with it). 0 where
// not known.
func streamRowsHint(schema *arrow.Schema, size int64) int64 {
	if size <= 0 {
		return 0
	}
	row := 0
	for _, f := range schema.Fields() {
		fw, ok := f.Type.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth() < 8 {
			return 0
		}
		row += fw.BitWidth() / 8
	}
	if row == 0 {
		return 0
	}
	return size / int64(row)
}

// ipcSizeError names the input of a failed IPC check.
func ipcSizeError(name, kind string, err error) error {
	if errors.Is(err, ErrDecodedTooLarge) {
		return fmt.Errorf("arrowio: %s: %w; refused before decoding", name, err)
	}
	return fmt.Errorf("arrowio: %s: not a readable Arrow IPC %s: %w", name, kind, err)
}

// inputSize is how many bytes r holds from where it stands, -1 when that is
// not known (a pipe, standard input, a decompressor).
func inputSize(r io.Reader) int64 {
	switch v := r.(type) {
	case *bytes.Reader:
		return int64(v.Len())
	case *bytes.Buffer:
		return int64(v.Len())
	case *io.SectionReader:
		if pos, err := v.Seek(0, io.SeekCurrent); err == nil {
			return v.Size() - pos
		}
	case *os.File:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return -1
		}
		if pos, err := v.Seek(0, io.SeekCurrent); err == nil {
			return st.Size() - pos
		}
	}
	return -1
}

// arrowFileMagic opens (and closes) every Arrow IPC file.
const arrowFileMagic = "ARROW1"

// ipcBodySizeLimit bounds one record batch body of an IPC stream, which is
// allocated before it is read: arrow-go's default of 256 MiB is too small
// for edge tables written as one batch (pyarrow's default for a table), so
// it is raised to 16 GiB. IPC files need no bound: their blocks are checked
// against the file size. The fuzz targets lower it.
var ipcBodySizeLimit int64 = 16 << 30

// decompress sniffs gzip and zstd magic numbers, whatever the file name says.
func decompress(r io.Reader, name string) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("arrowio: %s: gzip: %w", name, err)
		}
		return zr, func() { zr.Close() }, nil
	case len(magic) == 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("arrowio: %s: zstd: %w", name, err)
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// parquetBatchRows bounds the rows of one record batch read from Parquet.
const parquetBatchRows = 1 << 20

func readParquet(r readAtSeeker, size int64, name string, opt ReadOptions) (*EdgeTable, error) {
	mem := opt.allocator()
	// Buffered streams read a column chunk through a window instead of
	// allocating the chunk's (claimed) size up front.
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	pf, err := file.NewParquetReader(r, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("arrowio: %s: not a readable Parquet file: %w", name, err)
	}
	defer pf.Close()
	if kv := pf.MetaData().KeyValueMetadata(); kv != nil {
		if v := kv.FindValue("ARROW:schema"); v != nil {
			if err := checkParquetArrowSchema(*v, name); err != nil {
				return nil, err
			}
		}
	}
	// Columns are read side by side by parquetColumns, not by pqarrow's
	// parallel mode, which decodes in goroutines of its own where a panic
	// on a corrupt page could not be recovered into an error.
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, mem)
	if err != nil {
		return nil, fmt.Errorf("arrowio: %s: %w", name, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("arrowio: %s: %w", name, err)
	}
	// Resolve the columns on the Arrow schema first, so that a missing or
	// mistyped column is reported before any data is read, then read only
	// the leaves of those columns.
	cols, err := findColumns(schema, name, opt)
	if err != nil {
		return nil, err
	}
	fields := cols.fieldIndices()
	var leaves []int
	for _, idx := range fields {
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[idx])
	}
	if pf.NumRows() == 0 {
		return EdgesFromRecords(emptyRecords(schema, cols), name, opt)
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	sizes := make([]int64, pf.NumRowGroups())
	for i := range sizes {
		sizes[i] = pf.MetaData().RowGroup(i).TotalByteSize()
	}
	var rr array.RecordReader
	ahead, groups := readsRowGroupsInParallel(sizes)
	switch {
	case groups:
		rr, err = newParquetGroups(ctx, fr, fields, len(sizes), ahead)
	case readsColumnsInParallel(len(fields)):
		rr, err = newParquetColumns(ctx, fr, fields)
	default:
		rr, err = fr.GetRecordReader(ctx, leaves, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("arrowio: %s: %w", name, err)
	}
	defer rr.Release()
	// Reserve for the rows the footer announces, unless that is more than
	// the file could plausibly hold (a corrupt footer).
	return edgesFromRecords(rr, name, opt, min(pf.NumRows(), 64*size))
}

func appendLeaves(dst []int, f *pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(dst, f.ColIndex)
	}
	for i := range f.Children {
		dst = appendLeaves(dst, &f.Children[i])
	}
	return dst
}

// emptyRecords is a reader with the schema of the selected columns and no
// batches.
func emptyRecords(schema *arrow.Schema, cols columnSet) array.RecordReader {
	var fields []arrow.Field
	for _, idx := range cols.fieldIndices() {
		fields = append(fields, schema.Field(idx))
	}
	rr, _ := array.NewRecordReader(arrow.NewSchema(fields, nil), nil)
	return rr
}

// ipcFileRecords walks the record batches of an IPC file as a RecordReader.
type ipcFileRecords struct {
	fr   *ipc.FileReader
	next int
	cur  arrow.RecordBatch
	err  error
}

func (r *ipcFileRecords) Retain()               {}
func (r *ipcFileRecords) Release()              { r.releaseCurrent() }
func (r *ipcFileRecords) Schema() *arrow.Schema { return r.fr.Schema() }
func (r *ipcFileRecords) Err() error            { return r.err }

func (r *ipcFileRecords) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch under its deprecated name, which the interface keeps.
func (r *ipcFileRecords) Record() arrow.RecordBatch { return r.cur }

func (r *ipcFileRecords) releaseCurrent() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *ipcFileRecords) Next() bool {
	r.releaseCurrent()
	if r.err != nil || r.next >= r.fr.NumRecords() {
		return false
	}
	rec, err := r.fr.RecordBatchAt(r.next) // ours to release
	if err != nil {
		r.err = fmt.Errorf("record batch %d: %w", r.next, err)
		return false
	}
	r.cur = rec
	r.next++
	return true
}
