package flight

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The data directory holds three folders:
//
//	graphs/NAME.json   one sidecar per stored graph: the commit point
//	data/FILE.arrow    the uploaded tables, named by their sidecars
//	data/FILE.ch       a table's contraction hierarchy (index.go), where built
//	tmp/               uploads and hierarchy files in progress
//	lock               held (flock) by the running server; holds its pid
//
// A server locks the directory before it reads or removes anything, so a
// second server on the same directory stops before it can touch the first
// one's uploads. Recovery at start removes only what is provably garbage:
// files of tmp/ and unreferenced files of data/ last written before the
// lock was taken, when no server held it.
const (
	graphsDir  = "graphs"
	dataDir    = "data"
	tmpDir     = "tmp"
	sidecarExt = ".json"
	tableExt   = ".arrow"
	indexExt   = ".ch"
)

// GraphMeta is what the sidecar of a stored graph records, and what
// ListFlights reports in a FlightInfo's app metadata.
type GraphMeta struct {
	Name string `json:"name"`
	// Data is the file name of the table under data/.
	Data    string        `json:"data"`
	Options UploadOptions `json:"options"`
	// Vertices and Edges count the vertices and the rows of the table;
	// Arcs counts the arcs of the graph built from it (self-loops and
	// duplicates dropped, undirected rows doubled).
	Vertices int64 `json:"vertices"`
	Edges    int64 `json:"edges"`
	Arcs     int64 `json:"arcs"`
	Directed bool  `json:"directed"`
	// WeightType is the Arrow type of the weight column, "" when unweighted.
	WeightType string `json:"weight_type"`
	// IDType is the Arrow type of the vertex ids.
	IDType string `json:"id_type"`
	// DistType is the distance type of results.
	DistType string    `json:"dist_type"`
	Bytes    int64     `json:"bytes"`
	Stored   time.Time `json:"stored"`
	// Schema is the uploaded table's schema, IPC-serialized.
	Schema []byte `json:"schema"`
}

// store keeps the catalog of stored graphs in step with the data directory.
type store struct {
	dir string
	log *slog.Logger
	// locked is when this process took the directory's lock.
	locked time.Time

	mu     sync.Mutex
	graphs map[string]GraphMeta
}

// openStore opens (creating it if needed) the data directory, whose lock the
// caller took at time locked, removes what an interrupted upload left
// behind, and reads every sidecar.
func openStore(dir string, locked time.Time, log *slog.Logger) (*store, error) {
	if dir == "" {
		return nil, errors.New("flight: no data directory")
	}
	for _, sub := range []string{graphsDir, dataDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("flight: data directory: %w", err)
		}
	}
	s := &store{dir: dir, log: log, locked: locked, graphs: map[string]GraphMeta{}}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *store) path(sub, file string) string { return filepath.Join(s.dir, sub, file) }

// garbage reports whether a file of tmp/ or an unreferenced file of data/
// is provably left over: last written before the lock was taken, by a
// process that no longer holds the directory.
func (s *store) garbage(e fs.DirEntry) bool {
	info, err := e.Info()
	return err == nil && !info.ModTime().After(s.locked)
}

