package arrowio

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f, shared and writable.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

func unmapFile(b []byte) error { return unix.Munmap(b) }

// inMemoryFile reports whether f is a file whose pages live in memory only
// (a memfd, a file on tmpfs or hugetlbfs): mapping it costs no disk I/O.
func inMemoryFile(f *os.File) bool {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return fs.Type == unix.TMPFS_MAGIC || fs.Type == unix.HUGETLBFS_MAGIC
}

// adviseHugePages asks for huge pages under b (a mapping of a memfd or a
// tmpfs file): where the system lets shared memory have them
// (/sys/kernel/mm/transparent_hugepage/shmem_enabled "advise" or
// "within_size"), a matrix takes 512 times fewer page faults. Elsewhere
// the advice is ignored.
func adviseHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }

// prefault allocates and maps the pages wholly inside b for writing, in
// one call (MADV_POPULATE_WRITE, Linux 5.14) rather than a fault per page
// as a copy touches them. A file system without room for them is an
// error; a kernel without the call (EINVAL) leaves the pages to the copy.
func prefault(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := (start + pageSize - 1) &^ (pageSize - 1)
	hi := (start + uintptr(len(b))) &^ (pageSize - 1)
	if hi <= lo {
		return nil
	}
	err := unix.Madvise(b[lo-start:hi-start], unix.MADV_POPULATE_WRITE)
	if err == nil || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return fmt.Errorf("allocating the result's pages: %w", err)
}

const pageSize = 4096
