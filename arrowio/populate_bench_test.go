//go:build linux

package arrowio

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// populateBenchBytes is the size of the file BenchmarkPopulateShmem
// populates: PATHCTL_POPULATE_BYTES, else 2 GiB.
func populateBenchBytes() int {
	if s := os.Getenv("PATHCTL_POPULATE_BYTES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n &^ (pageSize - 1)
		}
	}
	return 2 << 30
}

// populateWays are the ways BenchmarkPopulateShmem gives a shared mapping
// of a file in memory its pages, as the matrix writer must before the
// values land: what each does to one chunk of the mapping.
var populateWays = []struct {
	name string
	// huge asks for huge pages on the mapping first (MADV_HUGEPAGE).
	huge bool
	// fallocate allocates the file's pages first, in one call on one
	// core (fallocate(2) on the memfd), outside the chunks.
	fallocate bool
	chunk     func(b []byte) error
}{
	{name: "touch", chunk: touchPages},
	{name: "populate", chunk: populateWrite},
	{name: "huge+touch", huge: true, chunk: touchPages},
	{name: "huge+populate", huge: true, chunk: populateWrite},
	{name: "fallocate+touch", fallocate: true, chunk: touchPages},
	{name: "fallocate+populate", fallocate: true, chunk: populateWrite},
}

// touchPages writes one byte in every page of b: a fault per page.
func touchPages(b []byte) error {
	for i := 0; i < len(b); i += pageSize {
		b[i] = 1
	}
	return nil
}

// populateWrite populates b for writing in one call.
func populateWrite(b []byte) error { return unix.Madvise(b, unix.MADV_POPULATE_WRITE) }

// BenchmarkPopulateShmem measures how fast the pages of a memfd (or, with
// PATHCTL_POPULATE_DIR, a file there: /dev/shm) are allocated and mapped
// for writing, on 1 core and on every core (chunks of
// mappedPrefillChunk): the cost the matrix writer's prefill, and a
// cuMemHostRegister of the mapping, pay before any value lands. The
// file is new each iteration; GB/s counts its bytes over the time from
// sizing it to its last page (its removal is not timed).
func BenchmarkPopulateShmem(b *testing.B) {
	size := populateBenchBytes()
	cores := runtime.GOMAXPROCS(0)
	for _, way := range populateWays {
		for _, workers := range []int{1, cores} {
			b.Run(fmt.Sprintf("%s/cores=%d", way.name, workers), func(b *testing.B) {
				for b.Loop() {
					populateOnce(b, size, workers, way.huge, way.fallocate, way.chunk)
				}
				b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// populateOnce sizes a new file in memory to size bytes, maps it, and
// populates it with chunk on workers goroutines; the timer runs from the
// sizing to the last page populated (not over the file's removal).
func populateOnce(b *testing.B, size, workers int, huge, falloc bool, chunk func([]byte) error) {
	b.StopTimer()
	f := populateFile(b)
	defer func() {
		b.StopTimer()
		f.Close()
		b.StartTimer()
	}()
	b.StartTimer()
	if falloc {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(size)); err != nil {
			b.Skipf("fallocate: %v", err)
		}
	} else if err := f.Truncate(int64(size)); err != nil {
		b.Fatal(err)
	}
	m, err := mapFile(f, int64(size))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		b.StopTimer()
		unmapFile(m)
		b.StartTimer()
	}()
	if huge {
		if err := unix.Madvise(m, unix.MADV_HUGEPAGE); err != nil {
			b.Logf("MADV_HUGEPAGE: %v", err)
		}
	}
	pieces := (size + mappedPrefillChunk - 1) / mappedPrefillChunk
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				p := i
				i++
				next.Unlock()
				if p >= pieces {
					return
				}
				if err := chunk(m[p*mappedPrefillChunk : min(size, (p+1)*mappedPrefillChunk)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// populateFile is a new memfd, or a new file in PATHCTL_POPULATE_DIR,
// removed at once (its pages go when it is closed).
func populateFile(b *testing.B) *os.File {
	if dir := os.Getenv("PATHCTL_POPULATE_DIR"); dir != "" {
		f, err := os.CreateTemp(dir, "pathctl-populate-*")
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(f.Name())
		return f
	}
	fd, err := unix.MemfdCreate("pathctl-populate", unix.MFD_CLOEXEC)
	if err != nil {
		b.Skipf("no memfd here: %v", err)
	}
	return os.NewFile(uintptr(fd), "memfd")
}
