package main

// The part files of a dataset written on several cores: block b's query
// runs in the run's goroutine and hands its records to a goroutine of
// b's own that encodes them into b's file, so that the next block
// computes while earlier ones are still encoded. Parquet's encoding takes
// a core per column of a file, far below what the engine and the disk
// reach: parts written side by side add up
// (two at a time on 2 cores: 0.74 s against 1.70 s for two files of 11
// million rows). At most datasetWriters parts are in flight; the oldest
// is waited for first, and each is listed in the partial manifest once
// its file is in place, as before.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/pathctl/pathctl/arrowio"
)

// partQueue is the records a part's goroutine holds queued: the run's
// goroutine waits beyond it, which bounds the memory of a slow disk.
const partQueue = 2

// datasetWriters is the number of parts encoded at once: every core up to
// 8 for Parquet (encoding-bound), 2 for the other formats (the second
// overlaps the next block's computing with the last one's write).
func datasetWriters(format string) int {
	if format == "parquet" {
		return max(2, min(runtime.GOMAXPROCS(0), 8))
	}
	return 2
}

// partWriter is one part file, written by its own goroutine.
type partWriter struct {
	b         int
	rel, path string
	w         *arrowio.ResultWriter
	recs      chan arrow.RecordBatch
	done      chan struct{} // closed once the file is in place or abandoned
	// Set before recs closes: the run failed (the file is abandoned), and
	// the block's rows.
	abandon bool
	rows    int64
	// Set by the goroutine before done closes; failed holds err as soon as
	// a write fails, so that the run stops at its next record.
	err    error
	failed atomic.Pointer[error]
	file   datasetFile
}

// write encodes p's records into its file and renames it into place
// (its goroutine). A failed write drains the queue, so that the run's
// goroutine never waits on it.
func (p *partWriter) write(fault *datasetFault, first, count int) {
	defer close(p.done)
	for rec := range p.recs {
		if p.err == nil {
			if p.err = fault.noSpace("part", p.b, p.path); p.err == nil {
				p.err = p.w.Write(rec)
			}
			if p.err != nil {
				p.failed.Store(&p.err)
			}
			fault.at("part", p.b)
		}
		rec.Release()
	}
	if p.err != nil || p.abandon {
		p.w.Abort()
		return
	}
	if p.err = p.w.Close(); p.err != nil {
		return
	}
	syncDir(filepath.Dir(p.path))
	fault.at("renamed", p.b)
	p.file = datasetFile{Path: p.rel, Block: p.b, First: first, Count: count, Rows: p.rows, Bytes: p.w.BytesWritten()}
}

// emit queues rec for p's goroutine; once that goroutine has failed it
// returns its error, which ends the run. The goroutine drains the queue
// until it closes, so the send never waits on a failed writer for long.
func (p *partWriter) emit(rec arrow.RecordBatch) error {
	if err := p.failed.Load(); err != nil {
		return *err
	}
	p.rows += rec.NumRows()
	rec.Retain()
	p.recs <- rec
	return nil
}

// startBlock runs block b's sources into a part writer of its own and
// returns once the run is done; the part may still be encoding.
func (r *datasetRun) startBlock(b int) (*partWriter, error) {
	m := r.m
	first := b * m.Query.BlockSize
	count := min(m.Query.BlockSize, len(r.q.Sources())-first)
	rel := datasetPartPath(r.partitionDirs, b, r.width, r.ext) // dataset_partition.go
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("pathctl: %w", err)
	}
	block := r.q
	if r.opt.Layout != arrowio.LayoutNearest && !r.opt.Layout.IsBetweenness() {
		block = r.q.Slice(first, first+count)
	}
	r.blockProgress = r.prog.block(count)
	bw := r.wopt
	if r.opt.Layout == arrowio.LayoutMatrix {
		bw.MatrixRows = count
	}
	r.e.outputs.add(path) // a SIGQUIT removes its temporary file (signals.go)
	w, err := arrowio.CreateResult(path, r.schema, bw)
	if err != nil {
		return nil, fmt.Errorf("pathctl: %w", err)
	}
	p := &partWriter{b: b, rel: rel, path: path, w: w, recs: make(chan arrow.RecordBatch, partQueue), done: make(chan struct{})}
	go p.write(r.fault, first, count)
	// No source at all still writes one file, of no rows: the schema.
	var runErr error
	if count > 0 || r.opt.Layout.IsBetweenness() {
		_, runErr = block.Run(r.e.ctx, p.emit)
	}
	p.abandon = runErr != nil
	close(p.recs)
	if runErr != nil {
		<-p.done
		r.bar.finish()
		if p.err != nil {
			return nil, datasetWriteError(r.out, rel, p.err, len(r.done), m.Blocks)
		}
		return nil, datasetWriteError(r.out, rel, queryError(r.c, r.g, runErr), len(r.done), m.Blocks)
	}
	return p, nil
}

// finishPart waits for p and lists its file in the partial manifest.
func (r *datasetRun) finishPart(p *partWriter) error {
	m := r.m
	<-p.done
	if p.err != nil {
		return datasetWriteError(r.out, p.rel, p.err, len(r.done), m.Blocks)
	}
	r.done[p.b] = p.file
	r.computed++
	err := r.fault.beforeManifest(r.dir, datasetPartial, m, p.b)
	if err == nil {
		err = writeDatasetManifest(r.dir, datasetPartial, m, r.done)
	}
	if err != nil {
		delete(r.done, p.b) // its file stays; a resume computes it again
		return datasetWriteError(r.out, datasetPartial, err, len(r.done), m.Blocks)
	}
	return nil
}

// writeBlocks writes each block not yet complete, in order, up to
// datasetWriters parts at once, each listed in the partial manifest once
// its file is in place. On an error the parts in flight are abandoned
// (their temporary files removed) or, where complete, left for a resume.
func (r *datasetRun) writeBlocks() error {
	var flight []*partWriter
	fail := func(err error) error {
		for _, p := range flight {
			<-p.done
		}
		return err
	}
	for b := 0; b < r.m.Blocks; b++ {
		if _, ok := r.done[b]; ok {
			continue
		}
		// A kill planted in block b's part (the crash tests) finds every
		// earlier part in place, as it would without parts side by side,
		// so that what it leaves does not depend on timing.
		for len(flight) == datasetWriters(r.format) || (len(flight) > 0 && r.fault.is("kill", "part", b)) {
			if err := r.finishPart(flight[0]); err != nil {
				return fail(err)
			}
			flight = flight[1:]
		}
		p, err := r.startBlock(b)
		if err != nil {
			return fail(err)
		}
		flight = append(flight, p)
	}
	for len(flight) > 0 {
		if err := r.finishPart(flight[0]); err != nil {
			flight = flight[1:]
			return fail(err)
		}
		flight = flight[1:]
	}
	r.bar.finish()
	return nil
}
