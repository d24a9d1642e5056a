package flight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// Defaults of Config.
const (
	// DefaultAddr is Arrow Flight's customary port on loopback.
	DefaultAddr            = "127.0.0.1:8815"
	DefaultMaxConcurrent   = 1
	DefaultMaxUploadBytes  = 4 << 30
	DefaultCacheBytes      = 8 << 30
	DefaultMaxMessageBytes = 64 << 20
	// DefaultMaxBatchBytes keeps result messages under the 4 MiB that gRPC
	// clients accept by default (arrow-go's among them).
	DefaultMaxBatchBytes = 3 << 20
	DefaultDrainTimeout  = 30 * time.Second
	// DefaultSessionTTL is how long a session token of the basic-auth
	// handshake stays valid.
	DefaultSessionTTL = 12 * time.Hour
	// DefaultIdleTimeout is how long an upload may send nothing, and a
	// reader of results read nothing, before the server cancels it.
	DefaultIdleTimeout = 60 * time.Second
	// MaxStreamsPerConnection bounds the calls one client connection runs
	// at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS): a gRPC client
	// queues its further calls until one ends, so that one connection
	// cannot open thousands of uploads or stalled readers.
	MaxStreamsPerConnection = 100
)

// DefaultMaxUploads is the default of Config.MaxUploads: four per core the
// Go runtime uses, at least 16.
func DefaultMaxUploads() int { return max(16, 4*runtime.GOMAXPROCS(0)) }

// DefaultMaxMemory is the default of Config.MaxMemory: half of the
// machine's memory, or of the cgroup (v2) memory limit of the process where
// that is lower; 4 GiB where neither is known.
func DefaultMaxMemory() int64 {
	total := arrowio.PhysicalMemory()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		// "max" means no limit, and fails to parse.
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 && (total <= 0 || limit < total) {
			total = limit
		}
	}
	if total <= 0 {
		return 4 << 30
	}
	return total / 2
}

// Config configures a Server; one field per flag of `pathctl serve`. The
// zero value of a field means its default.
type Config struct {
	// Addr is HOST:PORT (--addr); default DefaultAddr. An address beyond
	// loopback (0.0.0.0, a host name, an interface's address, or an empty
	// host with authentication or TLS on) needs both AuthTokenFile and a
	// TLS pair, unless InsecurePublic; an empty host with neither listens
	// on loopback only.
	Addr string
	// InsecurePublic lets the server listen beyond loopback without
	// authentication and TLS (--insecure-public).
	InsecurePublic bool
	// DataDir holds the stored graphs (--data-dir); required.
	DataDir string
	// MaxConcurrent is the number of computations run at once
	// (--max-concurrent, default 1); the others wait in a queue.
	MaxConcurrent int
	// Devices are the GPUs the runs use (--devices; nil: every device):
	// over several, each run takes an idle one (pipeline.NewGPUPool).
	Devices []int
	// MaxUploadBytes bounds the bytes of one upload (--max-upload-bytes,
	// default 4 GiB).
	MaxUploadBytes int64
	// MaxMemory is the server-wide budget of what uploads and queries in
	// flight hold (--max-memory, default DefaultMaxMemory()). An upload
	// reserves uploadMemoryFactor times what it decodes to as its messages
	// arrive; past the budget it waits up to IdleTimeout, then fails with
	// RESOURCE_EXHAUSTED.
	MaxMemory int64
	// MaxUploads bounds the uploads in progress at once (--max-uploads,
	// default DefaultMaxUploads()); a further DoPut is refused at once
	// with RESOURCE_EXHAUSTED.
	MaxUploads int
	// IdleTimeout cancels an upload that sends nothing for this long,
	// removing what it wrote, and a DoGet whose reader reads nothing for
	// this long (--idle-timeout, default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// CacheBytes bounds the memory of the stored graphs kept loaded
	// between queries (--cache-bytes, default 8 GiB), host bytes and the
	// device bytes of their resident CSRs together; past it, the graphs
	// used least recently are read again on their next query.
	CacheBytes int64
	// MaxVertices bounds the vertices of an uploaded graph (--max-vertices,
	// default graph.MaxVertices).
	MaxVertices int
	// MaxMessageBytes bounds one gRPC message either way
	// (--max-message-bytes, default 64 MiB).
	MaxMessageBytes int
	// MaxBatchBytes is the size above which result batches are sliced
	// before they are sent (default 3 MiB, and at most MaxMessageBytes).
	MaxBatchBytes int
	// AuthTokenFile turns on basic-then-bearer authentication with the
	// token in this file (--auth-token-file).
	AuthTokenFile string
	// SessionTTL is how long the session token that a basic-auth handshake
	// hands out stays valid (--session-ttl, default 12 h).
	SessionTTL time.Duration
	// MaxQuerySeconds bounds the run time of one query, once it holds a
	// slot (--max-query-seconds); 0 means no bound.
	MaxQuerySeconds float64
	// MaxQueryPairs bounds the (source, vertex) pairs one query computes:
	// its sources times the graph's vertices (--max-query-pairs); 0 means
	// no bound.
	MaxQueryPairs int64
	// TLSCert and TLSKey are PEM files that turn on TLS (--tls-cert,
	// --tls-key); both or neither.
	TLSCert, TLSKey string
	// NoResidentCSR (--no-resident-csr) turns off keeping the CSRs of
	// cached graphs on the GPU between queries: each GPU query then
	// uploads its graph, as the CLI does. By default a GPU query makes its
	// graph's CSR resident on the server's device, counted in CacheBytes
	// and freed with the cache entry (on eviction, drop, replacement and
	// shutdown).
	NoResidentCSR bool
	// NoBackgroundIndex (--no-background-index) turns off building the
	// contraction hierarchies of loaded graphs in the background (index.go);
	// hierarchy files stored beside the graphs are still read.
	NoBackgroundIndex bool
	// keeper, when set, replaces the shared GPU engine as what keeps CSRs
	// resident (tests).
	keeper residentKeeper
	// run, when set, replaces the run of a prepared query (tests).
	run func(context.Context, *pipeline.Prepared, func(arrow.RecordBatch) error) (*pipeline.Summary, error)
	// MemBudget and Threads are passed to every run (--mem, --threads).
	MemBudget int64
	Threads   int
	// Tune is the GPU engine's tuning of every run (--tune,
	// pipeline.Resources.Tune); "" runs the defaults.
	Tune string
	// DrainTimeout bounds how long a shutdown waits for running streams
	// before it cancels them (default 30 s).
	DrainTimeout time.Duration
	// Info returns what the "info" action answers, as JSON (the CLI passes
	// what `pathctl info --json` prints); nil answers {}.
	Info func() any
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
	// Allocator for uploads and results; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
}

