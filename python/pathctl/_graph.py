"""A graph that stays loaded: :func:`load` and :class:`Graph`.

``load`` starts one ``pathctl serve`` process of its own (loopback, port 0,
a private temporary data directory), uploads the edges to it once with the
Flight client, and every method of the Graph is then a Flight query on that
process: the graph is read, validated and built once, and stays in the
engine's memory (its CSR on the GPU, with the GPU context, where the GPU
engine runs) until ``close()``.

Nothing outlives the Graph: ``close()``, a ``with`` block, garbage
collection and interpreter exit stop the process (SIGTERM, then SIGKILL)
and remove the data directory. The process is started with
``--exit-with-stdin`` and a pipe on its stdin whose write end only this
process holds, so it stops by itself when Python dies, SIGKILL included;
a data directory such a death leaves is removed by the next ``load``
(its lock is free then).
"""

from __future__ import annotations

import fcntl
import glob
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
from collections import deque
from typing import Any, Iterable, List, Optional, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _errors
from ._checks import check_flags
from ._inputs import as_reader

# The name the graph is stored under in its engine process.
_NAME = "graph"

# The prefix of a Graph's data directory in the temporary directory.
_DIR_PREFIX = "pathctl-graph-"

# How long the engine process gets to start listening, and to stop after
# SIGTERM before it is killed.
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 5.0
# How long a call that lost its connection waits for the process's exit.
_LOST_WAIT = 2.0

# Stderr lines of the engine process kept for error messages.
_STDERR_KEPT = 50

# The limits of `pathctl serve` that guard a shared server; this one has a
# single client, the process that started it, and one graph that must stay
# loaded: no cap on the upload, and a cache that never evicts it.
_UNBOUNDED = str(1 << 50)

_LISTENING = re.compile(r"^pathctl: listening on (\S+)\s*$")


def load(edges: Any, *, directed: bool = True, engine: str = "auto",
         src_col: Optional[str] = None, dst_col: Optional[str] = None,
         weight_col: Optional[str] = None, unweighted: bool = False,
         dist_type: Optional[str] = None, threads: Optional[int] = None,
         mem: Optional[Union[int, str]] = None, binary: Optional[str] = None,
         env: Optional[dict] = None) -> "Graph":
    """Read ``edges`` once into a long-lived engine process and return a
    :class:`Graph` whose methods (``apsp``, ``sssp``, ``bfs``, ``path``,
    ``distance_matrix``, ``stream``, ``betweenness``) answer from it without
    reading the edges again::

        with pathctl.load(df, directed=False) as g:
            for s in sources:
                table = g.sssp(s)

    ``edges`` is what :func:`pathctl.apsp` takes, except a DIMACS ``.gr``
    path (read it into a table first): a path is read here with pyarrow and
    uploaded. ``directed``, ``src_col``, ``dst_col``, ``weight_col``,
    ``unweighted`` and ``dist_type`` fix the graph, as for the module
    functions; ``engine`` is the methods' default engine (``engine=`` of a
    method overrides it); ``threads`` and ``mem`` are the engine process's
    CPU threads and per-run memory budget; ``binary`` and ``env`` choose the
    executable and add to its environment.

    Errors are those of the module functions: bad edges raise
    InvalidInputError here, an unknown source InvalidInputError at the
    query, and so on. Call ``close()`` (or use ``with``) to stop the process
    early; it stops at the latest when the Graph is collected or Python
    exits.
    """
    return Graph(edges, directed=directed, engine=engine, src_col=src_col, dst_col=dst_col,
                 weight_col=weight_col, unweighted=unweighted, dist_type=dist_type,
                 threads=threads, mem=mem, binary=binary, env=env)


