"""Running the local pathctl binary.

On Linux, data crosses between the processes through memfds (anonymous
files in memory, ``os.memfd_create``), not pipes:

- edges handed over as data are written once, as an Arrow IPC file, into a
  memfd the binary reads as ``/dev/fd/N`` (a path stays a path);
- a whole result (``apsp``, ``sssp``, ``bfs``, ``distance_matrix``) is
  written by the binary, as an uncompressed Arrow IPC file, into a memfd
  that Python maps and opens in place: the arrays are views of the
  mapping, no copy. A matrix arrives as one record batch (the binary sizes
  the file up front and writes every block into its place), so the n×n
  array is one view. The mapping lives as long as the last object viewing
  it; a memfd has no name in any file system, so nothing is left behind
  when either process dies, SIGKILL included.

A matrix goes further: the binary writes it straight into this process's
own memory (``process_vm_writev``), an anonymous mapping made here at the
size the binary asks for over a socket pair (``_ResultPeer``): no memfd
pages to populate, which cost several times the copy (R-MAT 16 on an H100
host: 9.7 GB in 0.5-0.7 s against 4-6 s into a memfd). Where the system
does not allow that write (a seccomp filter, ptrace restrictions) the
binary says so and writes the memfd as before; ``PATHCTL_RESULT_PEER=off``
asks for the memfd.

``stream`` reads an IPC stream from a pipe (constant memory, batches as
they come), and so does everything where memfds are missing (not Linux) or
``PATHCTL_HANDOFF=pipe`` asks for it: edges then go in on stdin.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import mmap
import numbers
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
import weakref
from collections import deque
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from . import _errors
from ._checks import check_flag, check_id_list, short_repr
from ._inputs import PathInput, as_edge_input

log = logging.getLogger("pathctl")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

LAYOUTS = ("pairs", "matrix", "stats", "nearest")

# PATHCTL_HANDOFF=pipe makes every run use pipes (stdin, stdout) even where
# memfds work; "auto" (or unset) uses memfds where they work.
HANDOFF_ENV = "PATHCTL_HANDOFF"


# The line a run prints last on stderr when PATHCTL_DONE_LINE=1 and it
# succeeded: its results are complete; the exit (a device's teardown) may
# still take a while.
DONE_LINE_ENV = "PATHCTL_DONE_LINE"
DONE_LINE = "pathctl: done"

# PATHCTL_RESULT_PEER=off keeps a matrix in the memfd instead of having the
# binary write it into this process's memory.
RESULT_PEER_ENV = "PATHCTL_RESULT_PEER"


def handoff_mode() -> str:
    """How data crosses to and from the binary: ``"memfd"`` (Linux) or
    ``"pipe"`` (elsewhere, or where ``PATHCTL_HANDOFF=pipe``)."""
    want = os.environ.get(HANDOFF_ENV, "").strip().lower()
    if want not in ("", "auto", "memfd", "pipe"):
        raise _errors.UsageError(f"{HANDOFF_ENV}={want!r}: want auto, memfd or pipe")
    if want == "pipe":
        return "pipe"
    return "memfd" if _memfd_works() else "pipe"


@functools.lru_cache(maxsize=1)
def _memfd_works() -> bool:
    if not hasattr(os, "memfd_create") or not os.path.isdir("/dev/fd"):
        return False
    try:
        fd = os.memfd_create("pathctl-probe", os.MFD_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def _new_memfd(name: str) -> int:
    # Close-on-exec: only the binary it is passed to (pass_fds) inherits it.
    return os.memfd_create(name, os.MFD_CLOEXEC)


def _close_fds(fds: List[int]) -> None:
    while fds:
        try:
            os.close(fds.pop())
        except OSError:
            pass

INSTALL_HINT = (
    "install a pathctl wheel, which bundles the binary (`make wheel` in a checkout of the "
    "repository writes them to dist/), or build the binary there with `make build` and set "
    "PATHCTL_BIN to bin/pathctl or put it on PATH"
)


def bundled_binary() -> Optional[str]:
    """The pathctl executable installed by this package's wheel (into the
    environment's scripts directory, as ruff and uv install theirs), or None
    for an installation without one (a source or editable install)."""
    path = _bundled_path()
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


@functools.lru_cache(maxsize=1)
def _bundled_path() -> Optional[str]:
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        dist = metadata.distribution("pathctl")
    except metadata.PackageNotFoundError:
        return None
    files = list(dist.files or ())
    init = [f for f in files if f.as_posix() == "pathctl/__init__.py"]
    if not init or os.path.dirname(os.path.abspath(str(dist.locate_file(init[0])))) != _PACKAGE_DIR:
        return None  # metadata of another pathctl installation than this one
    for f in files:
        if f.name in ("pathctl", "pathctl.exe") and f.parent.name in ("bin", "Scripts"):
            return os.path.abspath(str(dist.locate_file(f)))
    return None


def find_binary(binary: Optional[str] = None) -> str:
    """The pathctl executable: ``binary`` if given, else the one bundled with
    this package (a wheel from ``make wheel``), else $PATHCTL_BIN, else
    ``pathctl`` on PATH. Raises BinaryNotFoundError saying how to install it.

    The bundled binary comes first because it is the one whose version
    matches the package's; a PATHCTL_BIN left over from a source checkout
    does not shadow it."""
    if not binary:
        bundled = bundled_binary()
        if bundled:
            return bundled
    candidate = binary or os.environ.get("PATHCTL_BIN") or ""
    if candidate:
        found = shutil.which(candidate) if os.sep not in candidate else candidate
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return os.path.abspath(found)
        where = "binary=" if binary else "PATHCTL_BIN="
        raise _errors.BinaryNotFoundError(
            f"pathctl binary not found at {where}{candidate!r}: {INSTALL_HINT}")
    found = shutil.which("pathctl")
    if not found:
        raise _errors.BinaryNotFoundError(
            f"pathctl binary not found: none bundled with this package, PATHCTL_BIN unset, "
            f"none on PATH; {INSTALL_HINT}")
    return found


# Options every run accepts besides the positional ones, as (python name, flag).
_VALUE_FLAGS = {
    "src_col": "--src-col",
    "dst_col": "--dst-col",
    "weight_col": "--weight-col",
    "dist_type": "--dist-type",
    "delta": "--delta",
    "threads": "--threads",
    "mem": "--mem",
    "input_format": "--input-format",
    "cutoff": "--cutoff",
    "k": "--k-nearest",
    "devices": "--devices",
}
_BOOL_FLAGS = {"unweighted": "--unweighted", "reverse": "--reverse", "with_paths": "--with-paths"}
OPTION_NAMES = tuple(_VALUE_FLAGS) + tuple(_BOOL_FLAGS) + ("vertices", "binary", "env", "targets")


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse unknown keywords, a switch that is not a bool (TypeError), a
    single id for ``targets`` or ``vertices`` (TypeError: they are lists)
    and a k or cutoff of the wrong type."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise TypeError(f"pathctl: unexpected keyword argument(s) {', '.join(unknown)} "
                        f"(column and tuning options are {', '.join(OPTION_NAMES)})")
    for name in _BOOL_FLAGS:
        if name in options:
            check_flag(name, options[name])
    for name in ("targets", "vertices"):
        check_id_list(name, options.get(name))
    check_narrowing(options.get("cutoff"), options.get("k"))


def check_narrowing(cutoff: Any, k: Any) -> None:
    """Refuse a ``cutoff`` that is not a number and a ``k`` that is not a
    whole number (True, 2.5, "3") before they reach the binary or a ticket,
    where they would be a parse error in the CLI's words or, over Flight,
    silently become 1 or 2. Their ranges (k of 1 or more, a cutoff of 0 or
    more) are the engine's to check."""
    if k is not None and (isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral)):
        raise _errors.UsageError(f"k={k!r}: k is a whole number of 1 or more")
    if cutoff is not None and (isinstance(cutoff, (bool, np.bool_)) or not isinstance(cutoff, numbers.Real)):
        raise _errors.UsageError(f"cutoff={cutoff!r}: the cutoff is a distance of 0 or more")


