"""All-pairs shortest paths on a Spark cluster.

:func:`apsp` splits the sources into blocks, one Spark task per block, and
runs each block with ``mapInArrow`` on an executor: through the executor's
own ``pathctl`` binary (its GPU where Spark assigned one), or against one of
a list of ``pathctl serve`` endpoints. Spark does all the scheduling; there
is no scheduler of ours.

Memory: the edges are collected to the driver as one Arrow table, written
as Arrow IPC bytes and broadcast, so the whole edge table must fit in the
driver's memory (about twice: the table and its IPC bytes) and once in each
executor's memory (the broadcast value, read without a copy), plus once per
running task in the binary's own memory. This suits graphs up to a few
hundred million edges; the output, n² pairs, is what grows, and it stays
distributed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _errors, _spark_dataset
from ._checks import check_flags, check_id_list

SPARK_LAYOUTS = ("pairs", "stats")


def apsp(edges_df: Any, *, sources: Optional[Iterable[Any]] = None,
         block_size: Optional[int] = None, endpoints: Optional[Sequence[str]] = None,
         algorithm: str = "auto", layout: str = "pairs", directed: bool = True,
         with_predecessors: bool = False, engine: str = "auto", src_col: str = "src",
         dst_col: str = "dst", weight_col: str = "weight", unweighted: bool = False,
         token: Optional[str] = None, tls_root_certs: Optional[bytes] = None,
         binary: Optional[str] = None, graph_name: Optional[str] = None,
         targets: Optional[Iterable[Any]] = None, cutoff: Optional[float] = None,
         k: Optional[int] = None, reverse: bool = False, with_paths: bool = False,
         out: Any = None, overwrite: bool = False) -> Any:
    """Shortest paths of the edges in Spark DataFrame ``edges_df`` from every
    vertex (or from ``sources``), as a Spark DataFrame in the ``pairs``
    (source, target, distance[, predecessor]) or ``stats`` (source,
    reachable, eccentricity, sum, closeness, harmonic) layout of
    :func:`pathctl.apsp`.

    ``block_size`` sources go to one task (default: the sources spread
    evenly over the default parallelism, one block per task slot: each
    block's binary already runs on every core it is given, and a second
    wave of tasks would add only Spark's own cost per task, about 0.2 s on
    a local executor). Without ``endpoints`` every task runs
    the executor's local binary (``binary``, else $PATHCTL_BIN, else PATH),
    on the GPUs Spark assigned to the task (``--devices``) when GPU
    scheduling is on. With ``endpoints`` (Flight URIs of ``pathctl
    serve``) the driver uploads the graph to each endpoint once (as
    ``graph_name``, by default a name derived from the edges' content) and
    block i runs on endpoint i mod len(endpoints), with ``token`` /
    ``tls_root_certs`` as in :func:`pathctl.connect`.

    Unsigned integer ids become the next wider signed type (uint64 ids above
    2^63 are refused by the cast), since Spark has no unsigned types. The
    result is lazy like any DataFrame: every action reruns the blocks, so
    ``cache()`` it or write it out once.

    ``targets``, ``cutoff``, ``k``, ``reverse`` and ``with_paths`` narrow the answer as in
    :func:`pathctl.apsp` and reach every task unchanged. A bad value of one
    (``k=0``, an unknown target) raises its :class:`PathctlError` from this
    call: the schema probe, a one-source run, meets it first. A source that
    is not a vertex of the edges raises :class:`InvalidInputError` from this
    call too, before any task runs. ``sources`` and ``targets`` are lists
    (one id alone is a TypeError) and the switches bools, as in
    :func:`pathctl.apsp`.

    ``out="dir/"`` (local binaries only, not ``endpoints``) runs the blocks
    now, each task writing its block straight into a Parquet dataset there
    (``source_block=NNNNN/part-0.parquet``, renamed into place when whole,
    so that a retried task replaces its block rather than adding it twice),
    writes the ``_pathctl.json`` manifest last, and returns
    ``spark.read.parquet(out)`` (with the ``source_block`` partition
    column). The directory must be one every executor sees; a non-empty
    one is refused unless ``overwrite=True``.
    """
    check_flags(directed=directed, with_predecessors=with_predecessors, unweighted=unweighted,
                reverse=reverse, with_paths=with_paths)
    check_id_list("sources", sources)
    check_id_list("targets", targets)
    if out is not None and endpoints:
        raise _errors.UsageError("pathctl.spark: out= writes through the executors' own binaries; "
                                 "pathctl serve endpoints do not write datasets")
    if layout not in SPARK_LAYOUTS:
        raise _errors.UsageError(f"pathctl.spark: layout {layout!r} is not supported in Spark "
                                 f"(want one of {', '.join(SPARK_LAYOUTS)})")
    spark = edges_df.sparkSession
    sc = spark.sparkContext
    use_driver_python(sc)
    table, weight_col = _edge_table(edges_df, src_col, dst_col, weight_col, unweighted)
    source_ids = _source_ids(table, src_col, dst_col, sources)
    if block_size is None:
        block_size = max(1, math.ceil(len(source_ids) / max(1, sc.defaultParallelism)))
    if block_size < 1:
        raise _errors.UsageError(f"pathctl.spark: block_size {block_size} is below 1")
    blocks = [source_ids[i:i + block_size] for i in range(0, len(source_ids), block_size)]
    ipc = _ipc_bytes(table)
    run = {"algorithm": algorithm, "layout": layout, "with_predecessors": bool(with_predecessors),
           "engine": engine}
    if reverse:
        run["reverse"] = True
    if with_paths:
        run["with_paths"] = True
    for key, value in (("targets", targets), ("cutoff", cutoff), ("k", k)):
        if value is not None:
            run[key] = list(value) if key == "targets" else value
    local_opts = {"directed": bool(directed), "src_col": src_col, "dst_col": dst_col,
                  "weight_col": weight_col, "binary": binary}
    if endpoints:
        endpoints = list(endpoints)
        name = graph_name or _graph_name(ipc, local_opts)
        _upload_everywhere(endpoints, name, table, token, tls_root_certs, src_col, dst_col,
                           weight_col, directed)
        first = blocks[0][:1] if blocks else None
        from .client import connect

        with connect(endpoints[0], token=token, tls_root_certs=tls_root_certs) as client:
            schema = client.schema(name, sources=first, **run)
        bcast = None
    else:
        name = None
        bcast = sc.broadcast(ipc)
        first = blocks[0][:1] if blocks else source_ids[:1]
        schema = _probe_schema(sc, bcast, first, run, local_opts) if first else None
        if schema is None:
            # An empty graph: ask the binary on the driver is no option either
            # (it may have none); build the schema from the edges' types.
            schema = _empty_schema(table, src_col, layout, with_predecessors, k is not None, with_paths)
    target = spark_arrow_schema(schema)
    spark_schema = _spark_schema(target)
    block_rows = [(i, json.dumps(b)) for i, b in enumerate(blocks)]
    if not block_rows:
        return spark.createDataFrame([], spark_schema)
    blocks_df = sc.parallelize(block_rows, numSlices=len(block_rows)).toDF("block INT, sources STRING")
    dataset = None
    if out is not None:
        dataset = (_spark_dataset.dataset_dir(out, overwrite), _spark_dataset.block_width(len(blocks)), block_size)
    task = _BlockTask(bcast=bcast, run=run, local_opts=local_opts, target=target,
                      endpoints=endpoints, graph=name, token=token, tls_root_certs=tls_root_certs,
                      dataset=dataset)
    if dataset is None:
        return blocks_df.mapInArrow(task, spark_schema)
    written = _collect_arrow(blocks_df.mapInArrow(task, "manifest STRING")).column("manifest").to_pylist()
    _spark_dataset.write_manifest(dataset[0], written, None if sources is None else source_ids,
                                  block_size, len(source_ids))
    return spark.read.parquet(dataset[0])


def betweenness(edges_df: Any, *, directed: bool = True, normalized: bool = True,
                endpoints: bool = False, k: Optional[int] = None, seed: Optional[int] = None,
                sources: Optional[Iterable[Any]] = None, block_size: Optional[int] = None,
                engine: str = "auto", src_col: str = "src", dst_col: str = "dst",
                weight_col: str = "weight", unweighted: bool = False,
                binary: Optional[str] = None) -> Any:
    """Betweenness centrality of the edges in Spark DataFrame ``edges_df``,
    as a Spark DataFrame of ``vertex`` and ``betweenness`` (double), one row
    per vertex in vertex order: :func:`pathctl.betweenness` (same
    ``directed``, ``normalized``, ``endpoints``, ``k``, ``seed``,
    ``sources``, and the same values up to the order of the sums).

    Map: the sources (every vertex, the ``k`` that ``seed`` draws, the same
    sample as every other surface, or ``sources``) go in blocks of
    ``block_size`` (default: one block per task slot), one Spark task each,
    which runs the executor's binary (``binary``, else $PATHCTL_BIN, else
    PATH) on its block with ``normalized=False``: the block's raw
    contribution, one value per vertex. Reduce: the vectors are summed
    (``RDD.reduce``, in block order) on the driver, which scales the sum
    once as networkx scales it. A one-source run in a one-task job first
    gives the vertex order (which the sample is drawn from) and raises a
    bad input's PathctlError here (a negative weight: NegativeWeightError).

    Unlike :func:`apsp` the work runs in this call, and the result, n rows,
    is built on the driver.
    """
    return _betweenness(edges_df, False, directed=directed, normalized=normalized, endpoints=endpoints,
                        k=k, seed=seed, sources=sources, block_size=block_size, engine=engine,
                        src_col=src_col, dst_col=dst_col, weight_col=weight_col, unweighted=unweighted,
                        binary=binary)


def edge_betweenness(edges_df: Any, *, directed: bool = True, normalized: bool = True,
                     k: Optional[int] = None, seed: Optional[int] = None,
                     sources: Optional[Iterable[Any]] = None, block_size: Optional[int] = None,
                     engine: str = "auto", src_col: str = "src", dst_col: str = "dst",
                     weight_col: str = "weight", unweighted: bool = False,
                     binary: Optional[str] = None) -> Any:
    """Edge betweenness centrality of the edges in Spark DataFrame
    ``edges_df``, as a Spark DataFrame of ``src``, ``dst`` and
    ``betweenness`` (double), one row per edge in the order of
    :func:`pathctl.edge_betweenness` (same ``directed``, ``normalized``,
    ``k``, ``seed``, ``sources``, and the same values up to the order of
    the sums).

    As :func:`betweenness`: each task runs its block of sources through the
    executor's binary, unnormalized (one value per edge); the vectors are
    summed in block order on the driver and scaled once as networkx scales
    edge betweenness. One-source runs first give the vertex order (which
    the sample is drawn from) and the edges' order.
    """
    return _betweenness(edges_df, True, directed=directed, normalized=normalized, endpoints=False,
                        k=k, seed=seed, sources=sources, block_size=block_size, engine=engine,
                        src_col=src_col, dst_col=dst_col, weight_col=weight_col, unweighted=unweighted,
                        binary=binary)


def _betweenness(edges_df: Any, edges: bool, *, directed: bool, normalized: bool, endpoints: bool,
                 k: Optional[int], seed: Optional[int], sources: Optional[Iterable[Any]],
                 block_size: Optional[int], engine: str, src_col: str, dst_col: str,
                 weight_col: str, unweighted: bool, binary: Optional[str]) -> Any:
    """:func:`betweenness` (``edges`` false) or :func:`edge_betweenness`."""
    from ._betweenness import check_sample_keywords, rescale, sample_sources

    check_flags(directed=directed, unweighted=unweighted)
    check_sample_keywords(normalized, endpoints, k, seed)
    check_id_list("sources", sources)
    if k is not None and sources is not None:
        raise _errors.UsageError("pathctl.spark: k samples the sources; give k or sources, not both")
    if k is not None and k < 1:
        raise _errors.UsageError(f"pathctl.spark: k={k}: want 1 or more sampled sources")
    if block_size is not None and block_size < 1:
        raise _errors.UsageError(f"pathctl.spark: block_size {block_size} is below 1")
    spark = edges_df.sparkSession
    sc = spark.sparkContext
    use_driver_python(sc)
    table, weight_col = _edge_table(edges_df, src_col, dst_col, weight_col, unweighted)
    # 1. The vertex order (and the edges' order), from one-source runs on
    # an executor.
    opts = {"directed": bool(directed), "endpoints": bool(endpoints), "engine": engine,
            "src_col": src_col, "dst_col": dst_col, "weight_col": weight_col,
            "unweighted": weight_col is None, "binary": binary}
    bcast = sc.broadcast(_ipc_bytes(table))
    task = _BetweennessTask(bcast, opts, edges)
    ends = None  # the edge layout's src and dst columns
    if table.num_rows:
        first = table.column(src_col)[0].as_py()
        vertices = pa.ipc.open_stream(pa.BufferReader(_on_executor(sc, lambda: task.vertices(first)))) \
            .read_all().column(0).combine_chunks()
        if edges:
            ends = pa.ipc.open_stream(pa.BufferReader(_on_executor(sc, lambda: task.edge_ends(first)))).read_all()
    else:
        vertices = pa.array([], table.schema.field(src_col).type)
    n = len(vertices)
    if ends is None:
        ends = pa.table({"src": vertices, "dst": vertices}).slice(0, 0)
    # 2. The sources: every vertex, a sample, or the given ones.
    sampled = None  # the sources' vertex positions; None: every vertex
    if sources is not None:
        sources = list(sources)
        _check_sources(sources, vertices)
        sampled = np.asarray(pc.index_in(pa.array(sources, vertices.type), value_set=vertices))
    elif k is not None and k > n:
        raise _errors.UsageError(f"pathctl.spark: k={k} is more than the graph's {n} vertices")
    elif k is not None and k < n:
        sampled = sample_sources(n, k, 0 if seed is None else int(seed))
        sources = vertices.take(pa.array(sampled)).to_pylist()
    else:
        sources = vertices.to_pylist()
    # 3. Map one block per task to its raw vector; reduce by a vector sum.
    if block_size is None:
        block_size = max(1, math.ceil(len(sources) / max(1, sc.defaultParallelism)))
    blocks = [sources[i:i + block_size] for i in range(0, len(sources), block_size)]
    size = ends.num_rows if edges else n
    total = np.zeros(size)
    if blocks and size:
        total = sc.parallelize(blocks, numSlices=len(blocks)).map(task).reduce(np.add)
    # 4. Scale once: the blocks' values are halved when undirected. networkx
    # rescales edges as vertices with endpoints (every target counts).
    raw = total * (1.0 if directed else 2.0)
    values = rescale(raw, directed=bool(directed), normalized=bool(normalized),
                     endpoints=bool(endpoints) or edges, sampled=sampled, given=k is None and sampled is not None,
                     n=n)
    if edges:
        result = pa.table({"src": ends.column("src"), "dst": ends.column("dst"),
                           "betweenness": pa.array(values, pa.float64())})
    else:
        result = pa.table({"vertex": vertices, "betweenness": pa.array(values, pa.float64())})
    target = spark_arrow_schema(result.schema)
    result = pa.Table.from_batches([cast_batch(b, target) for b in result.to_batches()], schema=target)
    try:
        return spark.createDataFrame(result)
    except (TypeError, ValueError):  # pyspark < 4 takes no pyarrow Table
        return spark.createDataFrame(result.to_pandas(), _spark_schema(target))


class _BetweennessTask:
    """What one Spark task runs: the binary's betweenness of one source
    block, unnormalized (raw, halved when undirected), as a numpy vector in
    vertex order, or in edge order for edge betweenness."""

    def __init__(self, bcast, opts, edges=False):
        self.bcast = bcast
        self.opts = opts
        self.edges = edges

    def _run(self, sources: List[Any], edges: bool) -> pa.Table:
        from ._betweenness import betweenness as local_betweenness
        from ._betweenness import edge_betweenness as local_edge_betweenness

        table = pa.ipc.open_stream(pa.BufferReader(self.bcast.value)).read_all()
        if edges:
            opts = {key: value for key, value in self.opts.items() if key != "endpoints"}
            return local_edge_betweenness(table, sources=sources, normalized=False, **opts)
        return local_betweenness(table, sources=sources, normalized=False, **self.opts)

    def __call__(self, sources: List[Any]) -> np.ndarray:
        return self._run(sources, self.edges).column("betweenness").to_numpy()

    def vertices(self, first: Any) -> bytes:
        """The vertex column in vertex order, as Arrow IPC stream bytes."""
        column = self._run([first], False).select(["vertex"])
        return _ipc_bytes(column)

    def edge_ends(self, first: Any) -> bytes:
        """The edge layout's src and dst columns, in its row order, as Arrow
        IPC stream bytes."""
        return _ipc_bytes(self._run([first], True).select(["src", "dst"]))


def _edge_table(edges_df: Any, src_col: str, dst_col: str, weight_col: str,
                unweighted: bool) -> tuple:
    """The edge columns of ``edges_df`` collected to the driver as Arrow,
    and the weight column used (None: hop counts, no weight column
    travels); a missing column is an InvalidInputError."""
    columns = [src_col, dst_col]
    if not unweighted and weight_col in edges_df.columns:
        columns.append(weight_col)
    else:
        weight_col = None
    missing = [c for c in columns if c not in edges_df.columns]
    if missing:
        raise _errors.InvalidInputError(f"pathctl.spark: edges have no column {missing[0]!r} "
                                        f"(columns: {', '.join(edges_df.columns)})")
    return _collect_arrow(edges_df.select(*columns)), weight_col


def use_driver_python(sc: Any) -> bool:
    """With a local master and no PYSPARK_PYTHON, make the Python workers
    run this interpreter (``sys.executable``) rather than Spark's default,
    ``python3`` on PATH, which is often another Python without pyarrow (a
    virtual environment that is not activated). Local workers run on this
    machine, so this interpreter is there and has pathctl and pyarrow.
    Returns whether it changed the workers' interpreter.

    On a cluster the executors' interpreter is the cluster's business: set
    PYSPARK_PYTHON (or ``spark.pyspark.python``) to a Python with pathctl
    and pyarrow installed on every executor before the session starts.
    """
    if os.environ.get("PYSPARK_PYTHON") or not str(sc.master).startswith("local"):
        return False
    if sc.getConf().get("spark.pyspark.python") or sc.pythonExec != "python3":
        return False
    # Read by every Python function Spark wraps from now on (mapInArrow,
    # RDD maps): the jobs of this call run on this interpreter.
    sc.pythonExec = sys.executable
    return True


class _BlockTask:
    """The function mapInArrow runs on an executor: one pathctl run per block
    row it is given."""

    def __init__(self, *, bcast, run, local_opts, target, endpoints, graph, token, tls_root_certs,
                 dataset=None):
        # dataset: (directory, digits of the block numbers, block size) of
        # out=, where each block is written there and its manifest returned.
        self.dataset = dataset
        self.bcast = bcast
        self.run = run
        self.local_opts = local_opts
        self.target = target
        self.endpoints = endpoints
        self.graph = graph
        self.token = token
        self.tls_root_certs = tls_root_certs

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # The result batches go to Spark as the reader produced them: no
        # pandas, no Python lists, no concatenation. The one copy on this
        # side is the pipe read that fills each batch's buffer (see
        # pathctl.stream); cast_batch copies only where a type must widen
        # (uint32 ids, large strings, dictionaries). Spark's own serializer
        # then writes each batch into its socket to the JVM, a copy outside
        # this function.
        for batch in batches:
            blocks = batch.column("block").to_pylist()
            lists = batch.column("sources").to_pylist()
            for block, text in zip(blocks, lists):
                if self.dataset is not None:
                    yield pa.record_batch([pa.array([self._write(block, json.loads(text))])], names=["manifest"])
                    continue
                for out in self._block(block, json.loads(text)):
                    yield cast_batch(out, self.target)

    def _write(self, block: int, sources: List[Any]) -> str:
        directory, width, block_size = self.dataset
        opts = dict(self.local_opts)
        opts.update(_gpu_options(_task_gpus()))
        edges = pa.ipc.open_stream(pa.BufferReader(self.bcast.value))
        return _spark_dataset.write_block(directory, block, block * block_size, width, sources, edges,
                                          {**self.run, **opts})

    def _block(self, block: int, sources: List[Any]) -> Iterator[pa.RecordBatch]:
        if self.endpoints:
            from .client import connect

            uri = self.endpoints[block % len(self.endpoints)]
            with connect(uri, token=self.token, tls_root_certs=self.tls_root_certs) as client:
                yield from client.stream(self.graph, sources=sources, **self.run)
            return
        from ._api import stream

        opts = dict(self.local_opts)
        opts.update(_gpu_options(_task_gpus()))
        edges = pa.ipc.open_stream(pa.BufferReader(self.bcast.value))
        yield from stream(edges, sources=sources, **self.run, **opts)


def _gpu_options(gpus: List[str]) -> Dict[str, Any]:
    """The binary's options that pin a run to the GPUs Spark assigned its
    task: ``--devices`` with their addresses, which the discovery script
    (python/tools/spark-gpu-discovery.sh) gives as nvidia-smi's indices,
    and CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers the devices as
    nvidia-smi does. No GPU assigned: nothing (the binary's own choice)."""
    if not gpus:
        return {}
    return {"devices": ",".join(gpus), "env": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}}


