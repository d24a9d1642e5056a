"""The local entry points: apsp, sssp, bfs, stream, distance_matrix and path."""

from __future__ import annotations

import math
from typing import Any, Iterable, List, Optional, Tuple, Union

import numpy as np
import pyarrow as pa

from ._local import Run, run_stream, run_table


def apsp(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
         layout: str = "pairs", directed: bool = True, with_predecessors: bool = False,
         engine: str = "auto", **options: Any) -> pa.Table:
    """Shortest paths from every vertex (or from ``sources``) of ``edges``.

    ``edges`` is a path to a Parquet, Arrow IPC, CSV/TSV or DIMACS .gr file,
    or Arrow-shaped data: a pyarrow Table, RecordBatch or RecordBatchReader, a
    pandas or polars DataFrame, or an object with ``__arrow_c_stream__`` (a
    DuckDB relation). Data is streamed to the binary as Arrow IPC on stdin.

    ``layout`` chooses the result's shape: ``"pairs"`` (source, target,
    distance[, predecessor]; unreachable pairs omitted, each source with
    itself at 0), ``"matrix"`` (source, distance as a fixed-size list in
    vertex order; unreachable is +inf for float distances and null for
    integer ones) or ``"stats"`` (source, reachable, eccentricity, sum,
    closeness, harmonic). Ids keep the input's type; the distance type
    follows the weights (int32 when it holds every path, int64, float32,
    float64; hop counts without a weight column).

    ``algorithm`` is one of dijkstra, delta, edge, bfs, bfs-level,
    bellman-ford or auto; ``engine`` is auto, cpu or gpu.

    ``directed=False`` treats each row as both directions (the CLI's
    ``--undirected``).

    Narrower questions (``**options``, as the CLI's flags): ``targets`` (ids:
    only those columns, in that order), ``cutoff`` (longer distances count
    as unreachable), ``k`` (per source the k nearest other vertices, ranked),
    ``reverse`` (distances to the sources along incoming arcs),
    ``with_paths`` (a ``path`` list column on pairs) and
    ``layout="nearest"`` with ``sources`` (every vertex's nearest source).

    Options (``**options``): ``src_col``, ``dst_col``, ``weight_col`` (column
    names, default src, dst, weight), ``unweighted``, ``vertices`` (the
    whole vertex set, ids as a list, array or Series: isolated vertices
    exist only through it; the CLI's ``--vertices``), ``dist_type``,
    ``delta``, ``threads``, ``mem`` (block planner budget in bytes),
    ``input_format`` (for a path whose extension does not say),
    ``binary`` (the executable; default the one a wheel bundles, then
    $PATHCTL_BIN, then PATH) and ``env`` (extra environment variables for
    the process). A note or warning of the binary (about the weight column,
    say) is raised as a :class:`UserWarning`.

    The whole result is held in memory; use :func:`stream` for results
    larger than memory. Raises a :class:`PathctlError` subclass carrying the
    engine's message: InvalidInputError (bad data, unknown source),
    UsageError (bad option), EngineUnavailableError (``engine="gpu"``
    without a GPU), NegativeWeightError / NegativeCycleError, and
    BinaryNotFoundError when there is no binary.
    """
    run = Run("run", edges, layout=layout, algorithm=algorithm, sources=sources,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options)
    return run_table(run)


def sssp(edges: Any, source: Any, *, algorithm: str = "auto", layout: str = "pairs",
         directed: bool = True, with_predecessors: bool = False, engine: str = "auto",
         **options: Any) -> pa.Table:
    """Shortest paths from one ``source`` (an external id). Takes the same
    edges, layouts and options as :func:`apsp`; the result has one source."""
    run = Run("sssp", edges, layout=layout, algorithm=algorithm, source=source,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options)
    return run_table(run)


def bfs(edges: Any, source: Any, *, layout: str = "pairs", directed: bool = True,
        with_predecessors: bool = False, engine: str = "auto", **options: Any) -> pa.Table:
    """Hop counts (int32) from ``source``, weights ignored. Same edges,
    layouts and options as :func:`apsp`."""
    run = Run("bfs", edges, layout=layout, source=source, directed=directed,
              with_predecessors=with_predecessors, engine=engine, options=options)
    return run_table(run)


def stream(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
           layout: str = "pairs", directed: bool = True, with_predecessors: bool = False,
           engine: str = "auto", **options: Any) -> pa.RecordBatchReader:
    """Like :func:`apsp`, but returns a RecordBatchReader over the binary's
    output as it arrives, for results larger than memory.

    The call returns once the binary has written the result schema (errors
    found before that, such as bad input, are raised here). An error later
    in the run is raised by the read that reaches it. The process is reaped
    when the reader is exhausted, and killed and reaped when the reader is
    dropped (garbage-collected) before the end: ``del reader``, or let it go
    out of scope. pyarrow's ``close()`` does not release a Python-backed
    reader, so ``close()`` alone leaves the process waiting on a full pipe
    until the reader is dropped.
    """
    run = Run("run", edges, layout=layout, algorithm=algorithm, sources=sources,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options)
    return run_stream(run)


