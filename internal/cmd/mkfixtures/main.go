// Command mkfixtures writes the sample graphs under testdata/:
//
//	go run ./internal/cmd/mkfixtures            # from the repository root
//	go run ./internal/cmd/mkfixtures -dir testdata
//
// sample.parquet, sample.arrow, sample.csv and sample.gr hold one weighted,
// directed graph of 2,000 vertices and 16,000 edges: a 40 × 50 grid whose
// neighbours are joined both ways by light edges (weights 1–10), plus 8,180
// random shortcuts with heavier weights (20–100). Vertex (r, c) has the id
// r·50 + c + 1, so that ids run 1..2000 in every format, DIMACS included.
// Columns are src, dst and weight, all int64. tiny.csv is an eight-edge
// graph with string ids for the documentation.
//
// The output is deterministic: the generator is seeded, and rerunning the
// command rewrites byte-identical files (the Parquet and Arrow files depend
// only on the arrow-go version in go.mod).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const (
	rows, cols = 40, 50
	numEdges   = 16000
	seed       = 20260101
)

type edge struct{ src, dst, weight int64 }

// sampleGraph builds the grid and its shortcuts, grid edges first.
func sampleGraph() []edge {
	rng := rand.New(rand.NewPCG(seed, seed))
	id := func(r, c int) int64 { return int64(r*cols+c) + 1 }
	var edges []edge
	for r := range rows {
		for c := range cols {
			if c+1 < cols {
				edges = append(edges,
					edge{id(r, c), id(r, c+1), int64(1 + rng.IntN(10))},
					edge{id(r, c+1), id(r, c), int64(1 + rng.IntN(10))})
			}
			if r+1 < rows {
				edges = append(edges,
					edge{id(r, c), id(r+1, c), int64(1 + rng.IntN(10))},
					edge{id(r+1, c), id(r, c), int64(1 + rng.IntN(10))})
			}
		}
	}
	n := rows * cols
	for len(edges) < numEdges {
		u, v := int64(rng.IntN(n))+1, int64(rng.IntN(n))+1
		if u == v {
			continue
		}
		edges = append(edges, edge{u, v, int64(20 + rng.IntN(81))})
	}
	return edges
}

func record(edges []edge) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, e := range edges {
		b.Field(0).(*array.Int64Builder).Append(e.src)
		b.Field(1).(*array.Int64Builder).Append(e.dst)
		b.Field(2).(*array.Int64Builder).Append(e.weight)
	}
	return b.NewRecordBatch()
}

func parquetBytes(rec arrow.RecordBatch) ([]byte, error) {
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf,
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(4096)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func arrowBytes(rec arrow.RecordBatch) ([]byte, error) {
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func csvBytes(edges []edge) []byte {
	var b bytes.Buffer
	b.WriteString("src,dst,weight\n")
	for _, e := range edges {
		b.WriteString(strconv.FormatInt(e.src, 10) + "," + strconv.FormatInt(e.dst, 10) + "," + strconv.FormatInt(e.weight, 10) + "\n")
	}
	return b.Bytes()
}

func dimacsBytes(edges []edge) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "c pathctl sample graph: %d x %d grid with random shortcuts (go run ./internal/cmd/mkfixtures)\n", rows, cols)
	fmt.Fprintf(&b, "p sp %d %d\n", rows*cols, len(edges))
	for _, e := range edges {
		fmt.Fprintf(&b, "a %d %d %d\n", e.src, e.dst, e.weight)
	}
	return b.Bytes()
}

// tinyCSV is a small road map with string ids for the documentation.
const tinyCSV = `src,dst,weight
amsterdam,berlin,6
amsterdam,paris,5
berlin,prague,4
paris,lyon,5
lyon,milan,4
prague,vienna,3
vienna,milan,8
milan,rome,6
`

func main() {
	dir := flag.String("dir", "testdata", "directory to write the fixtures to")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "mkfixtures:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	edges := sampleGraph()
	rec := record(edges)
	defer rec.Release()
	pq, err := parquetBytes(rec)
	if err != nil {
		return err
	}
	ar, err := arrowBytes(rec)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"sample.parquet": pq,
		"sample.arrow":   ar,
		"sample.csv":     csvBytes(edges),
		"sample.gr":      dimacsBytes(edges),
		"tiny.csv":       []byte(tinyCSV),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