def _task_gpus() -> List[str]:
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is None:
            return []
        gpu = ctx.resources().get("gpu")
        return list(gpu.addresses) if gpu is not None else []
    except Exception:  # noqa: BLE001 - no task context or resources: no GPU pinning
        return []


def _probe_schema(sc, bcast, first, run, local_opts) -> pa.Schema:
    """The result schema, from a one-source run in a one-task Spark job: it
    runs where the blocks will run, so the driver needs no binary."""

    def schema_bytes() -> bytes:
        from ._api import stream

        edges = pa.ipc.open_stream(pa.BufferReader(bcast.value))
        reader = stream(edges, sources=first, **run, **local_opts, **_gpu_options(_task_gpus()))
        schema = reader.schema
        del reader  # kills and reaps the binary: only the schema was wanted
        return schema.serialize().to_pybytes()

    return pa.ipc.read_schema(pa.py_buffer(_on_executor(sc, schema_bytes)))


def _on_executor(sc: Any, work: Any) -> bytes:
    """What ``work()`` returns, run in a one-task Spark job. A PathctlError
    it raises (bad input or options: k=0, an unknown target, a negative
    weight) is raised here as the same exception, not a Java stack trace
    around it; an executor Python without pyarrow or pathctl is said so."""

    def probe(_: Any) -> bytes:
        from ._errors import PathctlError

        try:
            return work()
        except PathctlError as exc:
            return _PROBE_ERROR + json.dumps({"class": type(exc).__name__, "message": exc.message,
                                              "exit_code": exc.exit_code, "stderr": exc.stderr}).encode()

    try:
        raw = sc.parallelize([0], 1).map(probe).collect()[0]
    except Exception as exc:  # noqa: BLE001 - py4j and pyspark raise their own types
        missing = re.search(r"No module named '(pyarrow|pathctl|numpy)", str(exc))
        if not missing:
            raise
        raise _errors.PathctlError(
            f"the Spark executors' Python ({sc.pythonExec}) cannot import {missing.group(1)}: set "
            "PYSPARK_PYTHON to a Python with pathctl and pyarrow installed, on every executor, "
            "before the session starts") from exc
    if raw.startswith(_PROBE_ERROR):
        error = json.loads(raw[len(_PROBE_ERROR):].decode())
        cls = getattr(_errors, error["class"], None)
        if not (isinstance(cls, type) and issubclass(cls, _errors.PathctlError)):
            cls = _errors.PathctlError
        raise cls(error["message"], exit_code=error["exit_code"], stderr=error["stderr"])
    return raw


