package flight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/internal/recovered"
	"github.com/pathctl/pathctl/pipeline"
)

// graphFor returns the graph of meta, reading it from its file on first
// use. Graphs stay loaded until dropped or replaced, or until the cache's
// budget (--cache-bytes) needs their room.
func (s *Server) graphFor(meta GraphMeta) (*pipeline.Graph, error) {
	lg := s.cache.entry(meta.Data)
	lg.once.Do(func() {
		var device int64
		lg.g, device, lg.err = s.readStored(meta)
		s.cache.loaded(meta.Data, lg)
		if device > 0 {
			s.cache.addDevice(lg.g, device)
		}
		if lg.err == nil {
			s.index.loaded(meta, lg.g, true) // its stored hierarchy, or a build
		}
	})
	if lg.err != nil {
		if errors.Is(lg.err, fs.ErrNotExist) { // dropped or replaced meanwhile
			return nil, notFound(meta.Name)
		}
		return nil, status.Errorf(codes.Internal, "flight: reading stored graph %q: %v", meta.Name, lg.err)
	}
	return lg.g, nil
}

// remember puts a graph just uploaded into the cache, unless another
// upload of the same name has replaced it already;
// device is the bytes of its CSR kept on the device by loadGraph, which
// go with the cache entry, or are freed at once when there is none.
func (s *Server) remember(meta GraphMeta, g *pipeline.Graph, device int64) {
	current, ok := s.store.get(meta.Name)
	if ok && current.Data == meta.Data {
		s.cache.put(meta.Data, g)
	}
	if device > 0 {
		s.cache.addDevice(g, device)
	}
	if ok && current.Data == meta.Data {
		s.index.loaded(meta, g, false) // the background build, where it pays
	}
}

// evict forgets every loaded version of graph name that the store no longer
// names (after a drop or a replacement), and cancels their hierarchies'
// builds. Running jobs keep theirs.
func (s *Server) evict(name string) {
	current, ok := s.store.get(name)
	stale := func(data string) bool {
		return isDataOf(data, name) && (!ok || data != current.Data)
	}
	s.cache.removeIf(stale)
	s.index.forget(stale)
}

// isDataOf reports whether data file name data belongs to graph name
// (NAME-<16 hex>.arrow).
func isDataOf(data, name string) bool {
	const suffix = len("-0123456789abcdef.arrow")
	return len(data) == len(name)+suffix && data[:len(name)] == name
}

// readStored reads a stored table as the CLI reads an Arrow IPC file, and
// returns its graph with the device bytes of its CSR where loadGraph
// built it on the device.
func (s *Server) readStored(meta GraphMeta) (*pipeline.Graph, int64, error) {
	opt := meta.Options
	table, err := arrowio.ReadEdges(s.store.dataPath(meta), arrowio.ReadOptions{
		Format: arrowio.FormatArrowFile, SrcCol: opt.SrcCol, DstCol: opt.DstCol, WeightCol: opt.WeightCol,
		Unweighted: opt.Unweighted, Allocator: s.mem,
	})
	if err != nil {
		return nil, 0, err
	}
	table.Name = meta.Name
	lo, err := loadOptions(opt)
	if err != nil {
		return nil, 0, err
	}
	return s.loadGraph(context.Background(), table, lo)
}

func loadOptions(o UploadOptions) (pipeline.LoadOptions, error) {
	lo := pipeline.LoadOptions{Undirected: o.Undirected}
	if o.DistType != "" {
		t, err := graph.ParseDistType(o.DistType)
		if err != nil {
			return lo, fmt.Errorf("flight: %w", err)
		}
		lo.DistType = t
	}
	return lo, nil
}