def distance_matrix(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
                    directed: bool = True, engine: str = "auto",
                    **options: Any) -> Tuple[Union[np.ndarray, np.ma.MaskedArray], np.ndarray]:
    """The distances as a 2-D numpy array, and the vertex ids of its columns.

    Row i holds the distances from the i-th source (every vertex in vertex
    order, or ``sources`` in the order given), column j the distance to
    ``vertex_ids[j]``. Vertex order is the ascending order of the ids.

    No copy of the distances is made when the engine delivers the matrix as
    one record batch (the usual case): the array is a read-only view of the
    Arrow buffer the result was read into. A result that arrives in several
    batches (very large runs, or a small ``mem`` budget) is concatenated
    once.

    Unreachable pairs: for float distances the array is a plain ndarray
    holding +inf. For integer distances (int32/int64: integer weights and
    hop counts) Arrow marks unreachable pairs null, and an integer array has
    no value to spare for them without a copy, so the result is a
    :class:`numpy.ma.MaskedArray` whose ``.data`` is the zero-copy view and
    whose ``.mask`` is True where the pair is unreachable (the values under
    the mask are the engine's integer infinity, the type's maximum, and
    ``.filled()`` fills them with that maximum). Use ``D.filled(-1)`` or
    ``D.astype(float).filled(np.inf)`` for other conventions (both copy).

    ``vertex_ids`` is a numpy array of the ids (an object array of str for
    string ids). Options are those of :func:`apsp`.
    """
    run = Run("run", edges, layout="matrix", algorithm=algorithm, sources=sources,
              directed=directed, engine=engine, vertices_out=True, options=options)
    run.keep_tmp = True
    try:
        table = run_table(run)
        vertices = run.read_vertices()
    finally:
        run.cleanup()
    return matrix_from_table(table), vertices.to_numpy(zero_copy_only=False)


def path(edges: Any, source: Any, target: Any, *, algorithm: str = "auto", directed: bool = True,
         engine: str = "auto", **options: Any) -> Tuple[float, List[Any]]:
    """One shortest path of ``edges``: ``(distance, ids)`` with the ids from
    ``source`` to ``target``, both included. ``(math.inf, [])`` when the
    target is unreachable. Edges and options are those of :func:`apsp`
    (``reverse=True`` walks the arcs backwards)."""
    run = Run("run", edges, layout="pairs", algorithm=algorithm, sources=[source],
              directed=directed, engine=engine,
              options={**options, "targets": [target], "with_paths": True})
    table = run_table(run)
    if table.num_rows == 0:
        return math.inf, []
    return table.column("distance")[0].as_py(), table.column("path")[0].as_py()


def matrix_from_table(table: pa.Table) -> Union[np.ndarray, np.ma.MaskedArray]:
    """The ``distance`` column of a matrix-layout table as a 2-D array (see
    :func:`distance_matrix` for views, copies and unreachable pairs)."""
    column = table.column("distance")
    n = column.type.list_size
    rows = table.num_rows
    meta = table.schema.metadata or {}
    if rows == 0 and b"pathctl.num_vertices" in meta:
        # arrow-go cannot declare fixed_size_list[0], so an empty graph's
        # matrix says [1]; the metadata has the true vertex count.
        n = int(meta[b"pathctl.num_vertices"])
    parts = []
    for chunk in column.chunks:
        if len(chunk) == 0:
            continue
        values = chunk.values.slice(chunk.offset * n, len(chunk) * n)
        parts.append(_values_view(values))
    value_type = column.type.value_type
    dtype = np.dtype(value_type.to_pandas_dtype())
    if not parts:
        data, mask = np.empty((0,), dtype=dtype), None
    elif len(parts) == 1:
        data, mask = parts[0]
    else:
        data = np.concatenate([p[0] for p in parts])
        masks = [p[1] if p[1] is not None else np.zeros(len(p[0]), dtype=bool) for p in parts]
        mask = np.concatenate(masks) if any(p[1] is not None for p in parts) else None
    data = data.reshape(rows, n)
    if pa.types.is_integer(value_type):
        if mask is None:
            mask = np.zeros(data.shape, dtype=bool)
        return np.ma.MaskedArray(data, mask=mask.reshape(rows, n), copy=False,
                                 fill_value=np.iinfo(dtype).max)
    if mask is not None and mask.any():
        return np.ma.MaskedArray(data, mask=mask.reshape(rows, n), copy=False)
    return data


def _values_view(values: pa.Array) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """A numpy view of a primitive array's values buffer, and its null mask
    (True = null) or None when it has no nulls."""
    dtype = np.dtype(values.type.to_pandas_dtype())
    validity, data = values.buffers()[:2]
    start, length = values.offset, len(values)
    view = np.frombuffer(data, dtype=dtype, count=start + length)[start:]
    if validity is None or values.null_count == 0:
        return view, None
    bits = np.frombuffer(validity, dtype=np.uint8)
    valid = np.unpackbits(bits, bitorder="little", count=start + length)[start:]
    return view, valid == 0


def info(*, binary: Optional[str] = None) -> dict:
    """What ``pathctl info --json`` reports: the version, and each engine
    with whether it is available here and why not (``engines`` is a list of
    dicts with ``name`` and ``available``; ``default_engine`` names the one
    ``engine="auto"`` picks)."""
    import json
    import subprocess

    from . import _errors
    from ._local import find_binary

    exe = find_binary(binary)
    proc = subprocess.run([exe, "info", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise _errors.from_exit(proc.returncode, proc.stderr)
    return json.loads(proc.stdout)


def gpu_available(*, binary: Optional[str] = None) -> bool:
    """Whether the binary's GPU engine can run here."""
    return any(e.get("name") == "gpu" and e.get("available") for e in info(binary=binary).get("engines", []))
