package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/flight"
	"github.com/pathctl/pathctl/gen"
	"github.com/pathctl/pathctl/pipeline"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve graphs and shortest paths over Arrow Flight",
		Description: "Upload edge tables with DoPut (descriptor path graphs/NAME), query them with\n" +
			"GetFlightInfo/DoGet (JSON: graph, algorithm, sources, targets, layout, cutoff, k,\n" +
			"reverse, with_paths, with_predecessors, engine, delta, matrix_type: run's flags by their Python\n" +
			"names; layout betweenness adds normalized, endpoints and seed, its k the sample),\n" +
			"list them with ListFlights, and drop them with the drop action.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8815", Usage: "HOST:PORT to listen on; beyond loopback it needs --auth-token-file and --tls-cert/--tls-key (or --insecure-public); an empty host without either means loopback only"},
			&cli.BoolFlag{Name: "insecure-public", Usage: "allow an --addr beyond loopback without authentication and TLS"},
			&cli.StringFlag{Name: "data-dir", Required: true, Usage: "directory where uploaded graphs are kept across restarts"},
			&cli.IntFlag{Name: "max-concurrent", Usage: "computations run at once; others wait in a queue fair among clients (default: one per GPU of --devices, 1 without a GPU)"},
			&cli.StringFlag{Name: "devices", Value: "all", Usage: "GPUs the runs use: all, or ordinals such as 0,1; each run takes an idle one"},
			&cli.Float64Flag{Name: "max-query-seconds", Usage: "stop a query that runs longer than this many seconds (default: 0, no limit)"},
			&cli.Int64Flag{Name: "max-query-pairs", Usage: "refuse a query of more sources × vertices pairs (default: 0, no limit)"},
			&cli.StringFlag{Name: "max-upload-bytes", Value: "4GiB", Usage: "largest upload accepted, counted decoded (buffers decompressed, dictionaries expanded), in bytes or with a unit: 512MiB, 8GB"},
			&cli.StringFlag{Name: "max-memory", Usage: "memory that uploads and queries in flight may hold together, in bytes or with a unit; past it a request waits up to --idle-timeout, then gets RESOURCE_EXHAUSTED (default: half of the machine's memory, or of the cgroup limit where lower)"},
			&cli.IntFlag{Name: "max-uploads", Usage: "uploads received at once; a further one is refused with RESOURCE_EXHAUSTED (default: 4 per core, at least 16)"},
			&cli.DurationFlag{Name: "idle-timeout", Value: flight.DefaultIdleTimeout, Usage: "cancel an upload that sends nothing, or a query whose client reads nothing, for this long"},
			&cli.StringFlag{Name: "cache-bytes", Value: "8GiB", Usage: "memory of the stored graphs kept loaded between queries, in bytes or with a unit, counting the device bytes of their CSRs kept on the GPU beside the host bytes; past it, the least recently used are read again when next queried"},
			&cli.BoolFlag{Name: "no-resident-csr", Usage: "do not keep the CSRs of loaded graphs on the GPU between queries: each GPU query copies its graph to the device, as run does"},
			&cli.BoolFlag{Name: "no-background-index", Usage: "do not build the contraction hierarchies of loaded road-like graphs in the background (hierarchy files already stored are still read)"},
			&cli.IntFlag{Name: "max-vertices", Usage: "largest graph accepted, in vertices (default: what int32 ids hold)"},
			&cli.StringFlag{Name: "max-message-bytes", Value: "64MiB", Usage: "largest gRPC message either way, in bytes or with a unit"},
			&cli.StringFlag{Name: "auth-token-file", Usage: "require basic-then-bearer authentication with the token in this file"},
			&cli.DurationFlag{Name: "session-ttl", Value: flight.DefaultSessionTTL, Usage: "how long the session token of a login stays valid"},
			&cli.StringFlag{Name: "tls-cert", Usage: "PEM certificate; with --tls-key turns on TLS"},
			&cli.StringFlag{Name: "tls-key", Usage: "PEM private key of --tls-cert"},
			&cli.StringFlag{Name: "mem", Usage: "memory budget per run, in bytes or with a unit: 512MiB, 8GB (default as for run)"},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads per run (default: every core)"},
			tuneFlag(),
			&cli.DurationFlag{Name: "drain-timeout", Value: 30 * time.Second, Usage: "how long a shutdown waits for running streams"},
			&cli.BoolFlag{Name: "exit-with-stdin", Hidden: true, Usage: "stop when stdin closes (the parent that started serve is gone)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usagef("serve takes no arguments, got %q", c.Args().Slice())
			}
			cfg, err := serveConfig(c)
			if err != nil {
				return err
			}
			setServeMemoryLimit(cfg)
			cfg.Info = func() any { return collectInfo() }
			cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, nil))
			s, err := flight.NewServer(cfg)
			var inUse *flight.DataDirInUseError
			if errors.As(err, &inUse) {
				return err // exit 1: nothing wrong with the command, the directory is busy
			}
			if err != nil {
				return usageError{err}
			}
			ctx := e.ctx
			if c.Bool("exit-with-stdin") {
				ctx = exitWithStdin(ctx, e.stdin)
			}
			fmt.Fprintf(e.stderr, "pathctl: listening on %s\n", s.Addr())
			return s.Serve(ctx)
		},
	}
}

