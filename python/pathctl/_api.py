"""The local entry points: apsp, sssp, bfs, stream, distance_matrix and path."""

from __future__ import annotations

import math
import mmap
import os
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _graphs
from ._dataset import dataset_flags, open_dataset
from ._keywords import OPTIONS_DOC, keywords
from ._checks import check_flag
from ._dryrun import DryRun
from ._local import OPTION_NAMES, Run, run_dry_run, run_stream, run_table

_NX_WEIGHT = _graphs.NX_WEIGHT
_SWITCHES = ("unweighted", "reverse", "with_paths")


def _documented(func):
    """``func`` with the shared options appended to its docstring and
    unknown keywords refused with a suggestion (see _keywords)."""
    func.__doc__ = (func.__doc__ or "").rstrip() + "\n" + OPTIONS_DOC
    return keywords(func)


def _progress_name(func: str, progress: Any) -> Optional[str]:
    """The name of the bar of ``progress=True`` (see _progress), None for
    no progress."""
    return f"pathctl.{func}" if check_flag("progress", progress) else None


def _prepare(edges: Any, directed: bool, weight: Any, scope: dict) -> Tuple[Any, bool, dict]:
    """The edges, direction and options (the named keywords of ``scope``,
    a caller's locals()) of a run: a scipy.sparse matrix or a networkx
    graph becomes its edge table and vertex set (see _graphs)."""
    # An option left at None is not passed (as if not given); a switch is,
    # so that Run refuses switch=None as a TypeError.
    options = {name: scope[name] for name in OPTION_NAMES
               if name in scope and (scope[name] is not None or name in _SWITCHES)}
    graph = _graphs.convert(edges, directed=directed, weight=weight, options=options)
    if graph is None:
        return edges, directed, options
    options["vertices"] = graph.vertices
    return graph.edges, graph.directed, options