class Run:
    """One pathctl process. With ``output="pipe"``, ``open_output()`` gives its
    output stream; otherwise (where memfds work) ``read_mapped()`` waits for
    it and maps its result. ``finish()`` reaps it and raises the engine's
    error; ``abort()`` kills and reaps it."""

    def __init__(self, command: str, edges: Any, *, layout: str = "pairs",
                 algorithm: Optional[str] = None, sources: Optional[Iterable[Any]] = None,
                 source: Any = None, directed: bool = True, with_predecessors: bool = False,
                 engine: str = "auto", vertices_out: bool = False, options: Mapping[str, Any] = (),
                 output: str = "auto", out: Optional[Any] = None):
        options = dict(options)
        mode = handoff_mode()
        # "memfd": the result is an IPC file in a memfd; "pipe": an IPC
        # stream on stdout.
        self.output = "memfd" if output != "pipe" and mode == "memfd" else "pipe"
        self._fds: List[int] = []  # memfds this process still holds
        # The matrix written into this process's memory (see the top).
        self._peer: Optional[_ResultPeer] = None
        self._out_fd: Optional[int] = None
        self._keep_fds: List[int] = []  # kept open after the start: written by the binary
        self._memfd_mode = mode == "memfd"
        # Paths made up here, as the user calls them in messages.
        self._names: dict = {}
        check_flag("directed", directed)
        check_flag("with_predecessors", with_predecessors)
        check_id_list("sources", sources)
        check_options(options)
        if layout not in LAYOUTS:
            raise _errors.UsageError(f"unknown layout {layout!r} (want one of {', '.join(LAYOUTS)})")
        binary = find_binary(options.pop("binary", None))
        env = options.pop("env", None)
        vertices = options.pop("vertices", None)
        targets = options.pop("targets", None)
        self._input = as_edge_input(edges, (options.get("src_col") or "src", options.get("dst_col") or "dst"))
        # A directory for the vertex table handed to --vertices (a file the
        # binary names by its extension), made when first needed; the other
        # side files are memfds where they work.
        self._tmpdir: Optional[str] = None
        self._remove_tmp: Optional[weakref.finalize] = None
        # The memfds are closed by cleanup(), or when this run is collected.
        self._close_memfds = weakref.finalize(self, _close_fds, self._fds)
        # keep_tmp keeps the temporary files after a successful finish(), for
        # the caller to read the vertices file and then call cleanup().
        self.keep_tmp = False
        self.vertices_path: Optional[str] = None
        # The mapping read_mapped() opened the result in (while this run lives).
        self.mapping: Optional[mmap.mmap] = None
        # Whether the binary wrote a matrix's values into out (the table's
        # values are then zeros: the out array holds them).
        self.values_in_out = False
        # Flags first: the CLI stops reading flags at the positional EDGES.
        args: List[str] = [binary, command]
        if isinstance(self._input, PathInput):
            edges_arg = self._input.path
            if edges_arg.startswith("-"):
                edges_arg = os.path.join(".", edges_arg)
        elif mode == "memfd":
            fd = self._edges_memfd(self._input)
            edges_arg = f"/dev/fd/{fd}"
            self._names[edges_arg] = "edges"
            options["input_format"] = "arrow"
        else:
            edges_arg = "-"
            if "input_format" not in options:
                options["input_format"] = "arrows"
        if command == "run":
            if algorithm is not None:
                args += ["--algo", str(algorithm)]
            if sources is not None:
                args += ["--sources-file", self._id_file("sources", sources)]
        else:
            if algorithm is not None and algorithm != "auto":
                args += ["--algo", str(algorithm)]
            args += ["--source", str(source)]
        if targets is not None:
            args += ["--targets-file", self._id_file("targets", targets)]
        args += ["--layout", layout, "--engine", str(engine)]
        if self.output == "memfd":
            self._out_fd = _new_memfd("pathctl-result")
            self._fds.append(self._out_fd)
            out_path = f"/dev/fd/{self._out_fd}"
            self._names[out_path] = "the result"
            args += ["--format", "arrow", "-o", out_path]
            if layout == "matrix" and _result_peer_wanted():
                self._peer = _ResultPeer(out)
                self._fds.append(self._peer.child_fd)
                args += ["--result-peer", str(self._peer.child_fd)]
        else:
            args += ["--format", "arrows", "-o", "-"]
        if not directed:
            args.append("--undirected")
        if with_predecessors:
            args.append("--with-predecessors")
        if vertices is not None:
            id_type = None
            if not isinstance(self._input, PathInput):
                id_type = self._input.schema.field(options.get("src_col") or "src").type \
                    if (options.get("src_col") or "src") in self._input.schema.names else None
            args += ["--vertices", self._write_vertex_table(vertices, id_type)]
        if vertices_out:
            self.vertices_path = self._side_file("vertices.arrow", written_by_binary=True)
            args += ["--vertices-out", self.vertices_path]
        for name, flag in _VALUE_FLAGS.items():
            value = options.get(name)
            if name == "weight_col" and options.get("unweighted"):
                # unweighted=True counts hops whatever weight_col says (the
                # CLI refuses the two flags together).
                continue
            if value is not None:
                args += [flag, str(value)]
        for name, flag in _BOOL_FLAGS.items():
            if options.get(name):
                args.append(flag)
        args.append(edges_arg)
        self.args = args
        log.debug("pathctl: running %s", " ".join(args))
        # A run that succeeds says so on stderr before its exit, whose
        # device teardown need not be waited for (DONE_LINE).
        full_env = dict(os.environ)
        full_env[DONE_LINE_ENV] = "1"
        if env:
            full_env.update({str(k): str(v) for k, v in env.items()})
        feeding = not isinstance(self._input, PathInput) and mode == "pipe"
        # The last lines of stderr, numbered; and the first lines of a crash
        # report (a Go panic and the stack of its goroutine), which a long
        # goroutine dump would push out of the last ones.
        self._stderr_lines: deque = deque(maxlen=_STDERR_KEPT)
        self._crash_lines: List[Tuple[int, str]] = []
        self._crash: Optional[str] = None
        self._notes: deque = deque()  # "pathctl: warning: ..." lines not yet warned about
        self._feed_error: Optional[BaseException] = None
        # Set when the binary said it is done (DONE_LINE) or has exited.
        self._settled = threading.Event()
        self._exited = False
        self._feed_thread: Optional[threading.Thread] = None
        self._done = False
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE if feeding else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.output == "pipe" else subprocess.DEVNULL,
                stderr=subprocess.PIPE, env=full_env, pass_fds=tuple(self._fds))
        except OSError as exc:
            self.cleanup()
            raise _errors.BinaryNotFoundError(f"cannot start {binary}: {exc}; {INSTALL_HINT}") from exc
        # A run abandoned without finish() or abort() is killed when it is
        # collected or the interpreter exits.
        self._kill_at_exit = weakref.finalize(self, _kill_quietly, self.proc)
        try:
            # The binary holds its own descriptors now: the edges' memfd is
            # freed when it exits; only the result's stays open here.
            for fd in [fd for fd in self._fds if fd != self._out_fd and fd not in self._keep_fds]:
                self._fds.remove(fd)
                os.close(fd)
            if self._peer is not None:
                self._peer.start(self.proc.pid)
            self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
            self._stderr_thread.start()
            if feeding:
                self._feed_thread = threading.Thread(target=self._feed, args=(self._input,), daemon=True)
                self._feed_thread.start()
        except BaseException:
            # Interrupted (Ctrl-C) before the run is handed on: nothing else
            # would stop the process, whose output nobody will read.
            self._done = True
            _kill_quietly(self.proc)
            self.cleanup()
            raise

    def _temp_dir(self) -> str:
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="pathctl-")
            # Removes the temporary files when cleanup() runs, or at the
            # latest when this run is collected or the interpreter exits.
            self._remove_tmp = weakref.finalize(self, shutil.rmtree, self._tmpdir, True)
        return self._tmpdir

    def _side_file(self, name: str, written_by_binary: bool = False) -> str:
        """A path for a small file beside the run (the sources, the vertex
        order): /dev/fd/N of a memfd passed to the binary, so that nothing
        outlives the processes, or a file in a temporary directory."""
        if not self._memfd_mode:
            return os.path.join(self._temp_dir(), name)
        fd = _new_memfd("pathctl-" + name)
        self._fds.append(fd)
        if written_by_binary:
            self._keep_fds.append(fd)
        return f"/dev/fd/{fd}"

    def _edges_memfd(self, reader: pa.RecordBatchReader) -> int:
        """Write the edges, as an uncompressed Arrow IPC file, into a new
        memfd (one copy, in native code; the binary reads the file with
        positioned reads, checked against its size). A reader that fails
        part way is the reported cause, and no process is started.

        An IPC file holds one dictionary per column, and batches of a
        dictionary column may each carry their own (``pa.concat_tables`` of
        categorical DataFrames does): such edges are read whole and their
        dictionaries unified first, the indices mapped onto the one
        dictionary (the ids stay as they were; a stream on a pipe would
        have taken each batch's dictionary as it came)."""
        fd = _new_memfd("pathctl-edges")
        self._fds.append(fd)
        try:
            schema, batches = reader.schema, reader
            if any(pa.types.is_dictionary(field.type) for field in schema):
                table = _unified_dictionaries(pa.Table.from_batches(reader, schema))
                schema, batches = table.schema, table.to_batches()
            with pa.OSFile(f"/dev/fd/{fd}", "wb") as sink, \
                    pa.ipc.new_file(sink, schema) as writer:
                for batch in batches:
                    writer.write_batch(batch)
        except BaseException as exc:
            self.cleanup()
            if isinstance(exc, Exception):
                raise _errors.InvalidInputError(f"reading the edges failed: {exc}") from exc
            raise
        return fd

    def _write_vertex_table(self, vertices: Any, id_type: Optional[pa.DataType]) -> str:
        """The vertex set as an Arrow IPC file of one column, ``vertex``,
        for --vertices (the same shape --vertices-out writes), in the edges'
        id type where it is known and the ids convert to it exactly."""
        try:
            ids = vertex_array(vertices)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            self.cleanup()
            raise _errors.InvalidInputError(f"vertices: {exc}") from exc
        if id_type is not None and ids.type != id_type:
            try:
                ids = ids.cast(id_type)  # safe: an id that does not fit stays as given
            except (pa.ArrowException, NotImplementedError):
                pass
        path = os.path.join(self._temp_dir(), "vertices-in.arrow")
        table = pa.table({"vertex": ids})
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return path

    def _id_file(self, name: str, ids: Iterable[Any]) -> str:
        """Write ids to a file for --NAME-file: one per line, each exactly
        as given (the binary keeps every line verbatim, removing only its
        "\n" or "\r\n": " a" stays " a", an empty line is the id ""). An
        id with a "\n", or ending in "\r", cannot be one line of it and is
        refused."""
        ids = [str(s) for s in ids]
        if not ids:
            self.cleanup()
            raise _errors.UsageError(f"{name} is an empty list; pass {name}=None for every vertex")
        for s in ids:
            if "\n" in s or s.endswith("\r"):
                self.cleanup()
                raise _errors.InvalidInputError(
                    f"{name}: id {short_repr(s)} contains a line break, which an id cannot "
                    f"carry to the binary")
        path = self._side_file(f"{name}.txt")
        # "--targets-file /dev/fd/7: ..." reads "targets: ..." in messages.
        self._names[f"--{name}-file {path}"] = f"--{name}"
        self._names[path] = name
        # newline="": written as given, no translation of "\n" on any system.
        with open(path, "w", encoding="utf-8", newline="") as f:
            for s in ids:
                f.write(s + "\n")
        return path

    # --- threads -----------------------------------------------------------

    def _drain_stderr(self) -> None:
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line == DONE_LINE:
                self._settled.set()  # every line before it has been read
                continue
            number = self._stderr_lines[-1][0] + 1 if self._stderr_lines else 0
            self._stderr_lines.append((number, line))
            if self._crash is None and _errors.CRASH_LINE.match(line):
                self._crash = line.strip()
            if self._crash is not None and len(self._crash_lines) < _STDERR_KEPT:
                self._crash_lines.append((number, line))
            if _errors.NOTE.match(line):
                self._notes.append(line)
            if line:
                log.info("%s", line)  # notes such as a GPU-to-CPU fallback, and errors
        self.proc.stderr.close()

    def _feed(self, reader: pa.RecordBatchReader) -> None:
        """Write the edges to the binary's stdin (in its own thread, so that a
        large input cannot deadlock against a full stdout pipe)."""
        sink = self.proc.stdin
        try:
            writer = pa.ipc.new_stream(sink, reader.schema)
            for batch in reader:
                writer.write_batch(batch)
            writer.close()  # the end-of-stream marker: only after every batch
        except BaseException as exc:  # noqa: BLE001 - reported by finish()
            if not _is_broken_pipe(exc):
                # The edges failed part way: stop the binary before it takes
                # the cut-off stream for the whole graph.
                self._feed_error = exc
                try:
                    self.proc.kill()
                except OSError:
                    pass
        finally:
            try:
                sink.close()
            except OSError:
                pass

    # --- results -----------------------------------------------------------

    @property
    def stderr(self) -> str:
        tail = list(self._stderr_lines)
        head = [entry for entry in self._crash_lines if not tail or entry[0] < tail[0][0]]
        lines = [line for _, line in head]
        if head and head[-1][0] + 1 < tail[0][0]:
            lines.append(f"... ({tail[0][0] - head[-1][0] - 1} lines left out)")
        return "\n".join(lines + [line for _, line in tail])

    def open_output(self) -> pa.RecordBatchStreamReader:
        """Open the result stream (blocks until the binary writes its schema).
        A binary that fails first is reaped and its error raised."""
        try:
            reader = pa.ipc.open_stream(self.proc.stdout)
        except (pa.ArrowException, OSError) as exc:
            self.finish(read_error=exc)
            raise  # finish raises; this is for a binary that exited 0 with no stream
        except BaseException:
            # Ctrl-C (or any exception raised in this thread) while the
            # binary computes its first block: no reader is handed on, so
            # nothing else would stop the binary, which would block on a
            # full pipe until the interpreter exits.
            self.abort()
            raise
        self.warn_notes()
        return reader

    def warn_notes(self) -> None:
        """Raise a UserWarning, in the caller's thread, for each note or
        warning line of the binary read so far (the binary prints them
        before its output, so a finished run has them all)."""
        while self._notes:
            line = self._notes.popleft()
            _warn_user(_errors.python_message(_errors.NOTE.sub("", line), self._names))

    def finish(self, read_error: Optional[BaseException] = None) -> None:
        """Reap the process and raise what went wrong, the engine's error first."""
        if self._done:
            return
        self._done = True
        ok = False
        try:
            try:
                code = self._wait_exit(read_error)
            except BaseException:
                # Interrupted while waiting (Ctrl-C): the binary is stopped
                # here, since this run is done and no later call reaps it.
                _kill_quietly(self.proc)
                raise
            if code == 0:
                self.warn_notes()
            if self._feed_error is not None:
                # The edges themselves failed (a reader that raised): that is
                # the cause, whatever the binary made of the cut-off stream.
                raise _errors.InvalidInputError(
                    f"reading the edges failed: {self._feed_error}",
                    exit_code=code, stderr=self.stderr) from self._feed_error
            if code != 0:
                raise _errors.from_exit(code, self.stderr, self._names, self._crash) from read_error
            if read_error is not None:
                raise _errors.PathctlError(
                    f"pathctl exited 0 but its output is not a valid Arrow stream: {read_error}",
                    exit_code=0, stderr=self.stderr) from read_error
            ok = True
        finally:
            if not (ok and self.keep_tmp):
                self.cleanup()

    def _wait_exit(self, read_error: Optional[BaseException]) -> int:
        """The binary's exit status, once it has exited (or, for a result in
        a memfd, said it is done)."""
        if read_error is not None and self.proc.poll() is None and self.proc.stdout is not None:
            # The stream broke while the binary still runs: drain it so it
            # can exit, then judge by its status.
            try:
                while self.proc.stdout.read(1 << 16):
                    pass
            except (OSError, ValueError):
                pass
        if self.output == "memfd" and read_error is None:
            code = self._wait_settled()
        else:
            code = self.proc.wait()
            self._exited = True
        if self._exited:
            self._join()
        return code

    def _wait_settled(self) -> int:
        """The binary's exit status, or 0 as soon as it has said it is done
        (its result written and closed, every message before the line read);
        it is then reaped in the background while its exit tears the device
        down."""
        def reap() -> None:
            self.proc.wait()
            self._settled.set()

        threading.Thread(target=reap, daemon=True, name="pathctl-reap").start()
        self._settled.wait()
        if self.proc.poll() is not None:
            self._exited = True
            return self.proc.returncode
        return 0

    def abort(self) -> None:
        """Kill the process (if it still runs) and reap it."""
        if self._done:
            return
        self._done = True
        try:
            if self.proc.poll() is None:
                self.proc.kill()
            if self.proc.stdout is not None:
                try:
                    self.proc.stdout.close()
                except OSError:
                    pass
            self.proc.wait()
            self._join()
        finally:
            self.cleanup()

    def _join(self) -> None:
        if self._feed_thread is not None:
            self._feed_thread.join()
        if self._peer is not None:
            self._peer.join()
        self._stderr_thread.join()
        if self.proc.stdout is not None:
            try:
                self.proc.stdout.close()
            except OSError:
                pass

    def cleanup(self) -> None:
        """Remove the temporary files (sources, vertices) and close the
        memfds (a result already mapped stays mapped)."""
        self._close_memfds()
        if self._remove_tmp is not None:
            self._remove_tmp()

    def read_mapped(self) -> pa.Table:
        """Wait for the binary (raising its error), then map its result
        memfd and open it as an Arrow IPC file: the table's buffers are
        views of the mapping, which stays until the last of them is
        released. The mapping is shared and writable: the memfd is this
        process's alone once the binary has exited, so writing into it
        (see matrix_from_table's ``unreachable``) costs no copy."""
        assert self.output == "memfd" and self._out_fd is not None
        keep = self.keep_tmp
        self.keep_tmp = True  # the memfd must outlive finish()
        try:
            self.finish()
            if self._peer is not None:
                table = self._read_peer()
                if table is not None:
                    return table
            size = os.fstat(self._out_fd).st_size
            if size == 0:
                raise _errors.PathctlError("pathctl exited 0 but wrote no result",
                                           exit_code=0, stderr=self.stderr)
            # mmap keeps its own descriptor: the memfd lives as long as the map.
            mapped = mmap.mmap(self._out_fd, size, flags=mmap.MAP_SHARED,
                               prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            self.keep_tmp = keep
            if not keep:
                self.cleanup()
            elif self._out_fd in self._fds:
                self._fds.remove(self._out_fd)
                os.close(self._out_fd)
        self.mapping = mapped
        try:
            return pa.ipc.open_file(pa.py_buffer(mapped)).read_all()
        except pa.ArrowException as exc:
            raise _errors.PathctlError(
                f"pathctl exited 0 but its result is not a valid Arrow IPC file: {exc}",
                exit_code=0, stderr=self.stderr) from exc

    def _read_peer(self) -> Optional[pa.Table]:
        """The matrix the binary wrote into this process's memory, or None
        where it wrote the memfd (the peer declined, or was never asked)."""
        peer, self._peer = self._peer, None
        mapped, size = peer.result()
        if mapped is None:
            return None
        self.mapping = mapped
        self.values_in_out = peer.values_in_out
        try:
            return pa.ipc.open_file(pa.py_buffer(mapped).slice(0, size)).read_all()
        except pa.ArrowException as exc:
            raise _errors.PathctlError(
                f"pathctl exited 0 but its result is not a valid Arrow IPC file: {exc}",
                exit_code=0, stderr=self.stderr) from exc

    def read_vertices(self) -> pa.Array:
        """The ``vertex`` column the binary wrote with --vertices-out."""
        assert self.vertices_path is not None
        with pa.memory_map(self.vertices_path) as source:
            try:
                table = pa.ipc.open_file(source).read_all()
            except pa.ArrowInvalid:
                source.seek(0)
                table = pa.ipc.open_stream(source).read_all()
        return table.column("vertex").combine_chunks()


def _unified_dictionaries(table: pa.Table) -> pa.Table:
    """``table`` with one dictionary per dictionary column, shared by all of
    its chunks. Where the union outgrows the index type (pandas codes
    categories in int8: two frames of 100 categories each need 200), the
    indices are widened to int32 first."""
    try:
        return table.unify_dictionaries()
    except pa.ArrowInvalid:
        pass
    fields = [f.with_type(pa.dictionary(pa.int32(), f.type.value_type, f.type.ordered))
              if pa.types.is_dictionary(f.type) and f.type.index_type.bit_width < 32 else f
              for f in table.schema]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata)).unify_dictionaries()


