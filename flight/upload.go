package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/arrowio"
)

// uploadDecodedFactor and uploadRowBytes size the memory an upload holds
// at its peak: the messages received, the edge columns gathered from them
// and joined, the vertex dictionary, the CSR built from them, and the
// garbage the collector has not yet returned (at GOGC=100 the heap grows to
// twice what is live before a collection). Each upload reserves
// uploadDecodedFactor times its decoded bytes plus uploadRowBytes per row
// from the server's budget (--max-memory) as its messages arrive.
//
// Measured as the peak RSS of `pathctl serve` for one upload, per row
// (10 to 20 million rows, 1 million vertices, on 2 cores): int64 ids and
// weights (24 bytes a row decoded) 77 bytes; int32 ids and weights (12) 71;
// int32 ids without weights (8) 52; short string ids, int64 weights (30)
// 68. Per row the cost barely follows the decoded width, since the reader
// keeps ids as 64-bit keys whatever their type; the reservation is 104,
// 80, 72 and 116 bytes a row for these.
const (
	uploadDecodedFactor = 2
	uploadRowBytes      = 56
)

// maxEmptyMessages bounds the messages in a row that carry no data (no
// record batch, a batch of no rows, metadata only) that an upload may
// send; past it the upload is refused.
const maxEmptyMessages = 10000

// limitedPutStream checks each message of an upload before arrow-go
// decodes it (buffers inside the body, declared uncompressed lengths), and
// fails the upload once the bytes it decodes to pass the limit: buffers
// after decompression, and dictionary columns at their expanded size (see
// teeRecords). It reserves uploadMemoryFactor times the decoded bytes from
// the server's budget as they come, cancels an upload that sends nothing
// for the idle timeout, and remembers the first app metadata sent.
//
// Messages without an IPC header (pyarrow's write_metadata, or empty
// ones) are not passed on: arrow-go's reader would decode their empty
// header as a message and fail with "index out of range". Their app
// metadata and descriptor are kept.
type limitedPutStream struct {
	flight.FlightService_DoPutServer
	limit int64
	// decoded counts what the upload decodes to; wire what was received.
	decoded, wire int64
	// refused is why the upload was cut off, nil while it goes on.
	refused   error
	firstMeta []byte
	// options, once taken from firstMeta (a path descriptor), are what
	// later app metadata must repeat if it sets any: it is refused rather
	// than ignored, so that options sent late do not go unheeded.
	options *UploadOptions

	ctx context.Context
	// idle cancels the upload when no message comes for that long; 0
	// waits without a bound.
	idle time.Duration
	// budget is the server's memory budget; reserved what this upload
	// holds of it, released when the upload ends.
	budget   *memBudget
	reserved int64
	// rows counts the rows of the batches read.
	rows int64
	// empties counts the messages in a row that carried no data.
	empties int
	// desc is the descriptor of a metadata-only message, handed on with
	// the next message passed on.
	desc *flight.FlightDescriptor

	got   chan recvResult
	timer *time.Timer
}

type recvResult struct {
	d   *flight.FlightData
	err error
}

func (s *limitedPutStream) Recv() (*flight.FlightData, error) {
	for {
		if s.refused != nil {
			return nil, s.refused
		}
		d, err := s.recvIdle()
		if err != nil {
			return d, err
		}
		if err := s.check(d); err != nil {
			return nil, err
		}
		if len(d.DataHeader) == 0 {
			if d.FlightDescriptor != nil {
				s.desc = d.FlightDescriptor
			}
			continue
		}
		if d.FlightDescriptor == nil {
			d.FlightDescriptor = s.desc
		}
		s.desc = nil
		return d, nil
	}
}

