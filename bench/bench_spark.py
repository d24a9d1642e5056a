#!/usr/bin/env python3
"""How fast one local Spark executor delivers pathctl.spark.apsp's blocks
(issue 16), against the binary's own output rate, as one Markdown table.

    PATHCTL_BIN=bin/pathctl .venv/bin/python bench/bench_spark.py \\
        [--scale 13] [--edge-factor 8] [--master local[1]] [--block-size N] [--repeat 3]

The graph is ``pathctl gen rmat --scale S --edge-factor F --seed 1`` (a
Parquet file in --work). Rows, every source in the pairs layout:

- ``pathctl run``: the binary alone, writing its Arrow file to tmpfs
  (``-o /dev/shm/...``), wall time of the command, timed before and after
  the Spark rows (the fastest of both rounds);
- ``pathctl.stream``: the same blocks read in this Python process through
  the pipe, each batch dropped as it comes (no Spark), to tell the package's
  share from Spark's;
- the executor's function alone: ``pathctl.spark``'s per-block function
  (what ``mapInArrow`` runs) over the same blocks, in this process, each
  batch wrapped and written as Arrow IPC to /dev/null the way pyspark's
  serializer writes it to the JVM's socket: the Python side of an
  executor, without the JVM;
- Spark noop: ``pathctl.spark.apsp(...)`` on one local executor, written to
  ``df.write.format("noop")``: every block crosses from the binary to
  Python, from Python to the JVM (Spark's Arrow serializer copies each batch
  into its socket) and into Spark's rows, and is dropped there;
- Spark Parquet: the same DataFrame written to Parquet in --work.

Each time is the fastest of --repeat runs of the write action alone; the
setup of ``apsp`` (collecting and broadcasting the edges, the schema probe
job) is timed apart and shown below the table. Rows and bytes are the
binary's result (bytes: its Arrow buffers, the data every row carries), so
every row of the table moves the same data. The ratio is each row's rows/s
over the binary's; the goal is that the Spark noop row reaches 50 %.

Needs pyspark (and Java 17 or 21), pyarrow and the package (installed, or
PYTHONPATH=python); the binary is PATHCTL_BIN, else bin/pathctl.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Tuple

import pyarrow as pa

GOAL = 0.5


def best_seconds(fn: Callable[[], None], repeat: int) -> float:
    """The fastest of ``repeat`` runs: on a shared machine the least
    disturbed one, the same rule for every row."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def human(value: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.0f} {unit}"


def executor_function(edges: pa.Table, engine: str, block_size: int, rows: int) -> None:
    """Run pathctl.spark's per-block function over every block, writing
    its batches as pyspark's ArrowStreamUDFSerializer does (each batch
    wrapped in one struct column, IPC stream) to /dev/null."""
    import json
    from types import SimpleNamespace

    import pathctl.spark as ps

    ids = ps._source_ids(edges, "src", "dst", None)
    blocks = [ids[i:i + block_size] for i in range(0, len(ids), block_size)]
    run = {"algorithm": "auto", "layout": "pairs", "with_predecessors": False, "engine": engine}
    local_opts = {"directed": True, "src_col": "src", "dst_col": "dst",
                  "weight_col": "weight" if "weight" in edges.column_names else None,
                  "binary": None}
    import pathctl

    schema = pathctl.stream(edges, sources=ids[:1], **run, **local_opts).schema
    target = ps.spark_arrow_schema(schema)
    task = ps._BlockTask(bcast=SimpleNamespace(value=ps._ipc_bytes(edges)), run=run,
                         local_opts=local_opts, target=target, endpoints=None, graph=None,
                         token=None, tls_root_certs=None)
    wrapped = pa.schema([("_0", pa.struct(list(target)))])
    n = 0
    with pa.OSFile(os.devnull, "wb") as sink, pa.ipc.new_stream(sink, wrapped) as writer:
        for i, block in enumerate(blocks):
            rows_in = pa.record_batch({"block": pa.array([i], pa.int32()),
                                       "sources": pa.array([json.dumps(block)])})
            for batch in task(iter([rows_in])):
                struct = pa.StructArray.from_arrays(batch.columns, fields=pa.struct(list(batch.schema)))
                writer.write_batch(pa.RecordBatch.from_arrays([struct], ["_0"]))
                n += batch.num_rows
    if n != rows:
        raise SystemExit(f"bench_spark: the executor function gave {n} rows, the binary {rows}")


