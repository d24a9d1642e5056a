//go:build linux

package gpu

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkPinnedReads measures how fast the host's cores read the
// driver's pinned memory (cuMemHostAlloc, where a GPU run's result blocks
// land) against ordinary memory: 4 GiB copied from a 64 MiB source, every
// core, 4 MiB at a time, into memory whose pages exist already (copy) or
// through process_vm_writev into this process (vm, as the matrix writer
// writes a result peer's memory). Run with `go test ./gpu -run XXX -bench
// PinnedReads -benchtime 2x`.
func BenchmarkPinnedReads(b *testing.B) {
	if _, err := Probe(); err != nil {
		b.Skip("no CUDA device: " + err.Error())
	}
	dv, err := openDevice(0)
	if err != nil {
		b.Fatal(err)
	}
	defer dv.close()
	const srcBytes, total, chunk = 64 << 20, 4 << 30, 4 << 20
	var h pinned
	if err := dv.do(func() error { return dv.ensurePinned(&h, srcBytes) }); err != nil {
		b.Fatal(err)
	}
	defer dv.do(func() error { return dv.freePinned(&h) })
	sources := map[string][]byte{"pinned": unsafe.Slice((*byte)(h.p), srcBytes), "heap": make([]byte, srcBytes)}
	for _, s := range sources {
		for i := range s {
			s[i] = byte(i)
		}
	}
	dst, err := unix.Mmap(-1, 0, total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.Skip(err)
	}
	defer unix.Munmap(dst)
	_ = unix.Madvise(dst, unix.MADV_HUGEPAGE)
	for i := 0; i < total; i += 4096 {
		dst[i] = 1
	}
	base := uintptr(unsafe.Pointer(&dst[0]))
	for _, src := range []string{"pinned", "heap"} {
		for _, how := range []string{"copy", "vm"} {
			b.Run(src+"/"+how, func(b *testing.B) {
				s := sources[src]
				b.SetBytes(total)
				for range b.N {
					for off := 0; off < total; off += srcBytes {
						pieces := make(chan int, srcBytes/chunk)
						for lo := 0; lo < srcBytes; lo += chunk {
							pieces <- lo
						}
						close(pieces)
						var wg sync.WaitGroup
						for range runtime.GOMAXPROCS(0) {
							wg.Add(1)
							go func() {
								defer wg.Done()
								for lo := range pieces {
									if how == "copy" {
										copy(dst[off+lo:off+lo+chunk], s[lo:lo+chunk])
										continue
									}
									local := []unix.Iovec{{Base: &s[lo]}}
									local[0].SetLen(chunk)
									remote := []unix.RemoteIovec{{Base: base + uintptr(off+lo), Len: chunk}}
									if n, err := unix.ProcessVMWritev(os.Getpid(), local, remote, 0); err != nil || n != chunk {
										b.Error(n, err)
										return
									}
								}
							}()
						}
						wg.Wait()
					}
				}
			})
		}
	}
}
