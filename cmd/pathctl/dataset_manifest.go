// The manifest of a -o DIR/ dataset (dataset.go): its types, the graph's
// identity and the hashes it records, the comparison a resume makes with
// the prior run's, and reading and writing it.

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// datasetManifestFile is the manifest, partial or complete.
type datasetManifestFile struct {
	Version  int           `json:"version"`
	Complete bool          `json:"complete"`
	Graph    datasetGraph  `json:"graph"`
	Query    datasetQuery  `json:"query"`
	Schema   datasetSchema `json:"schema"`
	Blocks   int           `json:"blocks"`
	Vertices string        `json:"vertices,omitempty"` // matrix: the vertex order file
	Files    []datasetFile `json:"files"`
	Rows     int64         `json:"rows"`
	Bytes    int64         `json:"bytes"`
}

// datasetGraph is the graph's identity: a hash of its CSR arrays and
// vertex ids, and the load options that shaped them.
type datasetGraph struct {
	Hash       string `json:"hash"` // sha256 of the vertex ids and the CSR (offsets, targets, weights)
	Vertices   int    `json:"vertices"`
	Arcs       int64  `json:"arcs"`
	Undirected bool   `json:"undirected"`
	DistType   string `json:"dist_type"`
	SrcCol     string `json:"src_col"`
	DstCol     string `json:"dst_col"`
	WeightCol  string `json:"weight_col"`
	Unweighted bool   `json:"unweighted"`
}

// datasetQuery is what was asked of the graph; a resume must ask the same.
type datasetQuery struct {
	Layout           string   `json:"layout"`
	Format           string   `json:"format"`
	Compression      string   `json:"compression"`
	Algorithm        string   `json:"algorithm"`
	Sources          int      `json:"sources"`      // how many, after repeats are dropped
	SourcesHash      string   `json:"sources_hash"` // "all" for every vertex, else sha256 of their dense ids in order
	Targets          int      `json:"targets"`      // 0: every vertex
	TargetsHash      string   `json:"targets_hash,omitempty"`
	Cutoff           *float64 `json:"cutoff,omitempty"`
	K                int      `json:"k,omitempty"`
	Reverse          bool     `json:"reverse"`
	WithPredecessors bool     `json:"with_predecessors"`
	WithPaths        bool     `json:"with_paths"`
	Betweenness      string   `json:"betweenness,omitempty"` // the betweenness options, as text
	PartitionBy      string   `json:"partition_by"`          // "source_block" or "source" (dataset_partition.go)
	BlockSize        int      `json:"block_size"`
}

type datasetSchema struct {
	Text string `json:"text"` // arrow.Schema's String
	IPC  string `json:"ipc"`  // the schema as an Arrow IPC stream of no batch, base64
}