@_documented
def apsp(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
         layout: str = "pairs", directed: bool = True, with_predecessors: bool = False,
         engine: str = "auto", targets: Optional[Iterable[Any]] = None,
         cutoff: Optional[float] = None, k: Optional[int] = None, reverse: bool = False,
         with_paths: bool = False, weight: Optional[str] = _NX_WEIGHT,
         src_col: Optional[str] = None, dst_col: Optional[str] = None,
         weight_col: Optional[str] = None, unweighted: bool = False,
         vertices: Optional[Iterable[Any]] = None, input_format: Optional[str] = None,
         dist_type: Optional[str] = None, delta: Optional[float] = None,
         threads: Optional[int] = None, mem: Optional[int] = None,
         devices: Optional[str] = None, dry_run: bool = False, progress: bool = False,
         binary: Optional[str] = None,
         env: Optional[Mapping[str, str]] = None, out: Any = None, resume: bool = False,
         overwrite: bool = False, partition_by: Optional[str] = None,
         dataset_block: Optional[int] = None) -> Union[pa.Table, "pyarrow.dataset.Dataset", DryRun]:
    """Shortest paths from every vertex (or from ``sources``) of ``edges``.

    ``edges`` is a path to a Parquet, Arrow IPC, CSV/TSV or DIMACS .gr file,
    Arrow-shaped data (a pyarrow Table, RecordBatch or RecordBatchReader, a
    pandas or polars DataFrame, or an object with ``__arrow_c_stream__``
    such as a DuckDB relation), or a graph object: a scipy.sparse matrix
    (any format; ids are the indices 0..n-1, every one a vertex; weights the
    stored values, an explicit zero an edge of weight 0, as
    scipy.sparse.csgraph reads them) or a networkx Graph, DiGraph,
    MultiGraph or MultiDiGraph (node labels as ids, every node a vertex,
    ``weight`` the edge attribute; parallel edges keep the smallest weight;
    an undirected graph is read as ``directed=False`` whatever ``directed``
    says, its edges having no direction to follow). Data goes to the binary
    as an Arrow IPC file in a memfd on Linux (as an IPC stream on stdin
    elsewhere), and the result comes back the same way: mapped, not copied
    (see the ``_local`` module).

    ``layout`` chooses the result's shape: ``"pairs"`` (source, target,
    distance[, predecessor]; unreachable pairs omitted, each source with
    itself at 0), ``"matrix"`` (source, distance as a fixed-size list in
    vertex order; unreachable is +inf for float distances and null for
    integer ones), ``"stats"`` (source, reachable, eccentricity, sum,
    closeness, harmonic) or ``"nearest"`` with ``sources`` (vertex,
    distance, source: every vertex's nearest source). Ids keep the input's
    type; the distance type follows the weights (int32 when it holds every
    path, int64, float32, float64; hop counts without a weight column).

    ``algorithm`` is one of dijkstra, delta, edge, bfs, bfs-level,
    bellman-ford or auto; ``engine`` is auto, cpu or gpu.

    ``directed=False`` treats each row as both directions (the CLI's
    ``--undirected``).

    ``with_predecessors`` adds a ``predecessor`` column to pairs (null on
    each source's own row: :func:`pathctl.to_pandas` keeps the ids
    integers there, where ``Table.to_pandas()`` makes them float64 with
    NaN).

    ``sources`` (and ``targets``, ``vertices``) is a list of ids: a list,
    numpy array, pandas or polars Series or pyarrow array, each id passed
    exactly as given (``" a"`` is not ``"a"``; ``""`` is an id). One id
    alone (a str, bytes or number) is refused with TypeError, since a
    string would be read as its characters: write ``sources=["12"]``. An
    id with a newline is refused (InvalidInputError). The switches
    (``directed``, ``with_predecessors``, ``unweighted``, ``reverse``,
    ``with_paths``) take a bool or numpy.bool_; anything else (None, "no")
    is a TypeError.

    A note or warning of the binary (about the weight column, say) is
    raised as a :class:`UserWarning`. The whole result is held in memory;
    use :func:`stream` or ``out=`` for results larger than memory. Raises a
    :class:`PathctlError` subclass carrying the engine's message:
    InvalidInputError (bad data, unknown source), UsageError (bad option),
    EngineUnavailableError (``engine="gpu"`` without a GPU),
    NegativeWeightError / NegativeCycleError, and BinaryNotFoundError when
    there is no binary.

    ``out="dir/"`` writes the result as a partitioned Parquet dataset
    there instead (``pathctl run -o dir/``: a file per block of
    ``dataset_block`` sources under ``source_block=NNNNN/``, or one per
    source under ``source=ID/`` with ``partition_by="source"``, and the
    ``_pathctl.json`` manifest last) and returns it as a
    :class:`pyarrow.dataset.Dataset` whose ``to_table()`` is the table
    returned without ``out``. A run killed midway keeps its complete
    blocks: ``resume=True`` computes the rest (and refuses another graph or
    query, UsageError); a directory holding a dataset already is refused
    unless ``resume=True`` or ``overwrite=True``. A matrix's vertex order
    is ``dir/_vertices.parquet``.
    """
    edges, directed, options = _prepare(edges, directed, weight, locals())
    dataset = dataset_flags(out, resume=resume, overwrite=overwrite, partition_by=partition_by,
                            dataset_block=dataset_block)
    run = Run("run", edges, layout=layout, algorithm=algorithm, sources=sources,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options, dataset=dataset, dry_run=check_flag("dry_run", dry_run),
              progress=_progress_name("apsp", progress))
    if dry_run:
        return run_dry_run(run)
    if dataset is not None:
        run.finish()
        return open_dataset(out)
    return run_table(run)


