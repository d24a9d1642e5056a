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

The work is split by concern: ``_discovery`` finds the binary, ``_flags``
turns keywords into its flags, ``_process`` runs it (start, wait, reap,
errors), ``_handoff`` moves edges and results over memfds or pipes, and
``_peer`` is the result peer. This module joins them into Run, and
re-exports their names for the rest of the package.
"""

from __future__ import annotations

import logging
import mmap
import os
import weakref
from typing import Any, Iterable, List, Mapping, Optional, Sequence

import pyarrow as pa

from . import _errors
from ._checks import check_flag, check_id_list
from ._discovery import INSTALL_HINT, _bundled_path, bundled_binary, find_binary  # noqa: F401
from ._flags import (LAYOUTS, OPTION_NAMES, _BOOL_FLAGS, _VALUE_FLAGS,  # noqa: F401
                     check_narrowing, check_options, option_flags)
from ._handoff import (HANDOFF_ENV, _close_fds, _memfd_works, _new_memfd,  # noqa: F401
                       _RunHandoff, _unified_dictionaries, handoff_mode, vertex_array)
from ._dryrun import DryRun
from ._inputs import PathInput, as_edge_input
from ._peer import (POPULATE_ENV, RESULT_PEER_ENV, _MADV_POPULATE_WRITE,  # noqa: F401
                    _MAP_NORESERVE, _POPULATE_CHUNK, _PR_SET_PTRACER, _address_of,
                    _allow_writes_from, _populate, _populate_workers, _Populator,
                    _result_peer_wanted, _ResultPeer)
from ._progress import Progress
from ._process import (DONE_LINE, DONE_LINE_ENV, _STDERR_KEPT, _is_broken_pipe,  # noqa: F401
                       _kill_quietly, _ProcessBatches, _RunProcess, _warn_user)

log = logging.getLogger("pathctl")


class Run(_RunProcess, _RunHandoff):
    """One pathctl process. With ``output="pipe"``, ``open_output()`` gives its
    output stream; otherwise (where memfds work) ``read_mapped()`` waits for
    it and maps its result. ``finish()`` reaps it and raises the engine's
    error; ``abort()`` kills and reaps it."""

    def __init__(self, command: str, edges: Any, *, layout: str = "pairs",
                 algorithm: Optional[str] = None, sources: Optional[Iterable[Any]] = None,
                 source: Any = None, directed: bool = True, with_predecessors: bool = False,
                 engine: str = "auto", vertices_out: bool = False, options: Mapping[str, Any] = (),
                 output: str = "auto", out: Optional[Any] = None, extra_flags: Iterable[str] = (),
                 dataset: Optional[Sequence[str]] = None, dry_run: bool = False,
                 progress: Optional[str] = None):
        # extra_flags: a layout's own flags, checked by its caller
        # (_betweenness), passed as they are. dataset: the flags of a
        # result written as a dataset directory (_dataset), not handed back.
        # dry_run: the binary reads the graph and prints its plan as JSON on
        # stdout (run_dry_run), writing nothing. progress: the name of a bar
        # (or of log lines) that shows the binary's progress lines
        # (_progress), None for none.
        options = dict(options)
        mode = handoff_mode()
        # "memfd": the result is an IPC file in a memfd; "pipe": an IPC
        # stream on stdout (and a dry run's plan).
        self.output = "memfd" if output != "pipe" and mode == "memfd" and not dry_run else "pipe"
        if dataset is not None and not dry_run:
            self.output = "dataset"
        self._progress: Optional[Progress] = None
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
        if self.output == "dataset" or (dry_run and dataset is not None):
            args += list(dataset)  # a dry run plans the dataset, its plan on stdout
        elif self.output == "memfd":
            self._out_fd = _new_memfd("pathctl-result")
            self._fds.append(self._out_fd)
            out_path = f"/dev/fd/{self._out_fd}"
            self._names[out_path] = "the result"
            args += ["--format", "arrow", "-o", out_path]
            # Only run takes a result peer: sssp and bfs write their one
            # row into the memfd.
            if layout == "matrix" and command == "run" and _result_peer_wanted():
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
        args += option_flags(options)
        args += list(extra_flags)
        if dry_run:
            args += ["--dry-run", "--json"]
        if progress is not None:
            # Made last: nothing above can fail and leave its bar open.
            self._progress = Progress(progress)
            args += self._progress.flags
        args.append(edges_arg)
        self.args = args
        log.debug("pathctl: running %s", " ".join(args))
        feeding = not isinstance(self._input, PathInput) and mode == "pipe"
        self._start(args, binary, env, feeding)


def run_stream(run: Run) -> pa.RecordBatchReader:
    assert run.output == "pipe"
    reader = run.open_output()
    return pa.RecordBatchReader.from_batches(reader.schema, _ProcessBatches(run, reader))


def run_dry_run(run: Run) -> DryRun:
    """The plan a dry run printed on stdout (``--dry-run --json``)."""
    try:
        text = run.proc.stdout.read()
    except BaseException:
        run.abort()
        raise
    run.finish()
    try:
        return DryRun.from_json(text.decode("utf-8"))
    except (ValueError, KeyError, TypeError) as exc:
        raise _errors.PathctlError(f"pathctl exited 0 but its dry run printed no plan: {exc}",
                                   exit_code=0, stderr=run.stderr) from exc


def run_table(run: Run, keep_mapping: bool = False) -> pa.Table:
    """The whole result: mapped from the run's memfd, or read from its pipe.
    The table's buffers hold the mapping; the run keeps it too only with
    keep_mapping (distance_matrix hands it on), since the run's threads
    can outlive the caller's last view while the binary exits."""
    if run.output == "memfd":
        try:
            table = run.read_mapped()
        except BaseException:
            # A KeyboardInterrupt while waiting: stop the binary.
            _kill_quietly(run.proc)
            raise
        if not keep_mapping:
            run.mapping = None
        return table
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


__all__: Sequence[str] = ("Run", "run_dry_run", "run_stream", "run_table", "find_binary", "handoff_mode")