// serveConfig translates the flags of pathctl serve; flight.NewServer
// checks the rest. Size flags take units as run --mem does.
func serveConfig(c *cli.Context) (flight.Config, error) {
	cfg := flight.Config{
		Addr: c.String("addr"), InsecurePublic: c.Bool("insecure-public"), DataDir: c.String("data-dir"),
		SessionTTL: c.Duration("session-ttl"), MaxQuerySeconds: c.Float64("max-query-seconds"), MaxQueryPairs: c.Int64("max-query-pairs"),
		MaxConcurrent: c.Int("max-concurrent"), MaxVertices: c.Int("max-vertices"),
		AuthTokenFile: c.String("auth-token-file"), TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"),
		Threads: c.Int("threads"), DrainTimeout: c.Duration("drain-timeout"), NoResidentCSR: c.Bool("no-resident-csr"),
		NoBackgroundIndex: c.Bool("no-background-index"),
		MaxUploads:        c.Int("max-uploads"), IdleTimeout: c.Duration("idle-timeout"),
	}
	var err error
	if cfg.Tune, err = readTune(c); err != nil {
		return cfg, err
	}
	if cfg.Devices, err = pipeline.ParseDevices(c.String("devices")); err != nil {
		return cfg, usagef("--devices %s: want all or device ordinals such as 0,1", c.String("devices"))
	}
	if !c.IsSet("max-concurrent") {
		cfg.MaxConcurrent = deviceSlots(cfg.Devices)
	}
	if cfg.MaxUploadBytes, err = sizeFlag(c, "max-upload-bytes"); err != nil {
		return cfg, err
	}
	if cfg.MaxMemory, err = sizeFlag(c, "max-memory"); err != nil {
		return cfg, err
	}
	if c.IsSet("max-memory") && cfg.MaxMemory == 0 {
		return cfg, usagef("--max-memory %s: want a size above 0", c.String("max-memory"))
	}
	if c.IsSet("max-uploads") && cfg.MaxUploads <= 0 {
		return cfg, usagef("--max-uploads %d: want at least 1", cfg.MaxUploads)
	}
	if c.IsSet("idle-timeout") && cfg.IdleTimeout <= 0 {
		return cfg, usagef("--idle-timeout %v: want a duration above 0", cfg.IdleTimeout)
	}
	if cfg.CacheBytes, err = sizeFlag(c, "cache-bytes"); err != nil {
		return cfg, err
	}
	if cfg.MemBudget, err = sizeFlag(c, "mem"); err != nil {
		return cfg, err
	}
	msg, err := sizeFlag(c, "max-message-bytes")
	if err != nil {
		return cfg, err
	}
	if msg > math.MaxInt32 {
		return cfg, usagef("--max-message-bytes %s: gRPC messages are at most %s", c.String("max-message-bytes"), gen.HumanBytes(math.MaxInt32))
	}
	cfg.MaxMessageBytes = int(msg)
	return cfg, nil
}

// serveMemoryHeadroom is what the server holds beyond --max-memory and
// --cache-bytes: its code, gRPC's buffers, the graph store's metadata.
const serveMemoryHeadroom = 512 << 20

// setServeMemoryLimit gives the Go runtime a soft memory limit of
// --max-memory plus --cache-bytes plus serveMemoryHeadroom, unless
// GOMEMLIMIT sets one: the collector then runs harder as the process nears
// what its budgets allow, instead of letting the heap grow to twice what is
// live (GOGC=100), which is most of an upload's peak.
func setServeMemoryLimit(cfg flight.Config) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	budget, cache := cfg.MaxMemory, cfg.CacheBytes
	if budget == 0 {
		budget = flight.DefaultMaxMemory()
	}
	if cache == 0 {
		cache = flight.DefaultCacheBytes
	}
	limit := budget + cache + serveMemoryHeadroom
	if limit < budget { // overflowed: no limit
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
}
