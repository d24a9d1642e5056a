package arrowio

// Where a result goes. A regular file (or a new name) is written atomically:
// into a temporary file beside it, renamed over it on success. Paths that are
// not regular files are not replaced:
//
//   - a symbolic link is followed, link after link, and its final target is
//     what gets replaced (created when the link dangles), so the link stays;
//   - a character or block device or a FIFO (/dev/null, /dev/stdout, a named
//     pipe) is opened and written straight, as a shell redirection would;
//     nothing can be taken back there, so an aborted run leaves what it
//     wrote; so is a file reached through /proc (/dev/stdout redirected to
//     a file, /dev/fd/N or /proc/self/fd/N of a memfd that a parent process
//     passed in), which is truncated first;
//   - a directory or a socket is refused.
//
// Temporary files are named ".NAME.tmp-PID-HOST-RANDOM": PID is the writing
// process, HOST a hash of the host name and PID namespace that makes PID
// meaningful. A process killed outright (SIGKILL, a power cut) cannot remove
// its temporary file; the next writer into the same directory removes every
// such leftover whose HOST is its own and whose PID no longer runs. Leftovers
// of other hosts, and of processes that still run, are left alone.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSymlinkHops bounds the links followed from an output path, as the
// kernel's ELOOP limit does.
const maxSymlinkHops = 40

// outputTarget is where a result named path is written.
type outputTarget struct {
	path   string // the file to replace, or to write into when direct
	direct bool   // a device or FIFO: written in place, no temporary file
}

// resolveOutput follows path's symbolic links and says how to write there.
func resolveOutput(path string) (outputTarget, error) {
	// What the kernel finds at the end of the links decides first: links
	// of /proc (/dev/stdout -> /proc/self/fd/1 -> pipe:[N]) name no path
	// that could be resolved by hand.
	if fi, err := os.Stat(path); err == nil {
		mode := fi.Mode()
		switch {
		case mode.IsDir():
			return outputTarget{}, fmt.Errorf("arrowio: %s: is a directory; name an output file", path)
		case mode&(os.ModeCharDevice|os.ModeDevice|os.ModeNamedPipe) != 0:
			return outputTarget{path: path, direct: true}, nil
		case !mode.IsRegular():
			return outputTarget{}, fmt.Errorf("arrowio: %s: not a file, device or FIFO (%s); name an output file", path, mode.Type())
		}
	}
	p := path
	for hop := 0; ; hop++ {
		if throughProc(p) {
			// A file descriptor's link (/dev/stdout redirected to a
			// file): renaming over its target would leave the descriptor
			// on the old, emptied file, so the file is written in place.
			return outputTarget{path: path, direct: true}, nil
		}
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return outputTarget{path: p}, nil
		}
		if err != nil {
			return outputTarget{}, fmt.Errorf("arrowio: %s: %w", path, err)
		}
		mode := fi.Mode()
		switch {
		case mode&os.ModeSymlink != 0:
			if hop == maxSymlinkHops {
				return outputTarget{}, fmt.Errorf("arrowio: %s: more than %d levels of symbolic links", path, maxSymlinkHops)
			}
			link, err := os.Readlink(p)
			if err != nil {
				return outputTarget{}, fmt.Errorf("arrowio: %s: %w", path, err)
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(p), link)
			}
			p = link
			continue
		case mode.IsRegular():
			return outputTarget{path: p}, nil
		case mode.IsDir():
			return outputTarget{}, fmt.Errorf("arrowio: %s: is a directory; name an output file", path)
		case mode&(os.ModeCharDevice|os.ModeDevice|os.ModeNamedPipe) != 0:
			return outputTarget{path: p, direct: true}, nil
		}
		return outputTarget{}, fmt.Errorf("arrowio: %s: not a file, device or FIFO (%s); name an output file", path, mode.Type())
	}
}

// WrittenInPlace reports whether a result named path would be written
// straight into what path names (a device, a FIFO, a file descriptor's link
// such as /dev/stdout or /dev/fd/N) rather than replaced through a
// temporary file: such an output has no directory of its own to put other
// files beside. A path that cannot be resolved reports false.
func WrittenInPlace(path string) bool {
	t, err := resolveOutput(path)
	return err == nil && t.direct
}

// throughProc reports whether p is, or lies in a directory that resolves
// to, a place under /proc: /proc/self/fd/N, and /dev/fd/N (/dev/fd links to
// /proc/self/fd). Such a name is a file descriptor's link; its target (a
// memfd reads "/memfd:NAME (deleted)") is no path to write beside.
func throughProc(p string) bool {
	if strings.HasPrefix(p, "/proc/") {
		return true
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	return err == nil && (dir == "/proc" || strings.HasPrefix(dir, "/proc/"))
}

// tempPrefix is the start of the temporary file names of this process for
// the output base name: ".BASE.tmp-PID-HOST-".
func tempPrefix(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + hostTag() + "-"
}

// hostTag names the host and PID namespace in which pids of temporary file
// names are meaningful: 8 hex digits of a hash of the host name and the PID
// namespace's identity (where the system shows one).
func hostTag() string {
	h := fnv.New32a()
	name, _ := os.Hostname()
	h.Write([]byte(name))
	h.Write([]byte{0})
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		h.Write([]byte(ns))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// parseTempName returns the pid and host tag of a temporary file name
// written by tempPrefix; ok is false for any other name.
func parseTempName(name string) (pid int, host string, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return 0, "", false
	}
	i := strings.LastIndex(name, ".tmp-")
	if i < 1 {
		return 0, "", false
	}
	parts := strings.Split(name[i+len(".tmp-"):], "-")
	if len(parts) != 3 || len(parts[1]) != 8 || parts[2] == "" {
		return 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, parts[1], true
}

// removeStaleTemps removes the temporary files in dir left by processes of
// this host that no longer run, and returns their names. It is best effort:
// an unreadable directory or a file that cannot be removed is skipped.
func removeStaleTemps(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	self, host := os.Getpid(), hostTag()
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		pid, tag, ok := parseTempName(e.Name())
		if !ok || tag != host || pid == self || !processGone(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}
