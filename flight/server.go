package flight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// Server is the Flight service: a gRPC server, the graph store and the job
// queue.
type Server struct {
	flight.BaseFlightServer

	cfg   Config
	log   *slog.Logger
	mem   memory.Allocator
	store *store
	lock  *dirLock
	lis   net.Listener
	grpc  *grpc.Server
	// queue hands out the computation slots: a run holds one.
	queue *fairQueue
	// budget is the memory that uploads and queries in flight hold
	// (--max-memory), and the count of uploads (--max-uploads).
	budget *memBudget

	cache *graphCache // stored graphs in memory, by data file name
	// index builds, stores and reads the graphs' contraction hierarchies
	// (index.go).
	index *indexer
	// gpu is the GPU engine every run shares, opened by the first run that
	// wants it and closed when the server stops.
	gpu graph.SharedGPU
	// resident keeps the CSRs of cached graphs on the device between
	// queries (&gpu, or a test's fake); nil with Config.NoResidentCSR.
	resident residentKeeper
	// gpus, where Config.Devices names several devices, hold one engine
	// each; a run takes an idle one (nil: every run shares gpu).
	gpus graph.GPUPool
	// run runs a prepared query (its Run), or is a test's stand-in
	// (Config.run).
	run func(context.Context, *pipeline.Prepared, func(arrow.RecordBatch) error) (*pipeline.Summary, error)

	closeOnce sync.Once
}

// Serve runs a server with cfg until ctx is cancelled.
func Serve(ctx context.Context, cfg Config) error {
	s, err := NewServer(cfg)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// NewServer locks the data directory (a *DataDirInUseError when another
// server holds it), opens it (removing what interrupted uploads left there),
// reads the auth token and TLS files, and listens on cfg.Addr under the
// rules of Config.Addr. Nothing is served until Serve; the lock is held
// until Serve returns or Close.
func NewServer(cfg Config) (_ *Server, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	addr, note, err := listenAddr(cfg.Addr, cfg.AuthTokenFile != "", cfg.TLSCert != "", cfg.InsecurePublic)
	if err != nil {
		return nil, err
	}

	s := &Server{
		cfg:   cfg,
		log:   cfg.Logger,
		mem:   cfg.Allocator,
		queue: newFairQueue(cfg.MaxConcurrent),
		gpu:   pipeline.NewSharedGPU(),
		gpus:  pipeline.NewGPUPool(cfg.Devices),
	}
	s.budget = newMemBudget(cfg.MaxMemory)
	s.run = func(ctx context.Context, q *pipeline.Prepared, emit func(arrow.RecordBatch) error) (*pipeline.Summary, error) {
		return q.Run(ctx, emit)
	}
	if cfg.run != nil {
		s.run = cfg.run
	}
	var forget func(*pipeline.Graph)
	if !cfg.NoResidentCSR {
		s.resident = pipeline.ResidentGraphs{GPU: s.gpu}
		if cfg.keeper != nil {
			s.resident = cfg.keeper
		}
		forget = s.forgetResident
	}
	s.cache = newGraphCache(cfg.CacheBytes, forget)
	if s.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.lock.release()
		}
	}()
	if s.store, err = openStore(cfg.DataDir, s.lock.acquired, s.log); err != nil {
		return nil, err
	}
	unary := []grpc.UnaryServerInterceptor{logUnary(s.log)}
	streams := []grpc.StreamServerInterceptor{logStream(s.log)}
	if cfg.AuthTokenFile != "" {
		auth, err := readTokenFile(cfg.AuthTokenFile, cfg.SessionTTL)
		if err != nil {
			return nil, err
		}
		u, st := flight.CreateServerBearerTokenAuthInterceptors(auth)
		unary, streams = append(unary, u), append(streams, st)
	}
	codec, err := newFlightCodec()
	if err != nil {
		return nil, err
	}
	opts := append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(streams...),
		grpc.MaxRecvMsgSize(cfg.MaxMessageBytes),
		grpc.MaxSendMsgSize(cfg.MaxMessageBytes),
		grpc.MaxConcurrentStreams(MaxStreamsPerConnection),
		grpc.ForceServerCodecV2(codec),
	}, serverTransportOptions()...)
	if cfg.TLSCert != "" {
		creds, err := credentials.NewServerTLSFromFile(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("flight: TLS: %w", err)
		}
		opts = append(opts, grpc.Creds(creds))
	}
	if host, _, _ := net.SplitHostPort(addr); note != "" && isLoopback(host) {
		s.log.Info("flight: " + note)
	} else if note != "" {
		s.log.Warn("flight: " + note)
	}
	if s.lis, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("flight: %w", err)
	}
	s.grpc = grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(s.grpc, s)
	s.index = newIndexer(s.store, s.log, !cfg.NoBackgroundIndex, s.cache.addIndex)
	return s, nil
}

