package flight

// Background hierarchies: a stored graph that a run of auto on the CPU
// engine would build a contraction hierarchy for (pipeline's rule,
// Graph.HierarchyPays: road-like, exact weights, vertices enough to repay
// the build) gets one built in the background once it is loaded (uploaded,
// or read back after a restart or an eviction), kept with the graph for its
// queries (pipeline.Graph keeps it) and stored beside its table as
// data/NAME-<id>.ch, in the index format of pathctl index
// (hierarchy.Write). One build runs at a time, on a quarter of the cores,
// and holds no computation slot; queries that come before it is ready run
// as they would without it (auto does not wait for it; a query of the
// algorithm ch does). A drop or a replacement of the graph, and the
// server's stop, cancel its build. The file is written to tmp/, synced and
// renamed into data/ only while the graph's sidecar still names the same
// table, so a crash leaves either no hierarchy file or a complete one;
// hierarchy.Read checks that a stored file belongs to the graph it is read
// for, and one it refuses is removed and built again. A graph's listing
// (ListFlights) says where its hierarchy stands. The hierarchy costs about
// 4 times the CSR's memory (hierarchy.Hierarchy.Bytes), counted in
// --cache-bytes with its graph; --no-background-index turns the builds off
// (stored files are still read).

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/pathctl/pathctl/hierarchy"
	"github.com/pathctl/pathctl/pipeline"
)

// Where a graph's hierarchy stands, as its listing's "hierarchy" says
// (publicMeta.Hierarchy); "" where it has none and none is coming (the
// rule does not pick ch for it).
const (
	// HierarchyQueued: the graph waits for the background build.
	HierarchyQueued = "queued"
	// HierarchyBuilding: its build is under way.
	HierarchyBuilding = "building"
	// HierarchyReady: its hierarchy is stored beside it (and kept with the
	// graph once loaded); queries use it.
	HierarchyReady = "ready"
	// HierarchyFailed: the build gave up (too many shortcuts): the graph's
	// queries run the search kernels.
	HierarchyFailed = "failed"
)

// indexWorkers is how many goroutines one background build contracts on:
// a quarter of the cores, so that the queries keep the rest.
func indexWorkers() int { return max(1, runtime.GOMAXPROCS(0)/4) }

// indexJob is one graph's background build.
type indexJob struct {
	meta   GraphMeta
	g      *pipeline.Graph
	ctx    context.Context
	cancel context.CancelFunc
}

// indexer builds, stores and loads the hierarchies of stored graphs.
type indexer struct {
	store   *store
	log     *slog.Logger
	workers int
	// build is false with Config.NoBackgroundIndex: stored files are read,
	// none is built.
	build bool
	// ready is told of each hierarchy kept with a graph and its bytes (the
	// cache counts them).
	ready func(g *pipeline.Graph, bytes int64)

	ctx      context.Context // the server's life: its stop cancels every job
	stop     context.CancelFunc
	stopOnce sync.Once
	wake     chan struct{} // a job was queued
	done     chan struct{} // the worker ended
	mu       sync.Mutex
	queue    []*indexJob
	current  *indexJob
	states   map[string]string // by table file name (GraphMeta.Data)
	built    int               // hierarchies built (tests)
	readBack int               // hierarchies read from their files (tests)
}

// newIndexer starts the worker of the background builds.
func newIndexer(st *store, log *slog.Logger, build bool, ready func(*pipeline.Graph, int64)) *indexer {
	x := &indexer{store: st, log: log, workers: indexWorkers(), build: build, ready: ready,
		wake: make(chan struct{}, 1), done: make(chan struct{}), states: map[string]string{}}
	x.ctx, x.stop = context.WithCancel(context.Background())
	go x.run()
	return x
}

// close cancels the build under way and the queued ones, and waits for
// the worker, so that nothing is written to the data directory after it.
func (x *indexer) close() {
	x.stopOnce.Do(x.stop)
	<-x.done
}

// loaded is told of a graph just loaded as meta's table: uploaded
// (stored false), or read back from the data directory (stored true),
// whose hierarchy file, where there is one, it reads and keeps with g.
// Where g is left without one, it queues the background build.
func (x *indexer) loaded(meta GraphMeta, g *pipeline.Graph, stored bool) {
	if stored && x.readIndex(meta, g) {
		return
	}
	if !x.build {
		return
	}
	ctx, cancel := context.WithCancel(x.ctx)
	x.mu.Lock()
	x.queue = append(x.queue, &indexJob{meta: meta, g: g, ctx: ctx, cancel: cancel})
	x.states[meta.Data] = HierarchyQueued
	x.mu.Unlock()
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// readIndex reads meta's hierarchy file for g and keeps it with g; it
// reports false where there is none, and where hierarchy.Read refuses it
// (another graph's, or damaged), which it removes.
func (x *indexer) readIndex(meta GraphMeta, g *pipeline.Graph) bool {
	f, err := os.Open(x.store.indexPath(meta))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		x.log.Warn("flight: reading the graph's hierarchy", "graph", meta.Name, "error", err.Error())
		return false
	}
	defer f.Close()
	start := time.Now()
	h, err := hierarchy.Read(f, g.CSR)
	if err == nil {
		err = g.KeepHierarchy(h)
	}
	if err != nil {
		x.log.Warn("flight: removing a hierarchy file the graph does not take; building it again", "graph", meta.Name, "error", err.Error())
		x.store.removeIndex(meta)
		return false
	}
	x.mu.Lock()
	x.readBack++
	x.states[meta.Data] = HierarchyReady
	x.mu.Unlock()
	x.ready(g, h.Bytes())
	x.log.Info("flight: contraction hierarchy read", "graph", meta.Name, "bytes", h.Bytes(), "took", time.Since(start).String())
	return true
}