// withDefaults checks c and fills its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" {
		return c, errors.New("flight: no data directory (--data-dir)")
	}
	if err := pipeline.CheckTune(c.Tune); err != nil {
		return c, fmt.Errorf("flight: tune: %w", err)
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.MaxVertices == 0 {
		c.MaxVertices = graph.MaxVertices
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	c.MaxBatchBytes = min(c.MaxBatchBytes, c.MaxMessageBytes)
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory()
	}
	if c.MaxUploads == 0 {
		c.MaxUploads = DefaultMaxUploads()
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	switch {
	case c.MaxConcurrent < 0:
		return c, fmt.Errorf("flight: --max-concurrent %d is negative", c.MaxConcurrent)
	case c.MaxUploadBytes < 0:
		return c, fmt.Errorf("flight: --max-upload-bytes %d is negative", c.MaxUploadBytes)
	case c.CacheBytes < 0:
		return c, fmt.Errorf("flight: --cache-bytes %d is negative", c.CacheBytes)
	case c.MaxVertices < 0:
		return c, fmt.Errorf("flight: --max-vertices %d is negative", c.MaxVertices)
	case c.MaxMessageBytes < 0:
		return c, fmt.Errorf("flight: --max-message-bytes %d is negative", c.MaxMessageBytes)
	case c.MaxMemory < 0:
		return c, fmt.Errorf("flight: --max-memory %d is negative", c.MaxMemory)
	case c.MaxUploads < 0:
		return c, fmt.Errorf("flight: --max-uploads %d is negative", c.MaxUploads)
	case c.IdleTimeout < 0:
		return c, fmt.Errorf("flight: --idle-timeout %v is negative", c.IdleTimeout)
	case c.SessionTTL < 0:
		return c, fmt.Errorf("flight: --session-ttl %v is negative", c.SessionTTL)
	case c.MaxQuerySeconds < 0 || c.MaxQuerySeconds != c.MaxQuerySeconds:
		return c, fmt.Errorf("flight: --max-query-seconds %v is not a duration", c.MaxQuerySeconds)
	case c.MaxQueryPairs < 0:
		return c, fmt.Errorf("flight: --max-query-pairs %d is negative", c.MaxQueryPairs)
	case c.MaxBatchBytes < 0:
		return c, fmt.Errorf("flight: batch size %d is negative", c.MaxBatchBytes)
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return c, errors.New("flight: --tls-cert and --tls-key go together")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	return c, nil
}

// listenAddr applies the rules of Config.Addr. auth and tls say whether
// --auth-token-file and a TLS pair are set. It returns the address to listen
// on and a line to log about the choice, if any, or an error that names
// exactly what is missing for an address beyond loopback.
func listenAddr(addr string, auth, tls, insecurePublic bool) (string, string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("flight: --addr %q: %w (want HOST:PORT)", addr, err)
	}
	switch {
	case host == "" && !auth && !tls && !insecurePublic:
		return net.JoinHostPort("127.0.0.1", port),
			"listening on loopback only because neither --auth-token-file nor --tls-cert is set; to serve other machines set both and name an interface in --addr (such as 0.0.0.0:" + port + ")", nil
	case isLoopback(host):
		if auth && tls {
			return addr, "", nil
		}
		// The note names only what is missing: with a token but no TLS pair
		// the server does authenticate.
		return addr, "listening on loopback only, without " + missingSecurity(auth, tls) + "; set " + missingFlags(auth, tls) + " to serve other machines", nil
	case auth && tls:
		return addr, "", nil
	case insecurePublic:
		return addr, "listening on " + orAll(host) + " without " + missingSecurity(auth, tls) + " (--insecure-public): anyone who reaches this address can read what is sent, or upload, run and drop graphs", nil
	}
	return "", "", fmt.Errorf("flight: --addr %s listens beyond loopback, which needs %s; set %s, or pass --insecure-public to serve without it",
		addr, missingSecurity(auth, tls), missingFlags(auth, tls))
}

func orAll(host string) string {
	if host == "" {
		return "every interface"
	}
	return host
}

func missingSecurity(auth, tls bool) string {
	switch {
	case !auth && !tls:
		return "authentication and TLS"
	case !auth:
		return "authentication"
	}
	return "TLS"
}

func missingFlags(auth, tls bool) string {
	switch {
	case !auth && !tls:
		return "--auth-token-file, --tls-cert and --tls-key"
	case !auth:
		return "--auth-token-file"
	}
	return "--tls-cert and --tls-key"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