// recover empties tmp/ of what interrupted uploads left, loads the sidecars
// and deletes data files that no sidecar names (left by a crash between the
// data rename and the sidecar rename, or between a sidecar replacement and
// the old file's removal). Only files older than the lock are removed.
func (s *store) recover() error {
	tmps, err := os.ReadDir(filepath.Join(s.dir, tmpDir))
	if err != nil {
		return fmt.Errorf("flight: data directory: %w", err)
	}
	for _, e := range tmps {
		if !s.garbage(e) {
			s.log.Warn("keeping a temporary file newer than the data directory lock", "file", e.Name())
			continue
		}
		if err := os.RemoveAll(s.path(tmpDir, e.Name())); err != nil {
			return fmt.Errorf("flight: cleaning temporary files: %w", err)
		}
		s.log.Info("removed an interrupted upload", "file", e.Name())
	}
	sidecars, err := os.ReadDir(filepath.Join(s.dir, graphsDir))
	if err != nil {
		return fmt.Errorf("flight: data directory: %w", err)
	}
	referenced := map[string]bool{}
	for _, e := range sidecars {
		name, ok := strings.CutSuffix(e.Name(), sidecarExt)
		if !ok || e.IsDir() || ValidateName(name) != nil {
			s.log.Warn("ignoring a file that is not a graph sidecar", "file", filepath.Join(graphsDir, e.Name()))
			continue
		}
		meta, err := readSidecar(s.path(graphsDir, e.Name()))
		if err == nil && (meta.Name != name || meta.Data == "" || strings.ContainsAny(meta.Data, `/\`)) {
			err = fmt.Errorf("sidecar names graph %q and file %q", meta.Name, meta.Data)
		}
		if err == nil {
			_, err = os.Stat(s.path(dataDir, meta.Data))
		}
		if err != nil {
			s.log.Warn("ignoring a damaged graph", "graph", name, "err", err)
			continue
		}
		s.graphs[name] = meta
		referenced[meta.Data] = true
		referenced[indexFile(meta.Data)] = true
	}
	data, err := os.ReadDir(filepath.Join(s.dir, dataDir))
	if err != nil {
		return fmt.Errorf("flight: data directory: %w", err)
	}
	for _, e := range data {
		if !referenced[e.Name()] {
			if !s.garbage(e) {
				s.log.Warn("keeping unreferenced data newer than the data directory lock", "file", e.Name())
				continue
			}
			if err := os.RemoveAll(s.path(dataDir, e.Name())); err != nil {
				return fmt.Errorf("flight: cleaning unreferenced data: %w", err)
			}
			s.log.Info("removed data no graph refers to", "file", e.Name())
		}
	}
	return nil
}

func readSidecar(path string) (GraphMeta, error) {
	var meta GraphMeta
	b, err := os.ReadFile(path)
	if err != nil {
		return meta, err
	}
	err = json.Unmarshal(b, &meta)
	return meta, err
}

// list returns the stored graphs ordered by name.
func (s *store) list() []GraphMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]GraphMeta, 0, len(s.graphs))
	for _, m := range s.graphs {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b GraphMeta) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (s *store) get(name string) (GraphMeta, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.graphs[name]
	return m, ok
}

// dataPath is where the table of meta lies.
func (s *store) dataPath(meta GraphMeta) string { return s.path(dataDir, meta.Data) }

// indexFile is the name of the hierarchy file of the table named data:
// NAME-<16 hex>.ch beside NAME-<16 hex>.arrow.
func indexFile(data string) string { return strings.TrimSuffix(data, tableExt) + indexExt }

// indexPath is where the hierarchy file of meta's table lies, if built.
func (s *store) indexPath(meta GraphMeta) string { return s.path(dataDir, indexFile(meta.Data)) }

// createTemp opens a new file under tmp/ for an upload (ext ".arrow") or a
// hierarchy file (".ch").
func (s *store) createTemp(name, ext string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, tmpDir), name+"-*"+ext+".tmp")
	if err != nil {
		return nil, fmt.Errorf("flight: creating a temporary file: %w", err)
	}
	return f, nil
}

// commit stores the synced, closed table at tmpData as graph meta.Name,
// replacing a graph of that name. It fills meta.Data.
func (s *store) commit(meta *GraphMeta, tmpData string) error {
	id, err := randomHex(8)
	if err != nil {
		return err
	}
	meta.Data = meta.Name + "-" + id + tableExt
	sidecar, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("flight: encoding sidecar: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// 1. The table moves to data/ under a name no sidecar uses yet: until
	// step 2 a crash leaves it unreferenced, and the next start removes it.
	if err := os.Rename(tmpData, s.dataPath(*meta)); err != nil {
		return fmt.Errorf("flight: storing graph %q: %w", meta.Name, err)
	}
	if err := syncDir(filepath.Join(s.dir, dataDir)); err != nil {
		os.Remove(s.dataPath(*meta))
		return err
	}
	// 2. The sidecar replaces the old one in one rename: the commit.
	if err := writeFileAtomic(filepath.Join(s.dir, tmpDir), s.path(graphsDir, meta.Name+sidecarExt), sidecar); err != nil {
		os.Remove(s.dataPath(*meta))
		return fmt.Errorf("flight: storing graph %q: %w", meta.Name, err)
	}
	// 3. The old table is garbage now; a crash before its removal leaves it
	// unreferenced, and the next start removes it.
	if old, ok := s.graphs[meta.Name]; ok {
		s.removeFiles(old, "replaced")
	}
	s.graphs[meta.Name] = *meta
	return nil
}

// commitIndex stores the synced, closed hierarchy file at tmpIndex as the
// index of meta's table, where meta is still the stored version of its
// graph; otherwise (dropped or replaced meanwhile) it removes tmpIndex
// and reports false. A crash before the rename leaves it in tmp/, which
// the next start empties; after it, the file is complete.
func (s *store) commitIndex(meta GraphMeta, tmpIndex string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if current, ok := s.graphs[meta.Name]; !ok || current.Data != meta.Data {
		os.Remove(tmpIndex)
		return false, nil
	}
	if err := os.Rename(tmpIndex, s.indexPath(meta)); err != nil {
		os.Remove(tmpIndex)
		return false, fmt.Errorf("flight: storing the hierarchy of graph %q: %w", meta.Name, err)
	}
	return true, syncDir(filepath.Join(s.dir, dataDir))
}

// removeIndex removes the hierarchy file of meta's table (one that
// hierarchy.Read refused).
func (s *store) removeIndex(meta GraphMeta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Remove(s.indexPath(meta)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("could not remove a hierarchy file", "file", indexFile(meta.Data), "err", err)
	}
}

// removeFiles removes the table of a graph version no sidecar names any
// more, and its hierarchy file; a crash before leaves them unreferenced,
// and the next start removes them. why is "replaced" or "dropped".
func (s *store) removeFiles(old GraphMeta, why string) {
	if err := os.Remove(s.dataPath(old)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("could not remove a "+why+" table", "file", old.Data, "err", err)
	}
	if err := os.Remove(s.indexPath(old)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("could not remove a "+why+" graph's hierarchy", "file", indexFile(old.Data), "err", err)
	}
}

// drop removes graph name; it reports false when there is none.
func (s *store) drop(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	meta, ok := s.graphs[name]
	if !ok {
		return false, nil
	}
	if err := os.Remove(s.path(graphsDir, name+sidecarExt)); err != nil {
		return false, fmt.Errorf("flight: dropping graph %q: %w", name, err)
	}
	delete(s.graphs, name)
	if err := syncDir(filepath.Join(s.dir, graphsDir)); err != nil {
		s.log.Warn("could not sync the graphs directory", "err", err)
	}
	s.removeFiles(meta, "dropped")
	return true, nil
}

// writeFileAtomic writes b to a temporary file in tmp, syncs it and renames
// it to path, then syncs path's directory.
func writeFileAtomic(tmp, path string, b []byte) error {
	f, err := os.CreateTemp(tmp, filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	name := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the renames inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("flight: sync %s: %w", filepath.Base(dir), err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flight: sync %s: %w", filepath.Base(dir), err)
	}
	return nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("flight: random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
