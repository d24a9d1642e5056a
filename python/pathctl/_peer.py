"""The result peer: a matrix that the binary writes straight into this
process's memory (``process_vm_writev``), into an anonymous mapping made
here at the size the binary asks for over a socket pair, with threads that
populate its pages ahead of the binary's writes.

Apart from the rest of the handoff because it is a protocol of its own
(arrowio.WriteOptions.ResultPeer) with its own threads; ``_handoff`` falls
back to the memfd where the peer is declined.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import os
import socket
import sys
import threading
from typing import Any, Callable, List, Optional, Tuple

from . import _errors

log = logging.getLogger("pathctl")

# PATHCTL_RESULT_PEER=off keeps a matrix in the memfd instead of having the
# binary write it into this process's memory.
RESULT_PEER_ENV = "PATHCTL_RESULT_PEER"


def _result_peer_wanted() -> bool:
    want = os.environ.get(RESULT_PEER_ENV, "").strip().lower()
    if want not in ("", "auto", "on", "off"):
        raise _errors.UsageError(f"{RESULT_PEER_ENV}={want!r}: want auto, on or off")
    _populate_workers()  # a bad setting is the caller's error, raised here
    return want != "off" and sys.platform.startswith("linux") and hasattr(socket, "socketpair")


# prctl(PR_SET_PTRACER, pid): lets pid write into this process's memory
# where Yama's ptrace_scope 1 would allow only the parent's ancestors to.
_PR_SET_PTRACER = 0x59616D61
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)


class _ResultPeer:
    """This process's end of a binary's --result-peer socket: a thread that
    answers its requests for memory with anonymous mappings (see
    arrowio.WriteOptions.ResultPeer for the exchange) and keeps the result
    once the binary says it is done."""

    def __init__(self, out: Optional[Any] = None) -> None:
        # out: a C-contiguous, writable numpy array the values may go into
        # (distance_matrix's out=); values_in_out says whether they did.
        self._out = out
        self.values_in_out = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock = ours
        # The binary's end, a plain descriptor that the Run passes (and
        # closes with its memfds once the binary holds its own copy).
        self.child_fd = theirs.detach()
        self._mapping: Optional[mmap.mmap] = None
        self._size: Optional[int] = None
        self._why: Optional[str] = None
        self._thread: Optional[threading.Thread] = None
        self._stop_populating = lambda: None
        self._populator: Optional[_Populator] = None

    def start(self, pid: int) -> None:
        if self._out is None:  # out's pages are there already
            self._populator = _Populator(_populate_workers())
            self._stop_populating = self._populator.stop
        self._thread = threading.Thread(target=self._serve, args=(pid,), daemon=True)
        self._thread.start()

    def _serve(self, pid: int) -> None:
        try:
            with self._sock, self._sock.makefile("rwb", buffering=0) as conn:
                for raw in conn:
                    verb, _, arg = raw.decode("ascii", "replace").strip().partition(" ")
                    if verb in ("size", "grow"):
                        size, _, values = arg.partition(" ")
                        conn.write(self._grant(verb, int(size), pid, values).encode("ascii"))
                    elif verb == "done":
                        self._size = int(arg)
                        break  # nothing follows; the binary may still be exiting
                    elif verb == "fallback":
                        self._why = arg
                        self._mapping = None
                        log.debug("pathctl: the matrix comes through the memfd: %s", arg)
        except Exception as exc:  # noqa: BLE001 - closing the socket tells the binary
            self._why = str(exc)
            self._size = None

    def _grant(self, verb: str, size: int, pid: int, values: str = "") -> str:
        """The answer to "size N VOFF VLEN" or "grow N VOFF VLEN": a new
        mapping of N bytes (or this one grown), and the out array for the
        VLEN bytes of values where it has exactly that many."""
        try:
            fields = values.split()
            values_len = int(fields[1]) if len(fields) == 2 else -1
            into_out = self._out is not None and self._out.nbytes == values_len
            if verb == "size" or self._mapping is None:
                self._mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
                if hasattr(mmap, "MADV_HUGEPAGE"):
                    try:
                        self._mapping.madvise(mmap.MADV_HUGEPAGE)
                    except OSError:
                        pass
                _allow_writes_from(pid)
                if self._populator is not None and not into_out:
                    self._populator.begin(_address_of(self._mapping), size)
            else:
                self._stop_populating()  # its addresses are about to move
                self._mapping.resize(size)  # mremap: the bytes so far stay
            address = _address_of(self._mapping)
            if into_out:
                self.values_in_out = True
                return f"addr {os.getpid()} {address:x} {self._out.ctypes.data:x}\n"
            return f"addr {os.getpid()} {address:x}\n"
        except Exception as exc:  # noqa: BLE001 - the binary must get an answer
            self._why = str(exc)
            self._mapping = None
            return "no\n"

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
        self._stop_populating()  # before the mapping can go

    def result(self) -> Tuple[Optional[mmap.mmap], int]:
        """The mapping and the result's size, once the binary has exited 0
        and said done; (None, 0) where it wrote the memfd instead."""
        self.join()
        if self._size is None or self._mapping is None:
            return None, 0
        return self._mapping, self._size


# PATHCTL_PEER_POPULATE=N: threads that populate a granted mapping (0: none;
# default half the cores, at most 8).
POPULATE_ENV = "PATHCTL_PEER_POPULATE"
_MADV_POPULATE_WRITE = 23  # Linux 5.14
_POPULATE_CHUNK = 64 << 20


def _populate_workers() -> int:
    want = os.environ.get(POPULATE_ENV, "").strip()
    if want:
        try:
            return max(0, int(want))
        except ValueError:
            raise _errors.UsageError(f"{POPULATE_ENV}={want!r}: want a number of threads") from None
    return max(1, min(8, (os.cpu_count() or 2) // 2))


def _populate(base: int, size: int, workers: int) -> Callable[[], None]:
    """Populate [base, base+size) with a _Populator of workers threads;
    returns its stop."""
    populator = _Populator(workers)
    populator.begin(base, size)
    return populator.stop


class _Populator:
    """Threads that give the pages of a range their memory from the end
    backwards (madvise through ctypes releases the GIL), while the binary
    writes from the start: the first touch of fresh memory (allocating and
    zeroing a page) is most of what a write into it costs, and here it
    runs beside the binary's reading of the graph and its kernels. (H100
    host, R-MAT 16: the binary's writes took 2.5 s with 8 threads
    populating against 4.0 s without, in one run.) A kernel without
    MADV_POPULATE_WRITE refuses the call: nothing is populated, and the
    binary's writes fault the pages in themselves.

    The threads are made before the range is known (when the binary
    starts), since making a thread maps its stack: a mapping made while
    other threads populate waits for their calls to end, and so, behind
    it, does every fault of the binary's writes (the process's memory map
    lock favours a waiting writer). Started in the grant, 8 of them held
    the answer to the binary 0.14-0.67 s (H100 host, R-MAT 16;
    BENCHMARKS.md, "Issue 16: `distance_matrix` from a pyarrow Table")."""

    def __init__(self, workers: int) -> None:
        self._lock = threading.Lock()
        self._go = threading.Event()
        self._pieces: List[int] = []
        self._range = (0, 0)
        self._madvise = None
        if workers <= 0:
            self._threads: List[threading.Thread] = []
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._madvise = libc.madvise
            self._madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        except (OSError, AttributeError):
            self._threads = []
            return
        self._threads = [threading.Thread(target=self._work, daemon=True, name="pathctl-populate")
                         for _ in range(workers)]
        for t in self._threads:
            t.start()

    def begin(self, base: int, size: int) -> None:
        """Populate [base, base+size) (once; a later call does nothing)."""
        with self._lock:
            if self._go.is_set():
                return
            end = size - size % mmap.PAGESIZE
            self._range = (base, end)
            self._pieces = list(range(0, end, _POPULATE_CHUNK))
        self._go.set()

    def _work(self) -> None:
        self._go.wait()
        base, end = self._range
        while True:
            with self._lock:
                if not self._pieces:
                    return
                lo = self._pieces.pop()
            if self._madvise(base + lo, min(_POPULATE_CHUNK, end - lo), _MADV_POPULATE_WRITE) != 0:
                with self._lock:
                    self._pieces.clear()  # refused (an old kernel, no memory): stop
                return

    def stop(self) -> None:
        """Stop the threads, populating or still waiting, and wait for them."""
        with self._lock:
            self._pieces.clear()
        self._go.set()
        for t in self._threads:
            t.join()


def _address_of(mapping: mmap.mmap) -> int:
    """The address of mapping's first byte, leaving no buffer exported
    (an export would keep the mapping from being resized or closed)."""
    view = ctypes.c_char.from_buffer(mapping)
    address = ctypes.addressof(view)
    del view
    return address


def _allow_writes_from(pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PTRACER, ctypes.c_ulong(pid), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl: the binary's probe finds out, and falls back
