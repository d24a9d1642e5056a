package flight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// graphFor returns the graph of meta, reading it from its file on first
// use. Graphs stay loaded until dropped or replaced, or until the cache's
// budget (--cache-bytes) needs their room.
func (s *Server) graphFor(meta GraphMeta) (*pipeline.Graph, error) {
	lg := s.cache.entry(meta.Data)
	lg.once.Do(func() {
		lg.g, lg.err = s.readStored(meta)
		s.cache.loaded(meta.Data, lg)
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
// upload of the same name has replaced it already.
func (s *Server) remember(meta GraphMeta, g *pipeline.Graph) {
	if current, ok := s.store.get(meta.Name); ok && current.Data == meta.Data {
		s.cache.put(meta.Data, g)
	}
}

// evict forgets every loaded version of graph name that the store no longer
// names (after a drop or a replacement). Running jobs keep theirs.
func (s *Server) evict(name string) {
	current, ok := s.store.get(name)
	s.cache.removeIf(func(data string) bool {
		return isDataOf(data, name) && (!ok || data != current.Data)
	})
}

// isDataOf reports whether data file name data belongs to graph name
// (NAME-<16 hex>.arrow).
func isDataOf(data, name string) bool {
	const suffix = len("-0123456789abcdef.arrow")
	return len(data) == len(name)+suffix && data[:len(name)] == name
}

// readStored reads a stored table as the CLI reads an Arrow IPC file.
func (s *Server) readStored(meta GraphMeta) (*pipeline.Graph, error) {
	opt := meta.Options
	table, err := arrowio.ReadEdges(s.store.dataPath(meta), arrowio.ReadOptions{
		Format: arrowio.FormatArrowFile, SrcCol: opt.SrcCol, DstCol: opt.DstCol, WeightCol: opt.WeightCol,
		Unweighted: opt.Unweighted, Allocator: s.mem,
	})
	if err != nil {
		return nil, err
	}
	table.Name = meta.Name
	lo, err := loadOptions(opt)
	if err != nil {
		return nil, err
	}
	return pipeline.LoadGraph(table, lo)
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

// prepareQuery parses a query and finds its graph.
func (s *Server) prepareQuery(ctx context.Context, b []byte) (Query, *pipeline.Graph, pipeline.Options, error) {
	ci := callInfoFrom(ctx)
	q, err := ParseQuery(b)
	ci.setGraph(q.Graph)
	ci.setAlgorithm(q.Algorithm)
	ci.setEngine(q.Engine)
	if err != nil {
		return q, nil, pipeline.Options{}, invalid(err)
	}
	algo, err := graph.ParseAlgorithm(q.Algorithm)
	if err != nil {
		return q, nil, pipeline.Options{}, invalid(err)
	}
	layout, err := arrowio.ParseLayout(q.Layout)
	if err != nil {
		return q, nil, pipeline.Options{}, invalid(err)
	}
	meta, ok := s.store.get(q.Graph)
	if !ok {
		return q, nil, pipeline.Options{}, notFound(q.Graph)
	}
	g, err := s.graphFor(meta)
	if err != nil {
		return q, nil, pipeline.Options{}, err
	}
	// Unknown sources are found here, before anything runs, so that
	// GetFlightInfo refuses them too.
	for _, id := range q.Sources {
		if _, err := g.Table.Vertices.Lookup(string(id)); err != nil {
			return q, nil, pipeline.Options{}, status.Errorf(codes.InvalidArgument, "flight: graph %q: source %q: %v", q.Graph, string(id), err)
		}
	}
	opt := pipeline.Options{
		Algorithm:        algo,
		Engine:           q.Engine,
		Layout:           layout,
		Sources:          q.sourceStrings(),
		WithPredecessors: q.WithPredecessors,
		Delta:            q.Delta,
		Threads:          s.cfg.Threads,
		MemBudget:        s.cfg.MemBudget,
		Allocator:        s.mem,
		GPU:              &s.gpu,
	}
	q.QueryNarrowing.apply(&opt)
	return q, g, opt, nil
}

// DoGet runs the query in the ticket and streams its result in the CLI's
// schema. The run waits for a slot of the job queue; a client that cancels
// or disconnects stops it.
func (s *Server) DoGet(ticket *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	ctx := stream.Context()
	ci := callInfoFrom(ctx)
	_, g, opt, err := s.prepareQuery(ctx, ticket.GetTicket())
	if err != nil {
		return err
	}
	schema, err := pipeline.Schema(g, opt)
	if err != nil {
		return toStatus(err)
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return toStatus(ctx.Err())
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	defer w.Close()
	sum, err := pipeline.Run(ctx, g, opt, func(rec arrow.RecordBatch) error {
		ci.rows.Add(rec.NumRows())
		return sendSliced(w, rec, int64(s.cfg.MaxBatchBytes))
	})
	if err != nil {
		return toStatus(err)
	}
	ci.setAlgorithm(sum.Algorithm)
	ci.setEngine(sum.Engine)
	if err := w.Close(); err != nil {
		return toStatus(err)
	}
	return nil
}

// sendSliced writes rec, cut into row slices of about maxBytes each so that
// every message fits the clients' limits. A single row larger than maxBytes
// goes alone.
func sendSliced(w *flight.Writer, rec arrow.RecordBatch, maxBytes int64) error {
	rows := rec.NumRows()
	size := recordBytes(rec)
	if size <= maxBytes || rows <= 1 {
		return w.Write(rec)
	}
	perRow := max(size/rows, 1)
	step := max(maxBytes/perRow, 1)
	for lo := int64(0); lo < rows; lo += step {
		part := rec.NewSlice(lo, min(lo+step, rows))
		err := w.Write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// recordBytes is the size of rec's buffers (slices count whole buffers).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
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