// forget cancels the builds of the tables stale reports true for (a
// dropped or replaced graph's) and forgets where they stood.
func (x *indexer) forget(stale func(data string) bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	kept := x.queue[:0]
	for _, job := range x.queue {
		if stale(job.meta.Data) {
			job.cancel()
		} else {
			kept = append(kept, job)
		}
	}
	clear(x.queue[len(kept):])
	x.queue = kept
	if x.current != nil && stale(x.current.meta.Data) {
		x.current.cancel()
	}
	for data := range x.states {
		if stale(data) {
			delete(x.states, data)
		}
	}
}

// state is where meta's hierarchy stands (HierarchyQueued …; "" for none).
func (x *indexer) state(meta GraphMeta) string {
	x.mu.Lock()
	st, ok := x.states[meta.Data]
	x.mu.Unlock()
	if ok {
		return st
	}
	if _, err := os.Stat(x.store.indexPath(meta)); err == nil {
		return HierarchyReady // stored, read with the graph's next load
	}
	return ""
}

// counts are the hierarchies built and read back so far.
func (x *indexer) counts() (built, readBack int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.built, x.readBack
}

// setState records where data's hierarchy stands; "" forgets it.
func (x *indexer) setState(data, st string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if st == "" {
		delete(x.states, data)
	} else {
		x.states[data] = st
	}
}

// run is the worker: one job at a time, in the order queued.
func (x *indexer) run() {
	defer close(x.done)
	for {
		x.mu.Lock()
		var job *indexJob
		if len(x.queue) > 0 {
			job = x.queue[0]
			x.queue[0] = nil
			x.queue = x.queue[1:]
		}
		x.current = job
		x.mu.Unlock()
		if job != nil {
			x.runJob(job)
			continue
		}
		select {
		case <-x.ctx.Done():
			return
		case <-x.wake:
		}
	}
}

// runJob builds the hierarchy of job's graph where the rule picks ch for
// it (or takes the one a query of ch built meanwhile), stores it beside
// the table and reports it ready.
func (x *indexer) runJob(job *indexJob) {
	defer job.cancel()
	meta, g := job.meta, job.g
	if current, ok := x.store.get(meta.Name); job.ctx.Err() != nil || !ok || current.Data != meta.Data {
		x.setState(meta.Data, "")
		return // dropped or replaced since it was queued
	}
	kept, _ := g.KeptHierarchy()
	if kept == nil {
		if pays, why := g.HierarchyPays(); !pays {
			x.setState(meta.Data, "")
			x.log.Debug("flight: no background hierarchy: auto would not build one", "graph", meta.Name, "reason", why)
			return
		}
	}
	x.setState(meta.Data, HierarchyBuilding)
	start := time.Now()
	h, err := g.BuildHierarchy(job.ctx, x.workers)
	switch {
	case job.ctx.Err() != nil: // dropped, replaced, or the server stops
		x.setState(meta.Data, "")
		return
	case err != nil:
		x.setState(meta.Data, HierarchyFailed)
		x.log.Info("flight: the graph has no contraction hierarchy; its queries run the search kernels", "graph", meta.Name, "error", err.Error())
		return
	}
	if kept == nil {
		x.mu.Lock()
		x.built++
		x.mu.Unlock()
	}
	x.ready(g, h.Bytes())
	took := time.Since(start)
	if err := x.persist(meta, h); err != nil {
		x.log.Warn("flight: the graph's hierarchy is kept in memory only", "graph", meta.Name, "error", err.Error())
	}
	x.setState(meta.Data, HierarchyReady)
	x.log.Info("flight: contraction hierarchy built", "graph", meta.Name, "arcs", h.Arcs(), "bytes", h.Bytes(), "took", took.String())
}

// persist writes h to tmp/, syncs it and stores it beside meta's table
// (store.commitIndex), unless meta was dropped or replaced meanwhile.
func (x *indexer) persist(meta GraphMeta, h *hierarchy.Hierarchy) error {
	f, err := x.store.createTemp(meta.Name, indexExt)
	if err != nil {
		return err
	}
	err = h.Write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	_, err = x.store.commitIndex(meta, f.Name())
	return err
}