// prepareQuery parses a query, finds its graph and prepares the query on
// it (pipeline.Prepare): the one resolution of its ids, whose schema
// GetFlightInfo answers and whose run DoGet streams.
func (s *Server) prepareQuery(ctx context.Context, b []byte) (Query, *pipeline.Prepared, error) {
	ci := callInfoFrom(ctx)
	q, err := ParseQuery(b)
	ci.setGraph(q.Graph)
	ci.setAlgorithm(q.Algorithm)
	ci.setEngine(q.Engine)
	if err != nil {
		return q, nil, invalid(err)
	}
	algo, err := graph.ParseAlgorithm(q.Algorithm)
	if err != nil {
		return q, nil, invalid(err)
	}
	layout, err := arrowio.ParseLayout(q.Layout)
	if err != nil {
		return q, nil, invalid(err)
	}
	meta, ok := s.store.get(q.Graph)
	if !ok {
		return q, nil, notFound(q.Graph)
	}
	g, err := s.graphFor(meta)
	if err != nil {
		return q, nil, err
	}
	if lim := s.cfg.MaxQueryPairs; lim > 0 {
		// A run computes every vertex of a source's row; its answer has a
		// column per target, repeats included, which may be more.
		n := int64(g.Table.Vertices.Len())
		width, what := n, "vertices"
		if int64(len(q.Targets)) > n {
			width, what = int64(len(q.Targets)), "targets"
		}
		sources := n
		if q.Sources != nil {
			sources = int64(len(q.Sources))
		}
		if width > 0 && sources > lim/width {
			return q, nil, status.Errorf(codes.ResourceExhausted,
				"flight: the query computes %d sources × %d %s = %d pairs, more than the server's limit of %d (--max-query-pairs); ask for fewer sources or targets",
				sources, width, what, sources*width, lim)
		}
	}
	opt := pipeline.Options{
		Query:     pipeline.Query{Algorithm: algo, Layout: layout, Sources: q.sourceStrings(), WithPredecessors: q.WithPredecessors, Delta: q.Delta, MatrixType: q.MatrixType},
		Resources: pipeline.Resources{Engine: q.Engine, Threads: s.cfg.Threads, MemBudget: s.cfg.MemBudget, Tune: s.cfg.Tune, Allocator: s.mem, GPU: s.gpu, GPUs: s.gpus},
	}
	if b := s.cfg.queryHostBudget(); opt.MemBudget == 0 && b < pipeline.DefaultMemBudget {
		// --max-memory is too small for the pipeline's default budget of
		// blocks (which on a GPU bounds the device's blocks too).
		opt.MemBudget = b
	}
	q.QueryNarrowing.apply(&opt)
	q.applyBetweenness(&opt)
	pq, err := pipeline.Prepare(g, opt)
	if errors.Is(err, pipeline.ErrUnknownSource) {
		// Found before anything runs, so that GetFlightInfo refuses them
		// too; the message names the graph and the id.
		return q, nil, status.Errorf(codes.InvalidArgument, "flight: graph %q: %s", q.Graph, strings.TrimPrefix(err.Error(), pipeline.ErrInvalid.Error()+": "))
	}
	if err != nil {
		return q, nil, toStatus(err)
	}
	return q, pq, nil
}