@_documented
def sssp(edges: Any, source: Any, *, algorithm: str = "auto", layout: str = "pairs",
         directed: bool = True, with_predecessors: bool = False, engine: str = "auto",
         targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
         k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
         weight: Optional[str] = _NX_WEIGHT, src_col: Optional[str] = None,
         dst_col: Optional[str] = None, weight_col: Optional[str] = None,
         unweighted: bool = False, vertices: Optional[Iterable[Any]] = None,
         input_format: Optional[str] = None, dist_type: Optional[str] = None,
         delta: Optional[float] = None, threads: Optional[int] = None,
         mem: Optional[int] = None, devices: Optional[str] = None,
         dry_run: bool = False,
         binary: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> Union[pa.Table, DryRun]:
    """Shortest paths from one ``source`` (an external id). Takes the same
    edges, layouts and options as :func:`apsp`; the result has one source."""
    edges, directed, options = _prepare(edges, directed, weight, locals())
    if check_flag("dry_run", dry_run):  # run's plan of the one source: sssp has no --dry-run
        return run_dry_run(Run("run", edges, layout=layout, algorithm=algorithm, sources=[source],
                               directed=directed, with_predecessors=with_predecessors,
                               engine=engine, options=options, dry_run=True))
    run = Run("sssp", edges, layout=layout, algorithm=algorithm, source=source,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options)
    return run_table(run)


@_documented
def bfs(edges: Any, source: Any, *, layout: str = "pairs", directed: bool = True,
        with_predecessors: bool = False, engine: str = "auto",
        targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
        k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
        weight: Optional[str] = _NX_WEIGHT, src_col: Optional[str] = None,
        dst_col: Optional[str] = None, weight_col: Optional[str] = None,
        unweighted: bool = False, vertices: Optional[Iterable[Any]] = None,
        input_format: Optional[str] = None, dist_type: Optional[str] = None,
        delta: Optional[float] = None, threads: Optional[int] = None,
        mem: Optional[int] = None, devices: Optional[str] = None,
        dry_run: bool = False,
        binary: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> Union[pa.Table, DryRun]:
    """Hop counts (int32) from ``source``, weights ignored. Same edges,
    layouts and options as :func:`apsp`."""
    edges, directed, options = _prepare(edges, directed, weight, locals())
    if check_flag("dry_run", dry_run):  # run's plan of the one source: bfs has no --dry-run
        return run_dry_run(Run("run", edges, layout=layout, algorithm="bfs", sources=[source],
                               directed=directed, with_predecessors=with_predecessors,
                               engine=engine, options=options, dry_run=True))
    run = Run("bfs", edges, layout=layout, source=source, directed=directed,
              with_predecessors=with_predecessors, engine=engine, options=options)
    return run_table(run)


@_documented
def stream(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
           layout: str = "pairs", directed: bool = True, with_predecessors: bool = False,
           engine: str = "auto", targets: Optional[Iterable[Any]] = None,
           cutoff: Optional[float] = None, k: Optional[int] = None, reverse: bool = False,
           with_paths: bool = False, weight: Optional[str] = _NX_WEIGHT,
           src_col: Optional[str] = None, dst_col: Optional[str] = None,
           weight_col: Optional[str] = None, unweighted: bool = False,
           vertices: Optional[Iterable[Any]] = None, input_format: Optional[str] = None,
           dist_type: Optional[str] = None, delta: Optional[float] = None,
           threads: Optional[int] = None, mem: Optional[int] = None,
           devices: Optional[str] = None, dry_run: bool = False, progress: bool = False,
           binary: Optional[str] = None,
           env: Optional[Mapping[str, str]] = None) -> Union[pa.RecordBatchReader, DryRun]:
    """Like :func:`apsp`, but returns a RecordBatchReader over the binary's
    output as it arrives, for results larger than memory.

    Each record batch is one block of sources, read from the binary's pipe
    into one buffer that the batch's arrays view: nothing is copied after
    that read (``batch.column(i).to_numpy()`` and, for the matrix layout,
    ``batch.column("distance").values`` are views). A consumer that reduces
    each batch and drops it holds about one block at a time, whatever the
    size of the whole result; ``mem`` (the block planner's budget in bytes)
    bounds a block.

    The call returns once the binary has written the result schema (errors
    found before that, such as bad input, are raised here). An error later
    in the run is raised by the read that reaches it. The process is reaped
    when the reader is exhausted, and killed and reaped when the reader is
    dropped (garbage-collected) before the end: ``del reader``, or let it go
    out of scope. pyarrow's ``close()`` does not release a Python-backed
    reader, so ``close()`` alone leaves the process waiting on a full pipe
    until the reader is dropped. Ctrl-C (or any exception) while this call
    waits for the first block, or inside a read, kills and reaps the
    process. An exception in the body of a loop over a reader held in a
    variable does not reach the reader (it can still be read): drop it, or
    loop over ``stream(...)`` itself, whose reader goes with the loop.
    """
    edges, directed, options = _prepare(edges, directed, weight, locals())
    run = Run("run", edges, layout=layout, algorithm=algorithm, sources=sources,
              directed=directed, with_predecessors=with_predecessors, engine=engine,
              options=options, output="pipe", dry_run=check_flag("dry_run", dry_run),
              progress=_progress_name("stream", progress))
    return run_dry_run(run) if dry_run else run_stream(run)


# What distance_matrix's unreachable= takes besides a number.
UNREACHABLE_MASK = "mask"


# The dtypes distance_matrix's dtype= takes, by the binary's names
# (--matrix-type); None is the binary's "float" rule.
_MATRIX_DTYPES = ("float32", "float64", "int32", "int64")
MATRIX_FLOAT = "float"


def matrix_type(dtype: Any) -> str:
    """The binary's --matrix-type for distance_matrix's ``dtype``: "float"
    (float32 where every distance is exact in it, else float64) for
    None, else the numpy dtype's name, one of _MATRIX_DTYPES."""
    from ._errors import UsageError

    if dtype is None:
        return MATRIX_FLOAT
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in _MATRIX_DTYPES:
        raise UsageError(f"dtype={dtype!r}: want np.float32, np.float64, np.int32 or np.int64 "
                         f"(or None: float32 where every distance is exact in it, else float64)")
    return name


@_documented
def distance_matrix(edges: Any, *, algorithm: str = "auto", sources: Optional[Iterable[Any]] = None,
                    directed: bool = True, engine: str = "auto", dtype: Any = None,
                    unreachable: Any = None,
                    out: Optional[np.ndarray] = None, targets: Optional[Iterable[Any]] = None,
                    cutoff: Optional[float] = None, k: Optional[int] = None,
                    reverse: bool = False, with_paths: bool = False,
                    weight: Optional[str] = _NX_WEIGHT, src_col: Optional[str] = None,
                    dst_col: Optional[str] = None, weight_col: Optional[str] = None,
                    unweighted: bool = False, vertices: Optional[Iterable[Any]] = None,
                    input_format: Optional[str] = None, dist_type: Optional[str] = None,
                    delta: Optional[float] = None, threads: Optional[int] = None,
                    mem: Optional[int] = None, devices: Optional[str] = None,
                    dry_run: bool = False, progress: bool = False,
                    binary: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                    ) -> Union[Tuple[Union[np.ndarray, np.ma.MaskedArray], np.ndarray], DryRun]:
    """The distances as a 2-D numpy array, and the vertex ids of its columns.

    Row i holds the distances from the i-th source (every vertex in vertex
    order, or ``sources`` in the order given), column j the distance to
    ``vertex_ids[j]``. Vertex order is the ascending order of the ids.

    No copy: on Linux the binary writes the matrix straight into this
    process's memory (an anonymous mapping made here at its request; a
    memfd mapped here where the system does not allow that write, or with
    ``PATHCTL_RESULT_PEER=off``), as one record batch whatever the number
    of blocks it computed, and the array is a (writable) view of that
    memory; it is released when the array is. Where there are no memfds the result comes
    through a pipe, one record batch per block: several are joined with
    one copy, and a single one is a read-only view of the buffer it was
    read into.

    ``dtype`` is the array's dtype. The default, None, follows
    scipy.sparse.csgraph: unreachable pairs are ``inf``, and the dtype is
    float32 wherever every finite distance is exact in float32 (float32
    weights, or integer weights and hop counts whose bound, n−1 arcs of
    the heaviest weight, at most ``cutoff``, is ≤ 2**24), else float64.
    ``np.float32``, ``np.float64``, ``np.int32`` or ``np.int64`` ask for
    that dtype, refused (UsageError) where it cannot hold every distance
    exactly. An integer dtype holds half a float64's bytes and keeps
    integer distances as integers; unreachable is then a sentinel (see
    ``unreachable``). The engine computes in its distance type either way
    (``dist_type``); the binary converts each row as it writes it into
    this process's memory, so the array is still not a copy.

    ``unreachable`` says what an unreachable pair holds; no n-by-n side
    array is made unless asked for:

    - ``None`` (default): +inf for float dtypes; for an integer dtype the
      type's maximum (``np.iinfo(D.dtype).max``, 2147483647 for int32),
      which is what the engine stores under Arrow's null: nothing is
      written or copied.
    - a number: written where pairs are unreachable (for integers, found
      from Arrow's validity bitmap, a bit per pair; for floats, where the
      distance is +inf), in place in the mapping, which belongs to this
      result alone (a copy first where the result came through a pipe).
      For an integer dtype it must fit the type (``-1`` say); ``np.inf``
      needs a float dtype.
    - ``"mask"``: a :class:`numpy.ma.MaskedArray` whose ``.data`` is the
      view above and whose ``.mask`` is True where the pair is unreachable.
      The mask is an n-by-n bool array (a byte per pair, eight times
      Arrow's bitmap), built on request only.

    ``out``, as in numpy: an array of the result's shape (sources × vertices)
    and dtype (``dtype``'s, or the default's: ``D.dtype`` of an earlier
    call) to write the distances into, returned as ``D`` (a masked array
    over it for ``unreachable="mask"``). Its memory is there already, so a
    matrix computed again and again into one array skips what a new result
    costs most: the first touch of fresh pages (on Linux the binary writes
    the rows straight into ``out``; elsewhere they are copied in). A
    shape or dtype that does not match raises ValueError, ``out`` left as
    it was where the binary could tell in time, else partly written.

    ``vertex_ids`` is a numpy array of the ids (an object array of str for
    string ids; 0..n-1 for a scipy.sparse matrix, so that ``D`` is what
    ``scipy.sparse.csgraph.shortest_path`` returns). Edges and options are
    those of :func:`apsp`.
    """
    edges, directed, options = _prepare(edges, directed, weight, locals())
    _check_unreachable(unreachable)
    values = matrix_type(dtype)
    direct = None
    if out is not None:
        if not isinstance(out, np.ndarray) or out.ndim != 2 or not out.flags.writeable:
            raise ValueError("out must be a writable 2-D numpy array")
        if out.flags.c_contiguous:
            direct = out
    run = Run("run", edges, layout="matrix", algorithm=algorithm, sources=sources,
              directed=directed, engine=engine, vertices_out=not check_flag("dry_run", dry_run),
              options=options, out=direct, extra_flags=["--matrix-type", values], dry_run=dry_run,
              progress=_progress_name("distance_matrix", progress))
    if dry_run:
        return run_dry_run(run)
    run.keep_tmp = True
    try:
        table = run_table(run, keep_mapping=True)
        vertices = run.read_vertices()
    finally:
        run.cleanup()
    ids = vertices.to_numpy(zero_copy_only=False)
    # The result's views hold the mapping from here: the run drops it, so
    # the mapping goes with the caller's last view even while the run's
    # threads still wait for the binary to exit.
    mapping, run.mapping = run.mapping, None
    if out is None:
        return _matrix(table, unreachable, private=True, mapping=mapping), ids
    return _into(out, table, unreachable, run, mapping), ids


def _into(out: np.ndarray, table: pa.Table, unreachable: Any, run: Any, mapping: Any) -> Union[np.ndarray, np.ma.MaskedArray]:
    """distance_matrix's result in out: the values are there already where
    the binary wrote them into it (run.values_in_out); else copied in."""
    column = table.column("distance")
    value_type = column.type.value_type
    shape = (table.num_rows, column.type.list_size)
    dtype = np.dtype(value_type.to_pandas_dtype())
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(f"out is {out.dtype} {out.shape}; the matrix is {dtype} {shape}")
    if run.values_in_out:
        D = _matrix(table, unreachable, private=True, mapping=mapping, values=out.reshape(-1))
    else:
        D = _matrix(table, unreachable, private=False)
        np.copyto(out, D.data if isinstance(D, np.ma.MaskedArray) else D)
    if isinstance(D, np.ma.MaskedArray):
        return np.ma.MaskedArray(out, mask=D.mask, copy=False, fill_value=D.fill_value)
    return out


@_documented
def path(edges: Any, source: Any, target: Any, *, algorithm: str = "auto", directed: bool = True,
         engine: str = "auto", cutoff: Optional[float] = None, reverse: bool = False,
         weight: Optional[str] = _NX_WEIGHT, src_col: Optional[str] = None,
         dst_col: Optional[str] = None, weight_col: Optional[str] = None,
         unweighted: bool = False, vertices: Optional[Iterable[Any]] = None,
         input_format: Optional[str] = None, dist_type: Optional[str] = None,
         delta: Optional[float] = None, threads: Optional[int] = None,
         mem: Optional[int] = None, devices: Optional[str] = None,
         dry_run: bool = False, binary: Optional[str] = None,
         env: Optional[Mapping[str, str]] = None) -> Union[Tuple[float, List[Any]], DryRun]:
    """One shortest path of ``edges``: ``(distance, ids)`` with the ids from
    ``source`` to ``target``, both included. ``(math.inf, [])`` when the
    target is unreachable. Edges and options are those of :func:`apsp`
    (``reverse=True`` walks the arcs backwards; ``targets``, ``k`` and
    ``with_paths`` are this function's own)."""
    edges, directed, options = _prepare(edges, directed, weight, locals())
    run = Run("run", edges, layout="pairs", algorithm=algorithm, sources=[source],
              directed=directed, engine=engine,
              options={**options, "targets": [target], "with_paths": True},
              dry_run=check_flag("dry_run", dry_run))
    if dry_run:
        return run_dry_run(run)
    table = run_table(run)
    if table.num_rows == 0:
        return math.inf, []
    return table.column("distance")[0].as_py(), table.column("path")[0].as_py()


def matrix_from_table(table: pa.Table, unreachable: Any = None) -> Union[np.ndarray, np.ma.MaskedArray]:
    """The ``distance`` column of a matrix-layout table as a 2-D array, a
    view of the table's buffer where it has one record batch (see
    :func:`distance_matrix` for ``unreachable``). A sentinel is written in
    place only under Arrow's nulls, where the table holds no value; +inf of
    float distances is replaced in a copy, so the table stays as it was."""
    _check_unreachable(unreachable)
    return _matrix(table, unreachable, private=False)


def _check_unreachable(unreachable: Any) -> None:
    from ._errors import UsageError

    if unreachable is None or (isinstance(unreachable, str) and unreachable == UNREACHABLE_MASK):
        return
    if isinstance(unreachable, (bool, np.bool_)) or not isinstance(unreachable, (int, float, np.integer, np.floating)):
        raise UsageError(f"unreachable={unreachable!r}: want None, a number or {UNREACHABLE_MASK!r}")


def _matrix(table: pa.Table, unreachable: Any, private: bool,
            mapping: Optional[mmap.mmap] = None,
            values: Optional[np.ndarray] = None) -> Union[np.ndarray, np.ma.MaskedArray]:
    from ._errors import UsageError

    column = table.column("distance")
    n = column.type.list_size
    rows = table.num_rows
    meta = table.schema.metadata or {}
    if rows == 0 and b"pathctl.num_vertices" in meta:
        # arrow-go cannot declare fixed_size_list[0], so an empty graph's
        # matrix says [1]; the metadata has the true vertex count.
        n = int(meta[b"pathctl.num_vertices"])
    value_type = column.type.value_type
    dtype = np.dtype(value_type.to_pandas_dtype())
    is_int = pa.types.is_integer(value_type)
    fill = None
    if unreachable is not None and not isinstance(unreachable, str):
        if is_int:
            info = np.iinfo(dtype)
            if isinstance(unreachable, (float, np.floating)) and not float(unreachable).is_integer():
                raise UsageError(
                    f"unreachable={unreachable!r}: the distances are {dtype} and cannot hold it; "
                    f"use an integer (-1, or None for {info.max}), or float distances for inf (distance_matrix with dtype=None or np.float64)")
            if not info.min <= int(unreachable) <= info.max:
                raise UsageError(f"unreachable={unreachable!r} does not fit the {dtype} distances")
            fill = dtype.type(int(unreachable))
            if fill == info.max:
                fill = None  # already there
        elif not (np.isinf(unreachable) and unreachable > 0):
            fill = dtype.type(unreachable)
    chunks = [c for c in column.chunks if len(c)]
    parts = [_values_part(c.values.slice(c.offset * n, len(c) * n), dtype) for c in chunks]
    if values is not None:
        # The values lie in this array (distance_matrix's out=), not in the
        # table, which holds their validity.
        if len(parts) != 1 or len(parts[0][0]) != len(values):
            raise ValueError(f"a matrix of {sum(len(p[0]) for p in parts)} values in {len(parts)} batches for an array of {len(values)}")
        parts = [(values, parts[0][1], parts[0][2])]
    if not parts:
        data = np.empty((0,), dtype=dtype)
    elif len(parts) == 1:
        data = parts[0][0]
    else:
        data = _join([p[0] for p in parts], dtype, mapping)  # the one copy
    owned = len(parts) > 1
    if fill is not None:
        if is_int:
            if not owned and not data.flags.writeable:
                data, owned = data.copy(), True
            pos = 0
            for view, validity, start in parts:
                if validity is not None:
                    _fill_nulls(data[pos:pos + len(view)], validity, start, fill)
                pos += len(view)
        else:
            if not owned and not (private and data.flags.writeable):
                data, owned = data.copy(), True
            _fill_inf(data, fill)
    data = data.reshape(rows, n)
    if isinstance(unreachable, str):
        if is_int:
            masks = [_null_mask(len(view), validity, start) for view, validity, start in parts]
            mask = np.concatenate(masks) if masks else np.zeros(0, dtype=bool)
        else:
            mask = np.isposinf(data.ravel())
        return np.ma.MaskedArray(data, mask=mask.reshape(rows, n), copy=False,
                                 fill_value=np.iinfo(dtype).max if is_int else np.inf)
    return data


def _values_part(values: pa.Array, dtype: np.dtype) -> Tuple[np.ndarray, Optional[pa.Buffer], int]:
    """A numpy view of a primitive array's values, its validity buffer (None
    without nulls) and its offset in bits. The view is writable where the
    memory is (a result mapped from a memfd), read-only otherwise."""
    validity, data = values.buffers()[:2]
    start, length = values.offset, len(values)
    root = data
    while root.parent is not None:
        root = root.parent
    if root.is_mutable:
        offset = data.address - root.address + start * dtype.itemsize
        view = np.frombuffer(root, dtype=dtype, count=length, offset=offset)
    else:
        view = np.frombuffer(data, dtype=dtype, count=start + length)[start:]
    if validity is None or values.null_count == 0:
        return view, None, start
    return view, validity, start


def _join(views: list, dtype: np.dtype, mapping: Optional[mmap.mmap]) -> np.ndarray:
    """The views one after the other in a new array, copied by a few threads
    at once where the result is large (numpy copies without the GIL; one
    thread does not saturate memory). Where a view lies in ``mapping`` (a
    result memfd this process alone holds), its pages are given back to the
    system (MADV_REMOVE) once copied, so the memfd and the copy together
    stay a few blocks above the result's size instead of twice it. Only
    pages wholly inside a view's values go: the validity bitmaps beside
    them stay readable."""
    out = np.empty(sum(len(v) for v in views), dtype=dtype)
    remove = getattr(mmap, "MADV_REMOVE", None)
    base = size = 0
    if mapping is not None and remove is not None:
        buf = pa.py_buffer(mapping)
        base, size = buf.address, buf.size
    starts = np.cumsum([0] + [len(v) for v in views[:-1]])

    def copy(i: int) -> None:
        view = views[i]
        out[starts[i]:starts[i] + len(view)] = view
        addr = view.__array_interface__["data"][0]
        if size and base <= addr and addr + view.nbytes <= base + size:
            lo = -(-(addr - base) // mmap.PAGESIZE) * mmap.PAGESIZE
            hi = (addr + view.nbytes - base) // mmap.PAGESIZE * mmap.PAGESIZE
            if hi > lo:
                try:
                    mapping.madvise(remove, lo, hi - lo)
                except OSError:
                    pass  # the pages stay until the mapping goes: only memory

    workers = min(len(views), os.cpu_count() or 1, _JOIN_THREADS)
    if out.nbytes < _JOIN_THREADED_BYTES or workers < 2:
        for i in range(len(views)):
            copy(i)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(copy, range(len(views))))
    return out


# Joining several blocks: threads at most, and the size below which one
# thread copies (starting threads costs more than it saves).
_JOIN_THREADS = 8
_JOIN_THREADED_BYTES = 64 << 20


# Bytes of validity bitmap looked at per step when filling or masking.
_BITMAP_STEP = 1 << 17


def _fill_nulls(view: np.ndarray, validity: pa.Buffer, start: int, value: Any) -> None:
    """Write ``value`` into view[i] for each i whose bit start+i of the
    validity bitmap is 0, looking only at the bitmap's bytes that are not
    all ones, a step at a time (constant extra memory)."""
    bits = np.frombuffer(validity, dtype=np.uint8)
    first, last = start // 8, (start + len(view) + 7) // 8
    lanes = np.arange(8)
    for lo in range(first, last, _BITMAP_STEP):
        chunk = bits[lo:min(last, lo + _BITMAP_STEP)]
        partial = np.flatnonzero(chunk != 0xFF)
        if partial.size == 0:
            continue
        unpacked = np.unpackbits(chunk[partial][:, None], axis=1, bitorder="little")
        positions = ((partial + lo)[:, None] * 8 + lanes)[unpacked == 0] - start
        positions = positions[(positions >= 0) & (positions < len(view))]
        view[positions] = value


def _fill_inf(data: np.ndarray, value: Any) -> None:
    step = _BITMAP_STEP * 8
    for lo in range(0, len(data), step):
        part = data[lo:lo + step]
        np.putmask(part, np.isposinf(part), value)


def _null_mask(length: int, validity: Optional[pa.Buffer], start: int) -> np.ndarray:
    if validity is None:
        return np.zeros(length, dtype=bool)
    bits = np.frombuffer(validity, dtype=np.uint8)
    valid = np.unpackbits(bits, bitorder="little", count=start + length)[start:]
    return valid == 0


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