# Lines of the binary's stderr kept: the last ones, and the first ones of a
# crash report.
_STDERR_KEPT = 200


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


def vertex_array(vertices: Any) -> pa.Array:
    """``vertices`` (a pyarrow Array or ChunkedArray, a numpy array, a pandas
    or polars Series, or any iterable of ids) as one pyarrow Array."""
    if isinstance(vertices, pa.ChunkedArray):
        return vertices.combine_chunks()
    if isinstance(vertices, pa.Array):
        return vertices
    if isinstance(vertices, (str, bytes)):
        raise TypeError("expected a list or array of vertex ids, not a single string")
    if hasattr(vertices, "to_arrow"):  # polars Series
        return vertex_array(vertices.to_arrow())
    if hasattr(vertices, "__array__") or hasattr(vertices, "__arrow_c_array__"):
        return pa.array(vertices)
    return pa.array(list(vertices))




def _warn_user(message: str) -> None:
    """warnings.warn, attributed to the first caller outside this package."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        level += 1
        frame = frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def _kill_quietly(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _is_broken_pipe(exc: BaseException) -> bool:
    if isinstance(exc, BrokenPipeError):
        return True
    text = str(exc).lower()
    return "broken pipe" in text or "errno 32" in text


class _ProcessBatches:
    """Iterator over a Run's output batches that reaps the process at the end,
    raises the engine's error when the stream breaks, and kills the process
    if it is dropped before the end."""

    def __init__(self, run: Run, reader: pa.RecordBatchStreamReader):
        self._run = run
        self._reader = reader
        self._finished = False

    def __iter__(self):
        return self

    def __next__(self) -> pa.RecordBatch:
        if self._finished:
            raise StopIteration
        try:
            return self._reader.read_next_batch()
        except StopIteration:
            self._finished = True
            self._run.finish()
            raise
        except BaseException as exc:
            self._finished = True
            if isinstance(exc, (pa.ArrowException, OSError)):
                self._run.finish(read_error=exc)
            else:
                self._run.abort()
            raise

    def close(self) -> None:
        if not self._finished:
            self._finished = True
            self._run.abort()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at GC time
            pass


def run_stream(run: Run) -> pa.RecordBatchReader:
    assert run.output == "pipe"
    reader = run.open_output()
    return pa.RecordBatchReader.from_batches(reader.schema, _ProcessBatches(run, reader))


def run_table(run: Run) -> pa.Table:
    """The whole result: mapped from the run's memfd, or read from its pipe."""
    if run.output == "memfd":
        try:
            return run.read_mapped()
        except BaseException:
            # A KeyboardInterrupt while waiting: stop the binary.
            _kill_quietly(run.proc)
            raise
    reader = run.open_output()
    try:
        table = reader.read_all()
    except (pa.ArrowException, OSError) as exc:
        run.finish(read_error=exc)
        raise
    except BaseException:
        run.abort()
        raise
    run.finish()
    return table


__all__: Sequence[str] = ("Run", "run_stream", "run_table", "find_binary", "handoff_mode")