// DoGet runs the query in the ticket and streams its result in the CLI's
// schema. An auto query whose GPU run fails for a reason of the device
// (a driver error) before anything was sent runs again on the CPU. The
// run waits for a slot of the fair queue and for its memory in the
// server's budget (--max-memory); a client that cancels or disconnects
// stops it, and so do --max-query-seconds and a reader that reads nothing
// for --idle-timeout (gRPC's flow control holds a send to a reader that
// stopped reading: the query would keep its slot for ever).
func (s *Server) DoGet(ticket *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	ctx := stream.Context()
	q, pq, err := s.prepareQuery(ctx, ticket.GetTicket())
	if err != nil {
		return err
	}
	if err := rowFits(pq.Schema(), int64(s.cfg.MaxMessageBytes)); err != nil {
		return err
	}
	client := clientKey(ctx)
	if err := s.queue.acquire(ctx, client); err != nil {
		return toStatus(err)
	}
	reserved := s.cfg.queryMemory(pq)
	if err := s.budget.acquire(ctx, reserved); err != nil {
		s.queue.release(client)
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	if s.cfg.MaxQuerySeconds > 0 {
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(s.cfg.MaxQuerySeconds*float64(time.Second)))
	}
	defer cancel()
	// The query runs in a goroutine of its own, which owns the stream's
	// writer and gives back the slot and the memory when it ends; this one
	// waits for it, and returns at once when a send stalls past
	// --idle-timeout or the run outlives --max-query-seconds in a send:
	// returning ends the stream, which fails the stalled send.
	watch := newSendWatch(s.cfg.IdleTimeout)
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer s.queue.release(client)
		defer s.budget.release(reserved)
		defer recovered.Catch(&err)
		err = s.runQuery(runCtx, stream, q, pq, watch)
	}()
	select {
	case err := <-done:
		return s.queryError(ctx, q, err)
	case <-watch.stalled:
		cancel()
		s.log.Warn("flight: the client read no result for the idle timeout; the query is cancelled",
			"graph", q.Graph, "idle_timeout", s.cfg.IdleTimeout.String())
		return status.Errorf(codes.DeadlineExceeded,
			"flight: the client read no result for %v (--idle-timeout); the query was cancelled", s.cfg.IdleTimeout)
	case <-runCtx.Done():
	}
	// The run stops at its next check of runCtx; a send held by flow
	// control does not, so the stream ends after a short grace.
	select {
	case err := <-done:
		return s.queryError(ctx, q, err)
	case <-time.After(queryStopGrace):
		return s.queryError(ctx, q, runCtx.Err())
	}
}

// queryStopGrace is how long DoGet waits for a run to stop once its
// context ended before it ends the stream under it.
const queryStopGrace = time.Second

// runQuery runs pq, the query q prepared, into stream, sending through
// watch; runCtx is the run's context (with --max-query-seconds).
func (s *Server) runQuery(runCtx context.Context, stream grpc.ServerStream, q Query, pq *pipeline.Prepared, watch *sendWatch) error {
	ctx := stream.Context()
	ci := callInfoFrom(ctx)
	s.keepResident(ctx, q.Graph, pq)
	w := newResultWriter(watch.wrap(stream), ipc.WithSchema(pq.Schema()), ipc.WithAllocator(s.mem))
	defer w.Close()
	runStart := time.Now()
	sent := false
	emit := func(rec arrow.RecordBatch) error {
		sent = true
		ci.rows.Add(rec.NumRows())
		start := time.Now()
		defer func() { ci.send.Add(int64(time.Since(start))) }()
		return sendSliced(w, rec, int64(s.cfg.MaxBatchBytes), int64(s.cfg.MaxMessageBytes))
	}
	sum, err := s.run(runCtx, pq, emit)
	if err != nil && !sent && runCtx.Err() == nil && pq.Options().Engine == "auto" && pipeline.DeviceFailed(err) {
		// Nothing has reached the client: the query runs again on the CPU,
		// as auto would have chosen without a GPU.
		s.log.Warn("flight: the GPU failed before any result was sent; running the query on the CPU",
			"graph", q.Graph, "error", err.Error())
		sum, err = s.run(runCtx, pq.OnCPU(), emit)
	}
	ci.run.Store(int64(time.Since(runStart)))
	if err != nil {
		if ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
			return context.DeadlineExceeded
		}
		return err
	}
	ci.setAlgorithm(sum.Algorithm)
	ci.setEngine(sum.Engine)
	return w.Close()
}