class _Engine:
    """The engine process of a Graph, its data directory and its client;
    held apart from the Graph so that the finalizer that stops it does not
    keep the Graph alive."""

    def __init__(self, binary: str, threads: Optional[int], mem: Optional[Union[int, str]],
                 env: Optional[dict]):
        from ._local import find_binary

        exe = find_binary(binary)
        _remove_abandoned_dirs()
        self.data_dir = tempfile.mkdtemp(prefix=_DIR_PREFIX)
        self.proc: Optional[subprocess.Popen] = None
        self.client = None
        self.stderr: deque = deque(maxlen=_STDERR_KEPT)
        self.exit_error: Optional[_errors.PathctlError] = None
        self._lock = threading.Lock()
        args = [exe, "serve", "--addr", "127.0.0.1:0", "--data-dir", self.data_dir,
                "--exit-with-stdin", "--max-upload-bytes", _UNBOUNDED, "--cache-bytes", _UNBOUNDED]
        if threads is not None:
            args += ["--threads", str(threads)]
        if mem is not None:
            args += ["--mem", str(mem)]
        full_env = dict(os.environ)
        if env:
            full_env.update({str(k): str(v) for k, v in env.items()})
        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, env=full_env, text=True,
                                         errors="replace")
        except OSError as exc:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            from ._local import INSTALL_HINT

            raise _errors.BinaryNotFoundError(f"cannot start {exe}: {exc}; {INSTALL_HINT}") from exc

    def start(self) -> str:
        """Wait for the listening line; then drain stderr in a thread.
        Returns the address."""
        assert self.proc is not None and self.proc.stderr is not None
        addr: List[str] = []
        found = threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.stderr.append(line.rstrip("\n"))
                m = _LISTENING.match(line)
                if m and not addr:
                    addr.append(m.group(1))
                    found.set()
            found.set()  # end of stderr: the process has exited

        threading.Thread(target=drain, daemon=True, name="pathctl-graph-stderr").start()
        if not found.wait(_START_TIMEOUT) or not addr:
            code = self.proc.poll()
            tail = "\n".join(self.stderr)
            self.close()
            if code is None:
                raise _errors.PathctlError(
                    f"the engine process (pathctl serve) did not start listening in {_START_TIMEOUT:.0f} s",
                    stderr=tail)
            raise _errors.from_exit(self.proc.returncode, tail)
        return addr[0]

    def wait_exit(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the process to exit."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass

    def check_alive(self) -> None:
        """Raise the error of an engine process that has exited (and clean
        up after it), or nothing."""
        if self.exit_error is not None:
            raise self.exit_error
        if self.proc is None:
            raise _errors.PathctlError("this pathctl.Graph is closed")
        code = self.proc.poll()
        if code is None:
            return
        if code < 0:
            how = f"was killed by signal {-code} ({signal.Signals(-code).name})"
        else:
            how = f"exited with status {code}"
        last = _errors.engine_message("\n".join(self.stderr))
        msg = (f"the engine process of this pathctl.Graph (pathctl serve, pid {self.proc.pid}) {how}"
               + (f" ({last})" if last and code > 0 else "")
               + "; the loaded graph is gone: load it again with pathctl.load")
        self.exit_error = _errors.ServiceUnavailableError(msg, exit_code=code, stderr="\n".join(self.stderr))
        self.close()
        raise self.exit_error

    def close(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL) and remove the data
        directory; safe to call twice, and from a finalizer."""
        with self._lock:
            client, self.client = self.client, None
            if client is not None:
                try:
                    client.close()
                except Exception:
                    pass
            proc = self.proc
            if proc is not None and proc.returncode is None:
                try:
                    proc.stdin.close()  # --exit-with-stdin: the server stops
                except OSError:
                    pass
                try:
                    proc.terminate()
                    proc.wait(_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                except OSError:
                    pass
            elif proc is not None and proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            if self.data_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)
                self.data_dir = ""


def _remove_abandoned_dirs() -> None:
    """Remove the data directories of Graphs whose process died with its
    parent (SIGKILL of Python leaves them): those whose lock no server
    holds."""
    for path in glob.glob(os.path.join(tempfile.gettempdir(), _DIR_PREFIX + "*")):
        lock = os.path.join(path, "lock")
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue  # no lock yet: a Graph just starting, or not ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its server is running
        finally:
            os.close(fd)
        shutil.rmtree(path, ignore_errors=True)


class Graph:
    """A graph kept loaded in an engine process of its own; made by
    :func:`load`, which documents it. Its methods take the keywords of the
    module functions of the same name, less the edges and what
    :func:`load` fixed (direction and columns). A context manager: the
    process stops at the end of the ``with`` block.

    ``num_vertices`` and ``num_edges`` are the graph's counts; ``info``
    is all the engine reported about it.
    """

    def __init__(self, edges: Any, *, directed: bool = True, engine: str = "auto",
                 src_col: Optional[str] = None, dst_col: Optional[str] = None,
                 weight_col: Optional[str] = None, unweighted: bool = False,
                 dist_type: Optional[str] = None, threads: Optional[int] = None,
                 mem: Optional[Union[int, str]] = None, binary: Optional[str] = None,
                 env: Optional[dict] = None):
        check_flags(directed=directed, unweighted=unweighted)
        self.directed = bool(directed)
        self.engine = engine
        id_columns = (src_col or "src", dst_col or "dst")
        # Bad edges (and a path that cannot be read) are refused before a
        # process starts.
        if isinstance(edges, (str, os.PathLike)) and not os.path.exists(edges):
            raise _errors.InputNotFoundError(f"{os.fspath(edges)}: no such file")
        reader = as_reader(edges, id_columns)
        ids: List[pa.Array] = []
        self._engine = _Engine(binary, threads, mem, env)
        self._finalizer = weakref.finalize(self, self._engine.close)
        try:
            addr = self._engine.start()
            from .client import Client

            self._engine.client = Client("grpc://" + addr)
            self.info = self._engine.client.upload(
                _NAME, _collect_ids(reader, id_columns, ids), src_col=src_col, dst_col=dst_col,
                weight_col=weight_col, directed=directed, unweighted=unweighted, dist_type=dist_type)
        except BaseException:
            try:
                self._engine.check_alive()
            finally:
                self._finalizer()
            raise
        self.num_vertices = int(self.info.get("vertices", -1))
        self.num_edges = int(self.info.get("edges", -1))
        self._ids = _vertex_order(ids)

    # --- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Stop the engine process and remove its files; later calls raise
        PathctlError. Calling it twice is harmless."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"pid {self._engine.proc.pid}"
        return (f"pathctl.Graph({self.num_vertices} vertices, {self.num_edges} edges, "
                f"{'directed' if self.directed else 'undirected'}, {state})")

    @property
    def pid(self) -> Optional[int]:
        """The process id of the engine process (None once closed)."""
        return None if self.closed or self._engine.proc is None else self._engine.proc.pid

    def _client(self):
        if self.closed:
            if self._engine.exit_error is not None:
                raise self._engine.exit_error
            raise _errors.PathctlError("this pathctl.Graph is closed")
        self._engine.check_alive()
        return self._engine.client

    def _call(self, call):
        """``call(client)``, the error of a dead engine process in place of
        the connection error it causes."""
        client = self._client()
        try:
            return call(client)
        except _errors.ServiceUnavailableError:
            # A connection lost to a process on its way out (SIGTERM, a
            # crash): wait a moment for its exit, which is the error to give.
            self._engine.wait_exit(_LOST_WAIT)
            self._engine.check_alive()
            raise
        except _errors.PathctlError as exc:
            self._engine.check_alive()
            raise _as_local(exc) from exc

    # --- queries ----------------------------------------------------------------

    def apsp(self, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
             layout: str = "pairs", with_predecessors: bool = False, engine: Optional[str] = None,
             targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
             k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
             delta: Optional[float] = None) -> pa.Table:
        """Shortest paths from every vertex (or from ``sources``), as
        :func:`pathctl.apsp` gives them for the loaded edges."""
        _check_layout(layout)
        return self._call(lambda c: c.apsp(
            _NAME, algorithm=algorithm, sources=sources, layout=layout,
            with_predecessors=with_predecessors, engine=engine or self.engine, delta=delta,
            targets=targets, cutoff=cutoff, k=k, reverse=reverse, with_paths=with_paths))

    def sssp(self, source: Any, *, algorithm: str = "auto", layout: str = "pairs",
             with_predecessors: bool = False, engine: Optional[str] = None,
             targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
             k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
             delta: Optional[float] = None) -> pa.Table:
        """Shortest paths from one ``source``, as :func:`pathctl.sssp`."""
        return self.apsp(algorithm=algorithm, sources=[source], layout=layout,
                         with_predecessors=with_predecessors, engine=engine, targets=targets,
                         cutoff=cutoff, k=k, reverse=reverse, with_paths=with_paths, delta=delta)

    def bfs(self, source: Any, *, layout: str = "pairs", with_predecessors: bool = False,
            engine: Optional[str] = None, targets: Optional[Iterable[Any]] = None,
            cutoff: Optional[float] = None, k: Optional[int] = None, reverse: bool = False,
            with_paths: bool = False) -> pa.Table:
        """Hop counts from ``source``, weights ignored, as :func:`pathctl.bfs`."""
        return self.apsp(algorithm="bfs", sources=[source], layout=layout,
                         with_predecessors=with_predecessors, engine=engine, targets=targets,
                         cutoff=cutoff, k=k, reverse=reverse, with_paths=with_paths)

    def stream(self, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
               layout: str = "pairs", with_predecessors: bool = False, engine: Optional[str] = None,
               targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
               k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
               delta: Optional[float] = None) -> pa.RecordBatchReader:
        """Like :meth:`apsp`, as a RecordBatchReader over the result as the
        engine sends it (:func:`pathctl.stream`); an error part way is
        raised by the read that reaches it."""
        _check_layout(layout)
        return self._call(lambda c: c.stream(
            _NAME, algorithm=algorithm, sources=sources, layout=layout,
            with_predecessors=with_predecessors, engine=engine or self.engine, delta=delta,
            targets=targets, cutoff=cutoff, k=k, reverse=reverse, with_paths=with_paths))

    def path(self, source: Any, target: Any, *, algorithm: str = "auto",
             engine: Optional[str] = None, reverse: bool = False,
             cutoff: Optional[float] = None) -> Tuple[float, List[Any]]:
        """One shortest path, ``(distance, ids)``, as :func:`pathctl.path`;
        ``(math.inf, [])`` when ``target`` is unreachable."""
        table = self.apsp(algorithm=algorithm, sources=[source], targets=[target], engine=engine,
                          reverse=reverse, cutoff=cutoff, with_paths=True)
        if table.num_rows == 0:
            return math.inf, []
        return table.column("distance")[0].as_py(), table.column("path")[0].as_py()

    def distance_matrix(self, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
                        engine: Optional[str] = None, dtype: Any = None, unreachable: Any = None,
                        out: Optional[np.ndarray] = None, cutoff: Optional[float] = None,
                        reverse: bool = False, delta: Optional[float] = None
                        ) -> Tuple[Union[np.ndarray, np.ma.MaskedArray], np.ndarray]:
        """The distances as a 2-D numpy array and the vertex ids of its
        columns, as :func:`pathctl.distance_matrix` (same ``dtype``, whose
        default is inf for unreachable pairs in float32 where exact, else
        float64; same ``unreachable`` and ``out``). The engine converts
        the values as it builds each block (the ticket's
        ``"matrix_type"``). The result crosses a socket, so the array is a
        copy of what the engine sent, not a view of its memory."""
        from ._api import _check_unreachable, _matrix, matrix_type
        from .client import _narrowing

        _check_unreachable(unreachable)
        values = matrix_type(dtype)
        if out is not None and (not isinstance(out, np.ndarray) or out.ndim != 2 or not out.flags.writeable):
            raise ValueError("out must be a writable 2-D numpy array")

        def call(client):
            keys = {**_narrowing(None, cutoff, None, reverse), "matrix_type": values}
            reader = client._get(_NAME, algorithm, sources, "matrix", False, engine or self.engine,
                                 delta, keys)
            try:
                return reader.read_all()
            except (pa.ArrowException, OSError) as exc:
                raise _errors.from_flight(exc) from exc

        table = self._call(call)
        D = _matrix(table, unreachable, private=True)
        if out is not None:
            data = D.data if isinstance(D, np.ma.MaskedArray) else D
            if out.shape != data.shape or out.dtype != data.dtype:
                raise ValueError(f"out is {out.dtype} {out.shape}; the matrix is {data.dtype} {data.shape}")
            np.copyto(out, data)
            if isinstance(D, np.ma.MaskedArray):
                D = np.ma.MaskedArray(out, mask=D.mask, copy=False, fill_value=D.fill_value)
            else:
                D = out
        return D, self.vertex_ids()

    def betweenness(self, *, normalized: bool = True, endpoints: bool = False,
                    k: Optional[int] = None, seed: Optional[int] = None,
                    sources: Optional[Iterable[Any]] = None,
                    engine: Optional[str] = None) -> pa.Table:
        """Betweenness centrality of every vertex, ``vertex`` and
        ``betweenness`` (float64) in vertex order, as
        :func:`pathctl.betweenness` gives it for the loaded edges (same
        ``normalized``, ``endpoints``, ``k``, ``seed`` and ``sources``: one
        seed draws the same sample here, in the CLI and in the module
        function). The ticket's ``"layout": "betweenness"`` with its keys
        ``normalized``, ``endpoints``, ``k`` (the sample) and ``seed``."""
        return self._betweenness("betweenness", normalized, endpoints, k, seed, sources, engine)

    def edge_betweenness(self, *, normalized: bool = True, k: Optional[int] = None,
                         seed: Optional[int] = None, sources: Optional[Iterable[Any]] = None,
                         engine: Optional[str] = None) -> pa.Table:
        """Edge betweenness centrality, ``src``, ``dst`` and ``betweenness``
        (float64), as :func:`pathctl.edge_betweenness` gives it for the
        loaded edges (networkx's ``edge_betweenness_centrality`` scaling;
        same ``normalized``, ``k``, ``seed`` and ``sources``). The ticket's
        ``"layout": "edge-betweenness"``."""
        return self._betweenness("edge-betweenness", normalized, False, k, seed, sources, engine)

    def _betweenness(self, layout: str, normalized: Any, endpoints: Any, k: Any, seed: Any,
                     sources: Optional[Iterable[Any]], engine: Optional[str]) -> pa.Table:
        from ._betweenness import check_sample_keywords

        check_sample_keywords(normalized, endpoints, k, seed)
        keys = {"normalized": bool(normalized)}
        if endpoints:
            keys["endpoints"] = True
        if k is not None:
            keys["k"] = int(k)
        if seed is not None:
            keys["seed"] = int(seed)

        def call(client):
            reader = client._get(_NAME, "auto", sources, layout, False, engine or self.engine,
                                 None, keys)
            try:
                return reader.read_all()
            except (pa.ArrowException, OSError) as exc:
                raise _errors.from_flight(exc) from exc

        return self._call(call)

    def vertex_ids(self) -> np.ndarray:
        """The vertex ids in vertex order (the columns of
        :meth:`distance_matrix`), as a numpy array."""
        return self._ids.to_numpy(zero_copy_only=False)


def _check_layout(layout: str) -> None:
    from ._local import LAYOUTS

    if layout not in LAYOUTS:
        raise _errors.UsageError(f"unknown layout {layout!r} (want one of {', '.join(LAYOUTS)})")


def _as_local(exc: _errors.PathctlError) -> _errors.PathctlError:
    """The error the module function raises for the same query. The edges
    were checked by the upload, so an INVALID_ARGUMENT at query time is
    about the request, which the binary refuses as a usage error, unless
    it names a vertex that is not in the graph (InvalidInputError, as the
    binary's). The message loses the server's ``graph "graph": `` prefix,
    a name the user never gave."""
    msg = exc.message
    prefix = f'graph "{_NAME}": '
    if msg.startswith(prefix):
        msg = msg[len(prefix):]
    cls = type(exc)
    if cls is _errors.InvalidInputError and not _errors._UNKNOWN_VERTEX.search(msg):
        cls = _errors.UsageError
    if cls is type(exc) and msg == exc.message:
        return exc
    return cls(msg, exit_code=exc.exit_code, stderr=exc.stderr)


def _collect_ids(reader: pa.RecordBatchReader, id_columns: Tuple[str, str],
                 ids: List[pa.Array]) -> pa.RecordBatchReader:
    """``reader`` passed through, the distinct ids of each batch's id
    columns appended to ``ids`` on the way (the vertex order of
    distance_matrix, which the engine does not send)."""
    import pyarrow.compute as pc

    names = [c for c in id_columns if c in reader.schema.names]

    def batches():
        for batch in reader:
            for name in names:
                column = batch.column(batch.schema.get_field_index(name))
                if pa.types.is_dictionary(column.type):
                    column = column.dictionary_decode()
                ids.append(pc.unique(column))
            yield batch

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def _vertex_order(ids: List[pa.Array]) -> pa.Array:
    """The distinct ids, ascending (numbers by value, strings byte-wise),
    as the engine orders its vertices."""
    import pyarrow.compute as pc

    if not ids:
        return pa.array([], type=pa.int64())
    types = {a.type for a in ids}
    if len(types) > 1:  # src and dst of different types: the engine's common type
        common = pa.large_string() if any(pa.types.is_string(t) or pa.types.is_large_string(t)
                                          for t in types) else pa.int64()
        ids = [a.cast(common) for a in ids]
    unique = pc.unique(pa.chunked_array(ids))
    return unique.take(pc.sort_indices(unique))