// Addr is the address the server listens on (with the port chosen when
// Config.Addr asked for port 0).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Serve serves until ctx is cancelled, then stops taking calls, lets the
// running streams finish for up to Config.DrainTimeout, cancels what is
// left and returns nil. It returns an error if serving fails.
func (s *Server) Serve(ctx context.Context) error {
	s.log.Info("flight: serving", "addr", s.Addr().String(), "data_dir", s.cfg.DataDir,
		"graphs", len(s.store.list()), "auth", s.cfg.AuthTokenFile != "", "tls", s.cfg.TLSCert != "",
		"max_concurrent", s.cfg.MaxConcurrent)
	defer s.lock.release()
	done := make(chan error, 1)
	go func() { done <- s.grpc.Serve(s.lis) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("flight: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	s.log.Info("flight: shutting down: draining running streams", "timeout", s.cfg.DrainTimeout.String())
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(s.cfg.DrainTimeout):
		s.log.Warn("flight: drain timeout: cancelling the streams still running")
		s.grpc.Stop()
		<-stopped
	}
	<-done
	s.index.close()
	s.cache.clear()
	if err := closeGPUs(s.gpu, s.gpus); err != nil {
		s.log.Warn("flight: closing the GPU engine", "error", err.Error())
	}
	s.log.Info("flight: stopped")
	return nil
}

// Close stops a server at once, cancelling running streams; for a server
// whose Serve was never called, it releases the listener.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.grpc.Stop()
		s.lis.Close()
		s.index.close()
		s.cache.clear()
		err = closeGPUs(s.gpu, s.gpus)
		s.lock.release()
	})
	return err
}

// The actions of DoAction.
const (
	ActionDrop = "drop"
	ActionInfo = "info"
)

var actionTypes = []*flight.ActionType{
	{Type: ActionDrop, Description: "Remove a stored graph. Body: the graph name. Result: {\"dropped\": NAME}. NOT_FOUND when there is no such graph."},
	{Type: ActionInfo, Description: "Describe the server: version and the engines available, as `pathctl info --json` prints them. Body: empty."},
}

// ListActions describes the actions of DoAction.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range actionTypes {
		if err := stream.Send(a); err != nil {
			return err
		}
	}
	return nil
}

// DoAction runs "drop" and "info".
func (s *Server) DoAction(action *flight.Action, stream flight.FlightService_DoActionServer) error {
	ci := callInfoFrom(stream.Context())
	switch action.Type {
	case ActionDrop:
		name := strings.TrimSpace(string(action.Body))
		ci.setGraph(name)
		if err := ValidateName(name); err != nil {
			return invalid(err)
		}
		ok, err := s.store.drop(name)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if !ok {
			return status.Errorf(codes.NotFound, "flight: no graph %q to drop", name)
		}
		s.evict(name)
		body, _ := json.Marshal(map[string]string{"dropped": name})
		return stream.Send(&flight.Result{Body: body})
	case ActionInfo:
		var v any = struct{}{}
		if s.cfg.Info != nil {
			v = s.cfg.Info()
		}
		body, err := json.Marshal(v)
		if err != nil {
			return status.Errorf(codes.Internal, "flight: encoding info: %v", err)
		}
		return stream.Send(&flight.Result{Body: body})
	}
	return status.Errorf(codes.InvalidArgument, "flight: unknown action %q (want %s or %s)", action.Type, ActionDrop, ActionInfo)
}