// check accounts one received message: its bytes on the wire and decoded,
// the memory it reserves, its app metadata, and whether it carries data.
func (s *limitedPutStream) check(d *flight.FlightData) error {
	s.wire += dataSize(d)
	if s.wire > s.limit {
		return s.refuse(status.Errorf(codes.ResourceExhausted,
			"flight: upload is larger than the server's limit of %d bytes (--max-upload-bytes)", s.limit))
	}
	var n int64
	if len(d.DataHeader) > 0 {
		var err error
		n, err = arrowio.IPCMessageBytes(d.DataHeader, d.DataBody, s.limit-s.decoded)
		switch {
		case errors.Is(err, arrowio.ErrDecodedTooLarge):
			return s.refuse(s.overLimit())
		case err != nil:
			return s.refuse(status.Errorf(codes.InvalidArgument, "flight: corrupt upload message: %v", err))
		}
	}
	if len(d.AppMetadata) > 0 {
		switch {
		case s.firstMeta == nil && s.options == nil:
			s.firstMeta = d.AppMetadata
		case s.options != nil && !bytes.Equal(d.AppMetadata, s.firstMeta):
			if o, err := parseUploadOptions(d.AppMetadata); err != nil || o != *s.options {
				return s.refuse(status.Error(codes.InvalidArgument,
					"flight: app metadata after the first record batch differs from the upload's options; options are read from the first message with app metadata, up to the first batch: send them there"))
			}
		}
	}
	if n == 0 {
		if s.empties++; s.empties > maxEmptyMessages {
			return s.refuse(status.Errorf(codes.InvalidArgument,
				"flight: the upload sent more than %d messages in a row that carry no data", maxEmptyMessages))
		}
		return nil
	}
	s.empties = 0
	return s.account(n)
}

// recvIdle receives the next message, or fails the upload when none comes
// within the idle timeout. The receive runs in a goroutine of its own so
// that the wait can end; once the upload is refused nothing receives
// again, and the pending receive returns when DoPut ends the stream.
func (s *limitedPutStream) recvIdle() (*flight.FlightData, error) {
	if s.idle <= 0 {
		return s.FlightService_DoPutServer.Recv()
	}
	if s.got == nil {
		s.got = make(chan recvResult, 1)
		s.timer = time.NewTimer(s.idle)
	} else {
		s.timer.Reset(s.idle)
	}
	go func() {
		d, err := s.FlightService_DoPutServer.Recv()
		s.got <- recvResult{d, err}
	}()
	select {
	case r := <-s.got:
		s.timer.Stop()
		return r.d, r.err
	case <-s.timer.C:
		return nil, s.refuse(status.Errorf(codes.DeadlineExceeded,
			"flight: the upload sent nothing for %v (--idle-timeout); cancelled", s.idle))
	}
}

func (s *limitedPutStream) refuse(err error) error {
	s.refused = err
	return err
}

func (s *limitedPutStream) overLimit() error {
	return status.Errorf(codes.ResourceExhausted,
		"flight: upload decodes to more than the server's limit of %d bytes (--max-upload-bytes; buffers count decompressed, dictionary columns expanded)", s.limit)
}

// teeRecords passes the batches of an upload on to the edge reader and
// writes each to the table file on the way. first is a batch read ahead
// (to find options in its app metadata), nil when there was none.
//
// An IPC file holds one dictionary per field, while a stream may replace it
// batch by batch (pyarrow does, for a table of chunks): dictionary columns
// are written decoded, under plain, the schema with their value types.
type teeRecords struct {
	refs     atomic.Int64
	src      array.RecordReader
	first    arrow.RecordBatch
	started  bool
	out      *ipc.FileWriter
	plain    *arrow.Schema // nil when the upload has no dictionary column
	ctx      context.Context
	cur      arrow.RecordBatch
	err      error
	writeErr error
	// limits counts the bytes of expanded dictionary columns against the
	// upload's limit before they are expanded; nil counts nothing.
	limits *limitedPutStream
}

func (t *teeRecords) Retain()                        { t.refs.Add(1) }
func (t *teeRecords) Release()                       { t.refs.Add(-1) }
func (t *teeRecords) Schema() *arrow.Schema          { return t.src.Schema() }
func (t *teeRecords) RecordBatch() arrow.RecordBatch { return t.cur }
func (t *teeRecords) Record() arrow.RecordBatch      { return t.cur }
func (t *teeRecords) Err() error                     { return t.err }

