package benchsuite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// benchDisk runs g's matrix (every source, algorithm auto) once into no
// file, then p.DiskRounds times into an uncompressed Arrow IPC file in
// p.DiskDir as `pathctl run` does, each followed by plain sequential
// writes of the same number of bytes; every file is fsynced and removed.
// The disk's speed drifts between writes (its cache, the previous file's
// release), so the two take turns and the best of each is compared.
func benchDisk(ctx context.Context, g *pipeline.Graph, bg *GraphReport, p *Params, eng string) (*Disk, error) {
	if err := os.MkdirAll(p.DiskDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: disk directory: %w", err)
	}
	opt := pipeline.Options{Query: pipeline.Query{Algorithm: graph.Auto, Layout: arrowio.LayoutMatrix}, Resources: pipeline.Resources{Engine: eng, Threads: p.Threads, MemBudget: p.MemBudget, Devices: p.Devices, Tune: p.Tune}}
	q, err := pipeline.Prepare(g, opt)
	if err != nil {
		return nil, fmt.Errorf("bench: disk: %s matrix: %w", bg.Name, err)
	}
	// The same run into no file: what the pipeline alone takes.
	computeStart := time.Now()
	if _, err := p.Run(ctx, q, func(arrow.RecordBatch) error { return nil }); err != nil {
		return nil, fmt.Errorf("bench: disk: %s matrix: %w", bg.Name, err)
	}
	d := &Disk{Graph: bg.Name, Dir: p.DiskDir, ComputeSeconds: time.Since(computeStart).Seconds()}
	for range p.DiskRounds {
		seconds, err := arrowWrite(ctx, p, bg, q, d)
		if err != nil {
			return nil, err
		}
		d.ArrowRuns = append(d.ArrowRuns, seconds)
		if seconds, err = plainWrite(p.DiskDir, d.Bytes); err != nil {
			return nil, err
		}
		d.PlainRuns = append(d.PlainRuns, seconds)
	}
	d.ArrowSeconds, d.PlainSeconds = slices.Min(d.ArrowRuns), slices.Min(d.PlainRuns)
	if d.ArrowSeconds > 0 && d.PlainSeconds > 0 {
		d.ArrowRate, d.PlainRate = float64(d.Bytes)/d.ArrowSeconds, float64(d.Bytes)/d.PlainSeconds
		d.Ratio = d.ArrowRate / d.PlainRate
	}
	return d, nil
}

// arrowWrite runs q (a matrix) into an uncompressed Arrow IPC
// file in p.DiskDir as `pathctl run` does, records the file's size, engine and algorithm in d,
// removes the file and returns the seconds from create to the end of the
// close (fsync and rename included).
func arrowWrite(ctx context.Context, p *Params, bg *GraphReport, q *pipeline.Prepared, d *Disk) (float64, error) {
	path := filepath.Join(p.DiskDir, fmt.Sprintf("pathctl-bench-%s-%d.arrow", bg.Name, os.Getpid()))
	start := time.Now()
	w, err := arrowio.CreateResult(path, q.Schema(), arrowio.WriteOptions{Format: "arrow", Compression: arrowio.CompressionNone})
	if err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	sum, err := p.Run(ctx, q, w.Write)
	if err != nil {
		w.Abort()
		return 0, fmt.Errorf("bench: disk: %s matrix: %w", bg.Name, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	seconds := time.Since(start).Seconds()
	d.Bytes, d.Engine, d.Algorithm = w.BytesWritten(), sum.Engine, sum.Algorithm
	if err := os.Remove(path); err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	return seconds, nil
}

// plainWrite writes size bytes of pseudo-random data to a new file in dir
// in 8 MiB writes, starting the disk's writeback every 32 MiB as result
// files do (arrowio.WriteBehind), fsyncs, closes and removes it, and
// returns the seconds from create to the end of the fsync.
func plainWrite(dir string, size int64) (float64, error) {
	buf := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(buf); i += 8 {
		x := rng.Uint64()
		for j := range 8 {
			buf[i+j] = byte(x >> (8 * j))
		}
	}
	start := time.Now()
	f, err := os.CreateTemp(dir, "pathctl-bench-plain-*")
	if err != nil {
		return 0, fmt.Errorf("bench: disk: %w", err)
	}
	defer os.Remove(f.Name())
	out := arrowio.WriteBehind(f)
	for left := size; left > 0; {
		chunk := buf[:min(int64(len(buf)), left)]
		if _, err := out.Write(chunk); err != nil {
			f.Close()
			return 0, fmt.Errorf("bench: disk: plain write: %w", err)
		}
		left -= int64(len(chunk))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("bench: disk: plain write: %w", err)
	}
	seconds := time.Since(start).Seconds()
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("bench: disk: plain write: %w", err)
	}
	return seconds, nil
}
