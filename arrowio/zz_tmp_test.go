package arrowio

import (
	"bytes"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestZZHang(t *testing.T) {
	ipcBodySizeLimit = 64 << 20
	maxVertexCount = 1 << 20
	var seeds [][]byte
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, w := range []func(testing.TB, *arrow.Schema, []arrow.RecordBatch) []byte{writeIPCFile, writeIPCStream, writeParquet} {
		e := randomIntIDs(rng, arrow.PrimitiveTypes.Int64, 10, 6)
		e.weights = randomWeights(rng, arrow.PrimitiveTypes.Int64, 10)
		schema, recs := e.records(t, mem, [3]string{"src", "dst", "weight"}, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, 10)
		seeds = append(seeds, w(t, schema, recs))
	}
	debug.SetTraceback("all")
	for iter := 0; iter < 3000; iter++ {
		s := seeds[iter%3]
		data := bytes.Clone(s)
		for k := 0; k < 1+rng.IntN(4); k++ {
			data[rng.IntN(len(data))] = byte(rng.Uint32())
		}
		format := []string{"arrow", "arrows", "parquet"}[iter%3]
		done := make(chan struct{})
		st := time.Now()
		go func() {
			defer close(done)
			ReadEdgesFrom(bytes.NewReader(data), "x", ReadOptions{Format: format})
		}()
		select {
		case <-done:
			if d := time.Since(st); d > 200*time.Millisecond {
				t.Logf("iter %d %s slow %v", iter, format, d)
			}
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/hang.bin", data, 0o644)
			panic("hang " + format)
		}
	}
}