func (t *teeRecords) Next() bool {
	if t.err != nil {
		return false
	}
	if !t.started {
		t.started = true
		if t.first != nil {
			return t.write(t.first)
		}
	}
	if t.first != nil {
		t.first.Release()
		t.first = nil
	}
	if !t.src.Next() {
		t.cur = nil
		t.err = t.src.Err()
		return false
	}
	return t.write(t.src.RecordBatch())
}

func (t *teeRecords) write(rec arrow.RecordBatch) bool {
	if t.limits != nil {
		if err := t.limits.accountRows(rec.NumRows()); err != nil {
			t.err = err
			t.cur = nil
			return false
		}
	}
	t.cur = rec
	out := rec
	if t.plain != nil {
		var err error
		if err = t.checkExpansion(rec); err != nil {
			t.err = err
			t.cur = nil
			return false
		}
		if out, err = decodeDictionaries(t.ctx, rec, t.plain); err != nil {
			t.err = fmt.Errorf("flight: decoding dictionary columns: %w", err)
			t.cur = nil
			return false
		}
		defer out.Release()
	}
	if err := t.out.Write(out); err != nil {
		t.writeErr = fmt.Errorf("flight: writing the upload to disk: %w", err)
		t.err = t.writeErr
		t.cur = nil
		return false
	}
	return true
}

// checkExpansion counts what the dictionary columns of rec expand to, and
// refuses, before anything is expanded, a batch over the upload's limit or
// a string column whose expanded values pass the 2 GiB that the int32
// offsets of utf8 and binary address.
func (t *teeRecords) checkExpansion(rec arrow.RecordBatch) error {
	for i, c := range rec.Columns() {
		d, ok := c.(*array.Dictionary)
		if !ok {
			continue
		}
		total, strData, err := expandedBytes(d)
		if err != nil {
			return fmt.Errorf("flight: column %q: %w", rec.ColumnName(i), err)
		}
		if vt := d.Dictionary().DataType().ID(); strData > math.MaxInt32 && (vt == arrow.STRING || vt == arrow.BINARY) {
			err := status.Errorf(codes.ResourceExhausted,
				"flight: dictionary column %q of a batch expands to %d bytes of strings, more than the %d a %s column holds; send it as large_string or in smaller batches",
				rec.ColumnName(i), strData, math.MaxInt32, d.Dictionary().DataType())
			if t.limits != nil {
				t.limits.refuse(err)
			}
			return err
		}
		if t.limits != nil {
			if err := t.limits.account(total); err != nil {
				return err
			}
		}
	}
	return nil
}

// expandedBytes is the size of a dictionary array decoded: validity,
// offsets and values; strData is the string or binary value bytes alone.
func expandedBytes(d *array.Dictionary) (total, strData int64, err error) {
	n := int64(d.Len())
	total = (n + 7) / 8
	dict := d.Dictionary()
	size := dict.Len()
	var valueLen func(int) int64
	switch v := dict.(type) {
	case *array.String:
		valueLen = func(k int) int64 { return int64(v.ValueLen(k)) }
		total += 4 * (n + 1)
	case *array.Binary:
		valueLen = func(k int) int64 { return int64(v.ValueLen(k)) }
		total += 4 * (n + 1)
	case *array.LargeString:
		valueLen = func(k int) int64 { return int64(v.ValueLen(k)) }
		total += 8 * (n + 1)
	case *array.LargeBinary:
		valueLen = func(k int) int64 { return int64(len(v.Value(k))) }
		total += 8 * (n + 1)
	default:
		if fw, ok := dict.DataType().(arrow.FixedWidthDataType); ok {
			return total + n*int64(max(fw.BitWidth()/8, 1)), 0, nil
		}
		return total, 0, nil // other value types are refused by the edge reader
	}
	for i := 0; i < d.Len(); i++ {
		if d.IsNull(i) {
			continue
		}
		k := d.GetValueIndex(i)
		if k < 0 || k >= size {
			return 0, 0, fmt.Errorf("row %d: dictionary index %d outside the dictionary of %d values", i, k, size)
		}
		strData += valueLen(k)
	}
	return total + strData, strData, nil
}