// queryError is the status DoGet ends with for err: a run past
// --max-query-seconds says so, a panic of the run is logged with its
// stack and fails this query alone.
func (s *Server) queryError(ctx context.Context, q Query, err error) error {
	if err == nil {
		return nil
	}
	var crash *recovered.Error
	if errors.As(err, &crash) {
		s.log.Error("flight: the query panicked", "graph", q.Graph, "panic", fmt.Sprint(crash.Value), "stack", crash.Stack)
		return status.Errorf(codes.Internal, "flight: internal error running the query: %v (in %s)", crash.Value, crash.FirstFrame())
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && s.cfg.MaxQuerySeconds > 0 {
		return status.Errorf(codes.ResourceExhausted,
			"flight: the query ran past the server's limit of %v seconds (--max-query-seconds); ask for fewer sources", s.cfg.MaxQuerySeconds)
	}
	return toStatus(err)
}

// sendSliced writes rec, cut into row slices whose messages fit maxBytes,
// the IPC and gRPC framing of each message included. A single row larger
// than that goes alone, if it fits maxMessage (--max-message-bytes); one
// that does not is refused with a status naming the limit, before gRPC
// refuses it with a less helpful one.
func sendSliced(w batchWriter, rec arrow.RecordBatch, maxBytes, maxMessage int64) error {
	body := maxBytes - messageFraming(rec)
	rows := rec.NumRows()
	if rows <= 1 || recordBytes(rec) <= body {
		if rows == 1 {
			if err := oneRowFits(rec, maxMessage); err != nil {
				return err
			}
		}
		return w.Write(rec)
	}
	perRow := max(recordBytes(rec)/rows, 1)
	step := max(body/perRow, 1)
	for lo := int64(0); lo < rows; lo += step {
		if err := sendFitting(w, rec, lo, min(lo+step, rows), body, maxMessage); err != nil {
			return err
		}
	}
	return nil
}

// sendFitting writes rows [lo, hi) of rec, halving the range until the
// body of each part fits body bytes (rows of uneven size, such as strings,
// make the first cut only an estimate).
func sendFitting(w batchWriter, rec arrow.RecordBatch, lo, hi, body, maxMessage int64) error {
	part := rec.NewSlice(lo, hi)
	defer part.Release()
	if hi-lo <= 1 {
		if err := oneRowFits(part, maxMessage); err != nil {
			return err
		}
		return w.Write(part)
	}
	if sliceRecordBytes(part) <= body {
		return w.Write(part)
	}
	mid := lo + (hi-lo)/2
	if err := sendFitting(w, rec, lo, mid, body, maxMessage); err != nil {
		return err
	}
	return sendFitting(w, rec, mid, hi, body, maxMessage)
}

// oneRowFits refuses a one-row batch whose message would pass
// --max-message-bytes (a long string id on top of a wide matrix row).
func oneRowFits(part arrow.RecordBatch, maxMessage int64) error {
	size := sliceRecordBytes(part) + messageFraming(part)
	if maxMessage <= 0 || size <= maxMessage {
		return nil
	}
	return tooWide(part.Schema(), size, maxMessage)
}

// rowFits refuses, before anything runs, a result whose every row is too
// large for one message of maxMessage bytes (--max-message-bytes): a
// matrix row holds one distance per vertex, so a large graph's rows pass
// a small limit. A row is never split, since a part of a fixed-size list
// would not be the schema's type.
func rowFits(schema *arrow.Schema, maxMessage int64) error {
	size := minRowBytes(schema) + schemaFraming(schema)
	if maxMessage <= 0 || size <= maxMessage {
		return nil
	}
	return tooWide(schema, size, maxMessage)
}

// tooWide is the status of a row that no message can carry.
func tooWide(schema *arrow.Schema, size, maxMessage int64) error {
	layout, _ := schema.Metadata().GetValue(arrowio.MetaLayout)
	width := ""
	for _, f := range schema.Fields() {
		if l, ok := f.Type.(*arrow.FixedSizeListType); ok {
			width = fmt.Sprintf(" (%d distances)", l.Len())
		}
	}
	return status.Errorf(codes.ResourceExhausted,
		"flight: one row of the %s layout takes %d bytes%s, more than the server's limit of %d bytes per message (--max-message-bytes); ask for layout \"pairs\" or fewer targets, or start the server with a larger --max-message-bytes",
		layout, size, width, maxMessage)
}

// minRowBytes is the least a message of one row of schema carries in
// buffers: each array's validity bitmap and data, padded to 8 bytes as
// the IPC writer pads them; a string's bytes count as none.
func minRowBytes(schema *arrow.Schema) int64 {
	var n int64
	var walk func(t arrow.DataType, count int64)
	walk = func(t arrow.DataType, count int64) {
		n += pad8((count + 7) / 8) // validity
		switch t := t.(type) {
		case *arrow.FixedSizeListType:
			walk(t.Elem(), count*int64(t.Len()))
		case *arrow.StringType, *arrow.BinaryType:
			n += pad8(4 * (count + 1))
		case *arrow.LargeStringType, *arrow.LargeBinaryType:
			n += pad8(8 * (count + 1))
		case arrow.FixedWidthDataType:
			n += pad8((count*int64(t.BitWidth()) + 7) / 8)
		}
	}
	for _, f := range schema.Fields() {
		walk(f.Type, 1)
	}
	return n
}

func pad8(n int64) int64 { return (n + 7) &^ 7 }

// schemaFraming is messageFraming for a batch of schema, counting three
// buffers per array (no layout has more).
func schemaFraming(schema *arrow.Schema) int64 {
	var nodes int64
	var walk func(t arrow.DataType)
	walk = func(t arrow.DataType) {
		nodes++
		if n, ok := t.(arrow.NestedType); ok {
			for _, f := range n.Fields() {
				walk(f.Type)
			}
		}
	}
	for _, f := range schema.Fields() {
		walk(f.Type)
	}
	return 256 + 16*nodes + 24*3*nodes
}

// messageFraming bounds what a record batch message of rec's schema adds
// to its buffers: the flatbuffer header (a field node and a buffer entry of
// 16 bytes each per array, plus fixed fields), padding of each buffer to 8
// bytes, the stream's length prefix and the protobuf tags of FlightData.
func messageFraming(rec arrow.RecordBatch) int64 {
	var nodes, buffers int64
	var count func(d arrow.ArrayData)
	count = func(d arrow.ArrayData) {
		nodes++
		buffers += int64(len(d.Buffers()))
		for _, c := range d.Children() {
			count(c)
		}
	}
	for _, col := range rec.Columns() {
		count(col.Data())
	}
	return 256 + 16*nodes + 24*buffers
}

// recordBytes is the size of rec's buffers (slices count whole buffers).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
}