# What a probe returns, followed by JSON, for a PathctlError (the Arrow
# messages probes return start with their continuation marker, 0xFFFFFFFF).
_PROBE_ERROR = b"pathctl-error:"


def _empty_schema(table: pa.Table, src_col: str, layout: str, with_predecessors: bool,
                  rank: bool = False, paths: bool = False) -> pa.Schema:
    ids = table.schema.field(src_col).type
    if layout == "stats":
        return pa.schema([("source", ids), ("reachable", pa.int64()), ("eccentricity", pa.int32()),
                          ("sum", pa.int64()), ("closeness", pa.float64()), ("harmonic", pa.float64())])
    fields = [("source", ids), ("target", ids), ("distance", pa.int32())]
    if rank:
        fields.append(("rank", pa.int32()))
    if with_predecessors:
        fields.append(("predecessor", ids))
    if paths:
        fields.append(("path", pa.list_(ids)))
    return pa.schema(fields)


def _collect_arrow(df: Any) -> pa.Table:
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_batches(df._collect_as_arrow(), schema=None)  # pyspark < 4


def _source_ids(table: pa.Table, src_col: str, dst_col: str,
                sources: Optional[Iterable[Any]]) -> List[Any]:
    ids = pa.chunked_array(table.column(src_col).chunks + table.column(dst_col).chunks,
                           type=table.schema.field(src_col).type)
    unique = pc.unique(ids.combine_chunks() if ids.num_chunks else pa.array([], ids.type))
    if sources is None:
        return unique.take(pc.sort_indices(unique)).to_pylist()
    sources = list(sources)
    _check_sources(sources, unique)
    return sources