// plainSchema is s with every dictionary field replaced by its value type,
// or nil when s has none.
func plainSchema(s *arrow.Schema) *arrow.Schema {
	fields := s.Fields()
	found := false
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.DictionaryType); ok {
			fields[i].Type = d.ValueType
			found = true
		}
	}
	if !found {
		return nil
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// decodeDictionaries returns rec with its dictionary columns decoded.
func decodeDictionaries(ctx context.Context, rec arrow.RecordBatch, plain *arrow.Schema) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rec.Columns() {
		d, ok := c.(*array.Dictionary)
		if !ok {
			c.Retain()
			cols[i] = c
			continue
		}
		values, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
		if err != nil {
			return nil, err
		}
		cols[i] = values
	}
	return array.NewRecordBatch(plain, cols, rec.NumRows()), nil
}

func (t *teeRecords) close() {
	if t.first != nil {
		t.first.Release()
		t.first = nil
	}
}

// DoPut stores an uploaded edge table as graph NAME. The descriptor is the
// path ["graphs", NAME] with the options as JSON in the app metadata of the
// first message that has any (the schema message or the first batch), or a
// command {"graph": NAME, ...options}. The table is validated as the CLI
// validates a file, stored atomically and kept across restarts; an upload
// that fails or is cut off stores nothing. An upload to an existing name
// replaces the graph. The single PutResult's app metadata is the stored
// graph's metadata (as in ListFlights).
func (s *Server) DoPut(stream flight.FlightService_DoPutServer) (err error) {
	ctx := stream.Context()
	ci := callInfoFrom(ctx)
	// An upload holds a temporary file and memory until it ends: past
	// --max-uploads a new one is refused at once rather than queued, so
	// that it holds nothing, not even the flow-control window of a stream
	// the server does not read.
	if !s.budget.startUpload(s.cfg.MaxUploads) {
		return status.Errorf(codes.ResourceExhausted,
			"flight: the server is receiving %d uploads already, its limit (--max-uploads); retry when one has ended", s.cfg.MaxUploads)
	}
	defer s.budget.endUpload()
	in := &limitedPutStream{FlightService_DoPutServer: stream, limit: s.cfg.MaxUploadBytes,
		ctx: ctx, idle: s.cfg.IdleTimeout, budget: s.budget}
	defer func() { s.budget.release(in.reserved) }()
	rdr, err := flight.NewRecordReader(in, ipc.WithAllocator(s.mem))
	if err != nil {
		return uploadError(ctx, in, nil, fmt.Errorf("flight: reading the upload stream: %w", err))
	}
	defer rdr.Release()
	desc := rdr.LatestFlightDescriptor()
	if desc == nil {
		return status.Error(codes.InvalidArgument, "flight: the upload has no descriptor; use the path [\"graphs\", NAME]")
	}
	var name string
	var opts UploadOptions
	fromCmd := desc.GetType() == flight.DescriptorCMD
	if fromCmd {
		if name, opts, err = parseUploadCommand(desc.GetCmd()); err != nil {
			return invalid(err)
		}
		if err := ValidateName(name); err != nil {
			return invalid(err)
		}
	} else if name, err = graphPath(desc); err != nil {
		return invalid(err)
	}
	ci.setGraph(name)

	tee := &teeRecords{src: rdr, limits: in}
	defer tee.close()
	if !fromCmd {
		// The options may ride on the first batch: read it ahead.
		if rdr.Next() {
			tee.first = rdr.RecordBatch()
			tee.first.Retain()
		} else if rdr.Err() != nil {
			return uploadError(ctx, in, nil, fmt.Errorf("flight: %s: corrupt or truncated upload: %w", name, rdr.Err()))
		}
		if opts, err = parseUploadOptions(in.firstMeta); err != nil {
			return invalid(err)
		}
		in.options = &opts
	}
	lo, err := loadOptions(opts)
	if err != nil {
		return invalid(err)
	}
	optBytes := in.firstMeta
	if fromCmd {
		optBytes = desc.GetCmd()
	}
	expect, err := parseUploadExpect(optBytes, fromCmd)
	if err != nil {
		return invalid(err)
	}
	if err := in.reserveExpected(expect); err != nil {
		return err
	}

	f, err := s.store.createTemp(name, tableExt)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	tmpName := f.Name()
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(tmpName)
		}
	}()
	fileSchema := rdr.Schema()
	if tee.plain = plainSchema(fileSchema); tee.plain != nil {
		fileSchema = tee.plain
		tee.ctx = compute.WithAllocator(ctx, s.mem)
	}
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(fileSchema), ipc.WithAllocator(s.mem))
	if err != nil {
		return status.Errorf(codes.Internal, "flight: %v", err)
	}
	tee.out = fw
	table, err := arrowio.EdgesFromRecords(tee, name, arrowio.ReadOptions{
		SrcCol: opts.SrcCol, DstCol: opts.DstCol, WeightCol: opts.WeightCol,
		Unweighted: opts.Unweighted, Allocator: s.mem,
		Context: ctx, // a client that goes away stops the read between batches
	})
	if err == nil {
		for tee.Next() { // store batches the reader left unread, if any
		}
		err = tee.Err()
	}
	if err != nil {
		fw.Close()
		return uploadError(ctx, in, tee, err)
	}
	if err := fw.Close(); err != nil {
		return status.Errorf(codes.Internal, "flight: writing the upload to disk: %v", err)
	}
	if nv := table.Vertices.Len(); nv > s.cfg.MaxVertices {
		return status.Errorf(codes.ResourceExhausted,
			"flight: graph %q has %d vertices, more than the server's limit of %d (--max-vertices)", name, nv, s.cfg.MaxVertices)
	}
	g, device, err := s.loadGraph(ctx, table, lo)
	if err != nil {
		return invalid(err)
	}
	remembered := false
	defer func() {
		if device > 0 && !remembered { // failed after the build: free its device copy
			s.forgetResident(g)
		}
	}()
	if err := f.Sync(); err != nil {
		return status.Errorf(codes.Internal, "flight: syncing the upload: %v", err)
	}
	st, err := f.Stat()
	if err != nil {
		return status.Errorf(codes.Internal, "flight: %v", err)
	}
	if err := f.Close(); err != nil {
		return status.Errorf(codes.Internal, "flight: closing the upload: %v", err)
	}
	if ctx.Err() != nil { // the client gave up: store nothing
		return toStatus(ctx.Err())
	}
	meta := GraphMeta{
		Name:     name,
		Options:  opts,
		Vertices: int64(table.Vertices.Len()),
		Edges:    int64(table.Edges.Len()),
		Arcs:     g.CSR.NumEdges(),
		Directed: !opts.Undirected,
		IDType:   arrowio.IDType(table.Vertices).String(),
		DistType: g.DistType().String(),
		Bytes:    st.Size(),
		Stored:   time.Now().UTC(),
		Schema:   flight.SerializeSchema(rdr.Schema(), s.mem),
	}
	if table.WeightType != nil {
		meta.WeightType = table.WeightType.String()
	}
	committed = true
	if err := s.store.commit(&meta, tmpName); err != nil {
		os.Remove(tmpName)
		return status.Error(codes.Internal, err.Error())
	}
	s.evict(name)
	s.remember(meta, g, device)
	remembered = true
	ci.rows.Store(meta.Edges)
	body, err := json.Marshal(publicMeta{GraphMeta: meta})
	if err != nil {
		return status.Errorf(codes.Internal, "flight: %v", err)
	}
	return stream.Send(&flight.PutResult{AppMetadata: body})
}

// uploadError classifies a failed upload: over the limit, cancelled by the
// client, a disk failure, or bad input.
func uploadError(ctx context.Context, in *limitedPutStream, tee *teeRecords, err error) error {
	switch {
	case in.refused != nil:
		return in.refused
	case ctx.Err() != nil:
		return toStatus(ctx.Err())
	case tee != nil && tee.writeErr != nil:
		return status.Error(codes.Internal, tee.writeErr.Error())
	case errors.Is(err, io.EOF):
		return status.Error(codes.InvalidArgument, "flight: the upload stream ended before its schema")
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err
	}
	return invalid(err)
}