// ListFlights lists the stored graphs, one FlightInfo each: the descriptor
// path ["graphs", NAME], the schema of the uploaded table, total_records =
// rows of the table, total_bytes = bytes stored, and app_metadata = the
// GraphMeta JSON (vertices, edges, directed, weight_type …) with
// "hierarchy", where its contraction hierarchy stands (index.go). A
// non-empty criteria expression keeps the names that start with it.
func (s *Server) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	prefix := string(c.GetExpression())
	for _, meta := range s.store.list() {
		if !strings.HasPrefix(meta.Name, prefix) {
			continue
		}
		info, err := graphInfo(meta, s.index.state(meta))
		if err != nil {
			return err
		}
		if err := stream.Send(info); err != nil {
			return err
		}
	}
	return nil
}

// graphDescriptor is the descriptor of stored graph name.
func graphDescriptor(name string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"graphs", name}}
}

// publicMeta is the GraphMeta a client sees, with where the graph's
// contraction hierarchy stands (HierarchyReady …; absent for none).
type publicMeta struct {
	GraphMeta
	Data      string `json:"data,omitempty"`
	Schema    []byte `json:"schema,omitempty"`
	Hierarchy string `json:"hierarchy,omitempty"`
}

func graphInfo(meta GraphMeta, hierarchy string) (*flight.FlightInfo, error) {
	body, err := json.Marshal(publicMeta{GraphMeta: meta, Hierarchy: hierarchy})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flight: encoding graph metadata: %v", err)
	}
	return &flight.FlightInfo{
		Schema:           meta.Schema,
		FlightDescriptor: graphDescriptor(meta.Name),
		TotalRecords:     meta.Edges,
		TotalBytes:       meta.Bytes,
		AppMetadata:      body,
	}, nil
}

// graphPath returns NAME of a descriptor path ["graphs", NAME].
func graphPath(d *flight.FlightDescriptor) (string, error) {
	if len(d.Path) != 2 || d.Path[0] != "graphs" {
		return "", fmt.Errorf("flight: descriptor path %q is not [\"graphs\", NAME]", d.Path)
	}
	if err := ValidateName(d.Path[1]); err != nil {
		return "", err
	}
	return d.Path[1], nil
}

// GetFlightInfo describes a query without running it: a command descriptor
// holding a query gives the result schema and a ticket for DoGet; a path
// descriptor ["graphs", NAME] gives the stored graph as ListFlights does.
func (s *Server) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	ci := callInfoFrom(ctx)
	if d.GetType() == flight.DescriptorPATH {
		name, err := graphPath(d)
		if err != nil {
			return nil, invalid(err)
		}
		ci.setGraph(name)
		meta, ok := s.store.get(name)
		if !ok {
			return nil, notFound(name)
		}
		return graphInfo(meta, s.index.state(meta))
	}
	q, pq, err := s.prepareQuery(ctx, d.GetCmd())
	if err != nil {
		return nil, err
	}
	schema := pq.Schema()
	if err := rowFits(schema, int64(s.cfg.MaxMessageBytes)); err != nil {
		return nil, err
	}
	ticket, err := json.Marshal(q)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "flight: encoding ticket: %v", err)
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
		FlightDescriptor: d,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// GetSchema is GetFlightInfo's schema alone.
func (s *Server) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	info, err := s.GetFlightInfo(ctx, d)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: info.Schema}, nil
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "flight: no graph %q; upload it with DoPut to [\"graphs\", %q] or see ListFlights", name, name)
}

// closeGPUs closes the shared device and the pool, where there is one.
func closeGPUs(gpu graph.SharedGPU, gpus graph.GPUPool) error {
	if gpus == nil {
		return gpu.Close()
	}
	return errors.Join(gpu.Close(), gpus.Close())
}
