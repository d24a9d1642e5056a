"""How edges and results cross between this process and the binary:
memfds where they work (``handoff_mode``), pipes elsewhere. The edges go in
as an Arrow IPC file in a memfd, or as a stream on stdin; the side files
(sources, targets, vertex tables) are memfds or files in a temporary
directory; the result comes back as an IPC file in a memfd that is mapped
in place, from the result peer (``_peer``), or as a stream on stdout.

_RunHandoff holds the methods of Run that do this; the process they
transport to is ``_process``'s.
"""

from __future__ import annotations

import functools
import mmap
import os
import shutil
import tempfile
import weakref
from typing import Any, Iterable, List, Optional

import pyarrow as pa

from . import _errors
from ._checks import short_repr
from ._process import _is_broken_pipe

# PATHCTL_HANDOFF=pipe makes every run use pipes (stdin, stdout) even where
# memfds work; "auto" (or unset) uses memfds where they work.
HANDOFF_ENV = "PATHCTL_HANDOFF"


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

class _RunHandoff:
    """The transport half of Run: the side files, the edges' memfd or
    feed, and reading the result. It uses the attributes Run.__init__ and
    _RunProcess._start set (_fds, _keep_fds, _names, _out_fd, _peer, proc,
    keep_tmp, ...)."""

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
