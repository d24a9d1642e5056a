// Package flight is the Arrow Flight service behind `pathctl serve`.
//
// Clients upload edge tables with DoPut (descriptor path ["graphs", NAME]),
// list them with ListFlights, ask for the result schema with GetFlightInfo
// and stream shortest-path results with DoGet. The request and the upload
// options are JSON documents that use the CLI's option names:
//
//	upload:  {"src_col": "src", "dst_col": "dst", "weight_col": "weight",
//	          "unweighted": false, "directed": true, "dist_type": ""}
//	query:   {"graph": "roads", "algorithm": "auto", "sources": ["a", 7],
//	          "layout": "pairs", "with_predecessors": false, "engine": "auto"}
//
// Direction may also be written "undirected": true, the CLI's spelling;
// both keys together must agree. An upload may say its size beside its
// options, "expect": {"rows": R, "bytes": B}: its memory is then reserved
// whole before its batches are read (UploadExpect).
//
// Upload options travel as the app metadata of the first message of the
// DoPut stream (the schema message or the first batch), or, with a command
// descriptor, as the command itself with the graph name under "graph".
// A query travels as a command descriptor (GetFlightInfo, GetSchema) or as
// the ticket (DoGet). DoAction knows "drop" (body: a graph name) and "info"
// (the same JSON as `pathctl info --json`).
//
// Graphs are stored under the data directory so that they survive a
// restart: the uploaded table as an Arrow IPC file under data/ (dictionary
// columns decoded, since an IPC file holds one dictionary per column while
// a stream may change it batch by batch), and a JSON sidecar with its
// options and counts under graphs/NAME.json. The sidecar is the commit
// point: it is written to tmp/, synced and renamed into place only after
// the table has been validated and synced, so a crash at any moment leaves
// every graph either completely stored or absent. Before it touches the
// directory the server takes an exclusive flock on DATA_DIR/lock (a second
// server on the directory fails with DataDirInUseError); then it removes
// the files of tmp/ and the data files no sidecar names that are older
// than the lock, and only those. An upload to
// an existing name replaces the graph; the old table goes once the new
// sidecar is in place. Stored graphs are read back on first use and stay
// in memory until dropped or replaced, or until Config.CacheBytes (8 GiB)
// needs their room: the graphs used least recently are then forgotten and
// read back by their next query.
//
// Computations share the machine through Config.MaxConcurrent slots,
// handed out by a queue that is fair among clients (a client's second query
// waits behind the other clients' first); Config.MaxQuerySeconds and
// Config.MaxQueryPairs bound one query. Uploads are bounded by what they
// decode to (Config.MaxUploadBytes): every message is checked with
// arrowio.IPCMessageBytes before arrow-go allocates for it. Runs on the GPU
// share one engine (pipeline.NewSharedGPU), opened by the first of them and
// closed when the server stops, and take turns on it. A cached graph's CSR
// stays resident on that device between queries (resident.go): made so by
// its first GPU query, or built there when the graph is loaded while the
// device is open; its device bytes count in Config.CacheBytes, and it is
// freed with its cache entry (eviction, drop, replacement, shutdown).
// Config.NoResidentCSR turns this off.
// A loaded graph for which auto on the CPU engine would build a
// contraction hierarchy (road-like, from every source) gets one built in
// the background, one graph at a time, kept with it and stored beside its
// table (index.go); queries of auto that come before it is ready do not wait for
// it, and a restart reads it back. Config.NoBackgroundIndex turns the
// builds off.
// Over several devices (Config.Devices) each run takes an idle one of a
// pool (pipeline.NewGPUPool), and only the shared device keeps resident CSRs.
// A client that cancels or disconnects stops its job. Results are sent in
// messages of at most Config.MaxBatchBytes (3 MiB) with framing, under the 4 MiB
// that gRPC clients accept by default, each body copied once before gRPC
// sends it (sender.go), over connections with large buffers and windows
// (transport.go). Every call is logged in one line: method, graph,
// algorithm, engine, rows, bytes, time, status code, peer, and for DoGet
// engine_time (what the stream waited for the engine) and send_time. Errors carry
// gRPC status codes a client can act on: INVALID_ARGUMENT for malformed
// requests and bad input, NOT_FOUND for unknown graphs, FAILED_PRECONDITION
// for negative weights and negative cycles, RESOURCE_EXHAUSTED for limits
// (the message names the limit), UNAUTHENTICATED for missing or wrong
// tokens.
//
// Authentication, when Config.AuthTokenFile is set, is HTTP-style basic then
// bearer, as pyarrow's FlightClient.authenticate_basic_token and arrow-go's
// Client.AuthenticateBasicToken speak it: the Handshake carries
// "authorization: Basic base64(user:token)" (any user name; the password is
// the file's token) and answers with "authorization: Bearer <session>" in
// its trailers; later calls send that header. Sessions are random, expire
// after Config.SessionTTL (12 h) and live in memory only; the file's token
// is never accepted as a bearer token. Beyond loopback the server needs
// authentication and TLS both, unless Config.InsecurePublic.
//
// Files, one line each:
//
//   - auth.go: basic-then-bearer authentication and the session tokens
//   - budget.go: the server-wide memory budget (--max-memory) of uploads and queries
//   - cache.go: stored graphs kept loaded between queries, up to --cache-bytes
//   - clip.go: how much of a client's input an error message quotes
//   - config.go: Config and its defaults, the flags of pathctl serve
//   - doc.go: this overview
//   - index.go: the contraction hierarchies of loaded graphs, built in the background and stored beside them
//   - intercept.go: the log line of each call
//   - lock.go: the data directory's exclusive lock
//   - names.go: graph names and what is accepted
//   - query.go: DoGet and GetFlightInfo: a ticket's query run on its graph
//   - query_narrow.go: the ticket keys of narrow queries (targets, cutoff, k, reverse, paths)
//   - query_betweenness.go: the ticket keys of the betweenness layout (normalized, endpoints, seed; k its sample)
//   - querymem.go: the memory a query reserves for its result records
//   - queue.go: the computation slots (--max-concurrent), fair among clients
//   - request.go: UploadOptions and Query, the JSON of uploads and tickets
//   - resident.go: CSRs kept on the server's device between a graph's queries
//   - sender.go: the DoGet result stream, one copy of each batch's body
//   - sendwatch.go: noticing a result stream whose reader stopped reading
//   - server.go: Server: the gRPC server, the store and the job queue
//   - status.go: errors turned into gRPC statuses
//   - store.go: the data directory: stored graphs, atomic writes, recovery
//   - transport.go: gRPC transport tuning of the Flight streams
//   - upload.go: DoPut: an edge table decoded, bounded and stored
//   - upload_memory.go: an upload's reservation of --max-memory, and of its declared size
package flight