def _check_sources(sources: List[Any], vertices: pa.Array) -> None:
    """Refuse, on the driver and before any task, a source that is not a
    vertex of the edges, in the words of pathctl.apsp (the binary's): the
    schema probe runs the first source alone, and an unknown one in a later
    block would fail its task with a Java stack trace around the message."""
    try:
        known = pc.is_in(pa.array(sources, type=vertices.type), value_set=vertices).to_pylist()
    except _NOT_AN_ID:
        known = (_is_vertex(s, vertices) for s in sources)  # one does not convert: find it in order
    for s, k in zip(sources, known):
        if not k:
            raise _errors.InvalidInputError(f'source "{s}" is not a vertex of the graph', exit_code=2)


# What pa.array raises for a value that is no id of the edges' type.
_NOT_AN_ID = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, ValueError)


def _is_vertex(s: Any, vertices: pa.Array) -> bool:
    try:
        one = pa.array([s], type=vertices.type)
    except _NOT_AN_ID:
        return False
    return pc.is_in(one, value_set=vertices)[0].as_py()


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _graph_name(ipc: bytes, opts: Dict[str, Any]) -> str:
    h = hashlib.sha256(ipc)
    h.update(json.dumps({k: v for k, v in opts.items() if k != "binary"}, sort_keys=True).encode())
    return "spark-" + h.hexdigest()[:24]