def session(master: str, binary: str):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("pathctl-bench-spark")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "2g")
             .config("spark.executorEnv.PATHCTL_BIN", binary)
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=13, help="R-MAT scale (2^S ids)")
    ap.add_argument("--edge-factor", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--master", default="local[1]", help="one local executor: local[1] or local[2]")
    ap.add_argument("--engine", default="cpu")
    ap.add_argument("--block-size", type=int, default=None,
                    help="sources per Spark task (default: apsp's, twice the parallelism in tasks)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default=None, help="folder for the graph and the Parquet output")
    ap.add_argument("--tmpfs", default="/dev/shm", help="where the binary's own output goes")
    args = ap.parse_args(argv)

    binary = os.path.abspath(os.environ.get("PATHCTL_BIN") or "bin/pathctl")
    if not os.access(binary, os.X_OK):
        print(f"bench_spark: no pathctl binary at {binary} (set PATHCTL_BIN)", file=sys.stderr)
        return 2
    os.environ["PATHCTL_BIN"] = binary
    import pathctl
    import pathctl.spark

    work = args.work or tempfile.mkdtemp(prefix="bench-spark-")
    os.makedirs(work, exist_ok=True)
    edges_path = os.path.join(work, f"rmat{args.scale}.parquet")
    subprocess.run([binary, "gen", "rmat", "--scale", str(args.scale), "--edge-factor",
                    str(args.edge_factor), "--seed", str(args.seed), "-o", edges_path],
                   check=True, capture_output=True)
    out_arrow = os.path.join(args.tmpfs, f"bench-spark-{os.getpid()}.arrow")
    rows_out: List[Tuple[str, float]] = []
    try:
        def binary_run() -> None:
            subprocess.run([binary, "run", "--engine", args.engine, "-o", out_arrow, edges_path],
                           check=True, capture_output=True)

        t_bin = best_seconds(binary_run, args.repeat)
        with pa.memory_map(out_arrow) as source:
            result = pa.ipc.open_file(source).read_all()
            rows, nbytes = result.num_rows, result.nbytes
            vertices = int(result.schema.metadata[b"pathctl.num_vertices"])
            del result
        file_bytes = os.path.getsize(out_arrow)
    finally:
        if os.path.exists(out_arrow):
            os.remove(out_arrow)
    rows_out.append(("`pathctl run -o tmpfs` (binary alone)", t_bin))
    binary_row = len(rows_out) - 1

    import pyarrow.parquet as pq

    edges_table = pq.read_table(edges_path)

    def python_stream() -> None:
        n = 0
        for batch in pathctl.stream(edges_table, layout="pairs", engine=args.engine):
            n += batch.num_rows
        if n != rows:
            raise SystemExit(f"bench_spark: pathctl.stream gave {n} rows, the binary {rows}")

    rows_out.append(("`pathctl.stream` in Python (no Spark)", best_seconds(python_stream, args.repeat)))

    spark = session(args.master, binary)
    try:
        edges_df = spark.read.parquet(edges_path)
        start = time.perf_counter()
        pairs = pathctl.spark.apsp(edges_df, layout="pairs", engine=args.engine,
                                   block_size=args.block_size)
        t_setup = time.perf_counter() - start
        tasks = pairs.rdd.getNumPartitions()
        got = pairs.count()  # untimed: every row arrived
        if got != rows:
            raise SystemExit(f"bench_spark: Spark gave {got} rows, the binary {rows}")
        rows_out.append((f"Spark {args.master} → noop sink",
                         best_seconds(lambda: pairs.write.format("noop").mode("overwrite").save(),
                                        args.repeat)))
        block_size = args.block_size or -(-vertices // tasks)
        rows_out.insert(2, ("executor function → IPC to /dev/null (no JVM)",
                            best_seconds(lambda: executor_function(edges_table, args.engine,
                                                                     block_size, rows),
                                           args.repeat)))
        parquet_dir = os.path.join(work, "pairs.parquet")
        rows_out.append((f"Spark {args.master} → Parquet",
                         best_seconds(lambda: pairs.write.mode("overwrite").parquet(parquet_dir),
                                        args.repeat)))
        parquet_bytes = sum(os.path.getsize(os.path.join(d, f))
                            for d, _, files in os.walk(parquet_dir) for f in files)
    finally:
        spark.stop()
    # The binary once more, after Spark: the baseline is the fastest of
    # both rounds, so a disturbed first round does not flatter the ratios.
    try:
        t_bin = min(t_bin, best_seconds(binary_run, args.repeat))
    finally:
        if os.path.exists(out_arrow):
            os.remove(out_arrow)
    rows_out[binary_row] = (rows_out[binary_row][0], t_bin)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)

    print(f"R-MAT scale {args.scale}, edge factor {args.edge_factor}: {vertices} vertices, every "
          f"source, pairs layout: {rows} rows, {human(nbytes, 'B')} of Arrow buffers "
          f"({human(file_bytes, 'B')} Arrow file); engine {args.engine}; {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.machine()}); Spark {args.master}, {tasks} tasks.\n")
    print("| path | time | rows/s | bytes/s | of the binary's rate | ≥ 50 % |")
    print("|---|---:|---:|---:|---:|:---:|")
    for name, seconds in rows_out:
        ratio = t_bin / seconds if seconds > 0 else float("nan")
        goal = "" if name.startswith("`pathctl run") else ("yes" if ratio >= GOAL else "no")
        print(f"| {name} | {seconds:.2f} s | {human(rows / seconds, 'rows/s')} | "
              f"{human(nbytes / seconds, 'B/s')} | {ratio:.0%} | {goal} |")
    print(f"\napsp setup (collect + broadcast the edges, schema probe job): {t_setup:.2f} s, not in "
          f"the times above. Parquet output: {human(parquet_bytes, 'B')}. Fastest of {args.repeat} "
          "run(s) each. The goal applies to the Spark noop row.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