// sliceRecordBytes is what the IPC writer sends of rec's buffers: for
// sliced arrays, only the rows in the slice.
func sliceRecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += sliceBytes(col.Data())
	}
	return n
}

func sliceBytes(d arrow.ArrayData) int64 {
	n, off := int64(d.Len()), int64(d.Offset())
	bitmap := (n + 7) / 8
	switch t := d.DataType().(type) {
	case arrow.FixedWidthDataType:
		return bitmap + (n*int64(t.BitWidth())+7)/8
	case *arrow.StringType, *arrow.BinaryType:
		offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
		return bitmap + 4*(n+1) + int64(offs[off+n]-offs[off])
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		offs := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())
		return bitmap + 8*(n+1) + offs[off+n] - offs[off]
	case *arrow.FixedSizeListType:
		size := int64(t.Len())
		child := array.NewSliceData(d.Children()[0], (off)*size, (off+n)*size)
		defer child.Release()
		return bitmap + sliceBytes(child)
	case *arrow.ListType:
		offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
		child := array.NewSliceData(d.Children()[0], int64(offs[off]), int64(offs[off+n]))
		defer child.Release()
		return bitmap + 4*(n+1) + sliceBytes(child)
	}
	return dataBytes(d)
}
func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// clientKey names the client of a call for the fair queue: its session
// token (hashed) when authentication is on, otherwise its connection.
func clientKey(ctx context.Context) string {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if auth := md.Get("authorization"); len(auth) > 0 {
			sum := sha256.Sum256([]byte(auth[0]))
			return "session:" + hex.EncodeToString(sum[:8])
		}
	}
	if p, ok := peer.FromContext(ctx); ok {
		return "peer:" + p.Addr.String()
	}
	return ""
}