def _upload_everywhere(endpoints, name, table, token, tls_root_certs, src_col, dst_col,
                       weight_col, directed) -> None:
    from .client import connect

    for uri in endpoints:
        with connect(uri, token=token, tls_root_certs=tls_root_certs) as client:
            client.upload(name, table, src_col=src_col, dst_col=dst_col, weight_col=weight_col,
                          directed=directed, unweighted=weight_col is None)


def _spark_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_uint8(t):
        return pa.int16()
    if pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t) or pa.types.is_uint64(t):
        return pa.int64()
    if pa.types.is_large_string(t) or (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)):
        return pa.string()
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type)
    if pa.types.is_list(t):  # the path column of with_paths
        return pa.list_(_spark_type(t.value_type))
    return t


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the types Spark cannot hold (unsigned integers, large
    and view strings, dictionaries) replaced by ones it can."""
    return pa.schema([pa.field(f.name, _spark_type(f.type), nullable=True) for f in schema])


def cast_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` cast to ``target`` (see :func:`spark_arrow_schema`).

    Columns whose type is already the target's (a field that differs only in
    nullability or metadata) are kept as they are, and uint64 ids become
    int64 as a view of the same buffer once no id is above 2^63 - 1: only
    the widening casts copy."""
    if batch.schema.equals(target, check_metadata=False):
        return batch
    columns = [_cast_column(batch.column(i), target.field(i)) for i in range(batch.num_columns)]
    return pa.RecordBatch.from_arrays(columns, schema=target)


_INT64_MAX = 2**63 - 1


def _cast_column(column: pa.Array, field: pa.Field) -> pa.Array:
    to = field.type
    if column.type.equals(to):
        return column
    if pa.types.is_uint64(column.type) and pa.types.is_int64(to):
        top = pc.max(column).as_py()
        if top is not None and top > _INT64_MAX:
            raise _errors.InvalidInputError(
                f"pathctl.spark: column {field.name!r} holds id {top}, above the largest "
                f"Spark long ({_INT64_MAX})")
        return column.view(to)
    return column.cast(to)


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)