type datasetFile struct {
	Path  string `json:"path"` // relative to DIR, with slashes
	Block int    `json:"block"`
	First int    `json:"first_source"` // index of the block's first source in the sources
	Count int    `json:"sources"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// idsHash is the sha256 of dense ids, or "all" for every vertex.
func idsHash(ids []graph.VertexID, all bool) string {
	if all {
		return "all"
	}
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	for _, v := range ids {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		if len(buf) >= 4092 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// graphIdentity hashes the graph: its vertex ids (the names sources and
// rows are given by) and its CSR arrays, with the options that shaped them.
func graphIdentity(g *pipeline.Graph, c *cli.Context) datasetGraph {
	h := sha256.New()
	csr := g.CSR
	fmt.Fprintf(h, "pathctl graph v1 n=%d type=%s weighted=%t undirected=%t\n", csr.NumVertices, csr.Type, csr.Weighted, csr.Undirected)
	for i := 0; i < g.Table.Vertices.Len(); i++ {
		s := g.Table.Vertices.Format(int32(i))
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
		h.Write([]byte(s))
	}
	hashInts(h, csr.Offsets)
	hashInts(h, csr.Targets)
	switch w := csr.Weights.(type) {
	case []int32:
		hashInts(h, w)
	case []int64:
		hashInts(h, w)
	case []float32:
		hashFloats(h, w)
	case []float64:
		hashFloats(h, w)
	}
	return datasetGraph{
		Hash: hex.EncodeToString(h.Sum(nil)), Vertices: csr.NumVertices, Arcs: int64(csr.NumEdges()),
		Undirected: c.Bool("undirected"), DistType: g.DistType().String(),
		SrcCol: c.String("src-col"), DstCol: c.String("dst-col"), WeightCol: c.String("weight-col"), Unweighted: c.Bool("unweighted"),
	}
}

// hashInts writes the values of s, little-endian, to h.
func hashInts[T ~int32 | ~int64](h hash.Hash, s []T) {
	buf := make([]byte, 0, 1<<16)
	for _, x := range s {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(x)))
		if len(buf) > 1<<16-8 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
}

// hashFloats writes the bits of s, little-endian, to h.
func hashFloats[T ~float32 | ~float64](h hash.Hash, s []T) {
	buf := make([]byte, 0, 1<<16)
	for _, x := range s {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(float64(x)))
		if len(buf) > 1<<16-8 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
}

// schemaIPC is schema as an Arrow IPC stream of no batch, base64.
func schemaIPC(schema *arrow.Schema) (string, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("pathctl: serializing the schema: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// manifestDiff names the first field in which the run of prior differs
// from m's ("" when none): the graph's identity, then the query.
func manifestDiff(prior, m *datasetManifestFile) string {
	if prior.Version != m.Version {
		return fmt.Sprintf("manifest version %d there, %d here", prior.Version, m.Version)
	}
	if d := fieldDiff("graph", prior.Graph, m.Graph); d != "" {
		return d + " (another graph)"
	}
	if d := fieldDiff("query", prior.Query, m.Query); d != "" {
		return d + " (another query)"
	}
	if prior.Schema.Text != m.Schema.Text {
		return "schema differs: " + prior.Schema.Text + " there, " + m.Schema.Text + " here"
	}
	return ""
}

// fieldDiff compares two structs of one type field by field, by their
// JSON names, and says the first that differs.
func fieldDiff(what string, a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(fa, fb) {
			continue
		}
		name := strings.Split(va.Type().Field(i).Tag.Get("json"), ",")[0]
		show := func(x any) string {
			if p, ok := x.(*float64); ok {
				if p == nil {
					return "none"
				}
				return strconv.FormatFloat(*p, 'g', -1, 64)
			}
			if s, ok := x.(string); ok {
				return strconv.Quote(s)
			}
			return fmt.Sprint(x)
		}
		return fmt.Sprintf("%s.%s is %s there, %s here", what, name, show(fa), show(fb))
	}
	return ""
}

// readDatasetManifest reads the complete manifest of dir, else the
// partial one; a directory with neither is not a pathctl dataset.
func readDatasetManifest(dir string) (*datasetManifestFile, error) {
	for _, name := range []string{datasetManifest, datasetPartial} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pathctl: --resume: %w", err)
		}
		m := &datasetManifestFile{}
		if err := json.Unmarshal(data, m); err != nil {
			return nil, usagef("--resume: %s: not a pathctl manifest: %v", filepath.Join(dir, name), err)
		}
		if m.Query.PartitionBy == "" {
			m.Query.PartitionBy = partitionBySourceBlock // a manifest from before --partition-by
		}
		return m, nil
	}
	return nil, usagef("--resume: %s holds no %s or %s: not a pathctl dataset (give --overwrite to replace it)", dir, datasetManifest, datasetPartial)
}

// writeDatasetManifest writes the manifest name of dir, with the files of
// done in block order, through a temporary file renamed over it.
func writeDatasetManifest(dir, name string, m *datasetManifestFile, done map[int]datasetFile) error {
	m.Files, m.Rows, m.Bytes = m.Files[:0], 0, 0
	for _, b := range slices.Sorted(mapsKeys(done)) {
		f := done[b]
		m.Files = append(m.Files, f)
		m.Rows += f.Rows
		m.Bytes += f.Bytes
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("pathctl: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("pathctl: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("pathctl: writing %s: %w", filepath.Join(dir, name), err)
	}
	syncDir(dir) // dataset_space.go
	return nil
}

func mapsKeys(m map[int]datasetFile) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
