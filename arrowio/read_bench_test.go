package arrowio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchRecords makes m edges in batches of 64Ki rows: dense ids 0..n-1, or
// sparse random int64 ids, or string ids; int64 weights.
func benchRecords(b testing.TB, kind string, m, n int) (*arrow.Schema, []arrow.RecordBatch) {
	rng := rand.New(rand.NewPCG(1, 2))
	idType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if kind == "string" {
		idType = arrow.BinaryTypes.String
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "src", Type: idType}, {Name: "dst", Type: idType}, {Name: "weight", Type: arrow.PrimitiveTypes.Int64}}, nil)
	pool := make([]int64, n)
	for i := range pool {
		pool[i] = int64(i)
		if kind != "dense" {
			pool[i] = int64(rng.Uint64() >> 1)
		}
	}
	var recs []arrow.RecordBatch
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for lo := 0; lo < m; lo += 1 << 16 {
		for i := lo; i < min(m, lo+1<<16); i++ {
			for c := 0; c < 2; c++ {
				id := pool[rng.IntN(n)]
				if kind == "string" {
					bld.Field(c).(*array.StringBuilder).Append("v" + strconv.FormatInt(id, 36))
				} else {
					bld.Field(c).(*array.Int64Builder).Append(id)
				}
			}
			bld.Field(2).(*array.Int64Builder).Append(int64(rng.IntN(100)))
		}
		recs = append(recs, bld.NewRecordBatch())
	}
	return schema, recs
}

func BenchmarkEdgesFromRecords(b *testing.B) {
	const m, n = 1 << 21, 1 << 18
	for _, kind := range []string{"dense", "sparse", "string"} {
		b.Run(kind, func(b *testing.B) {
			schema, recs := benchRecords(b, kind, m, n)
			defer releaseAll(recs)
			b.ResetTimer()
			for b.Loop() {
				rr, _ := array.NewRecordReader(schema, recs)
				if _, err := EdgesFromRecords(rr, "bench", ReadOptions{}); err != nil {
					b.Fatal(err)
				}
				rr.Release()
			}
			b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

func BenchmarkReadFormats(b *testing.B) {
	const m, n = 1 << 20, 1 << 17
	schema, recs := benchRecords(b, "sparse", m, n)
	defer releaseAll(recs)
	var text bytes.Buffer
	text.WriteString("src,dst,weight\n")
	for _, r := range recs {
		s, d, w := r.Column(0).(*array.Int64), r.Column(1).(*array.Int64), r.Column(2).(*array.Int64)
		for i := 0; i < int(r.NumRows()); i++ {
			fmt.Fprintf(&text, "%d,%d,%d\n", s.Value(i), d.Value(i), w.Value(i))
		}
	}
	inputs := map[string][]byte{
		"edges.parquet": writeParquetRows(b, schema, recs, 1<<18),
		"edges.arrow":   writeIPCFile(b, schema, recs),
		"edges.arrows":  writeIPCStream(b, schema, recs),
		"edges.csv":     text.Bytes(),
	}
	strSchema, strRecs := benchRecords(b, "string", m, n)
	defer releaseAll(strRecs)
	inputs["strings.parquet"] = writeParquetRows(b, strSchema, strRecs, 1<<18)
	for _, name := range []string{"edges.parquet", "edges.arrow", "edges.arrows", "edges.csv", "strings.parquet"} {
		b.Run(name, func(b *testing.B) {
			data := inputs[name]
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ReadEdgesFrom(bytes.NewReader(data), name, ReadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

func BenchmarkSortKeysWith(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	orig := make([]int64, 1<<22)
	for i := range orig {
		orig[i] = int64(rng.Uint64() >> 1)
	}
	keys := make([]int64, len(orig))
	pos := make([]uint32, len(orig))
	for b.Loop() {
		copy(keys, orig)
		sortKeysWith(keys, pos)
	}
	b.ReportMetric(float64(len(orig))*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkDenseIntIDs ranks the ids of 16.8 million edges drawn over a
// million vertices (R-MAT 20's shape) through the table: the keys' range,
// the marks and the ranks.
func BenchmarkDenseIntIDs(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := 16 << 20
	src, dst := make([]int64, m), make([]int64, m)
	for i := range src {
		src[i], dst[i] = rng.Int64N(1<<20), rng.Int64N(1<<20)
	}
	b.ResetTimer()
	for range b.N {
		if _, _, _, err := denseIntIDs(src, dst, "x", "src", "dst"); err != nil {
			b.Fatal(err)
		}
	}
}
