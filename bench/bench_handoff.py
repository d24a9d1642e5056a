#!/usr/bin/env python3
"""How fast a distance matrix reaches numpy through the Python package
(issue 16), beside the engine's own time, as one Markdown table.

    PYTHONPATH=python PATHCTL_BIN=bin/pathctl python3 bench/bench_handoff.py EDGES \\
        [--undirected] [--engine gpu] [--repeat 3] [--compare-pipe]

EDGES is a Parquet, Arrow IPC or CSV edge file (``pathctl gen rmat --scale 16
... -o rmat16.parquet`` makes one). It is read into a pyarrow Table first
(not timed). Each row of the table is the median of --repeat runs:

- ``pathctl run`` (matrix) into an Arrow file on tmpfs (--tmpfs, default
  /dev/shm): the command's wall time, and the engine's own time from its
  summary line ("N pairs in T");
- ``pathctl run`` (matrix) into a memfd passed as /dev/fd/N, as the Python
  package runs it: the wall time, the engine's time, the record batches
  the file holds and the time the run spent in its writer (``-v``'s "in the
  sink");
- reading that file into numpy: ``pa.memory_map`` + ``matrix_from_table``
  (a view), then one full pass over it (``max``), which faults every page in;
- ``pathctl.distance_matrix(table)`` first, before any of the rows above
  writes a file on tmpfs, and again after them (below);
- ``pathctl.distance_matrix(table)``: from the pyarrow Table to the numpy
  array, end to end (the matrix written by the binary straight into this
  process's memory, where it may; the note says where it landed); the
  same with one full pass; and the same with ``PATHCTL_RESULT_PEER=off``,
  the matrix through a memfd;
- with --compare-pipe, ``distance_matrix`` through pipes
  (PATHCTL_HANDOFF=pipe), the handoff before memfds;
- ``pathctl run --layout stats`` (CLI wall) and ``pathctl.apsp(table,
  layout="stats")``, the small-result case.

With --input-only (for edge tables whose n² matrix would not fit, R-MAT 20)
only the input side is timed: ``pathctl sssp --layout stats`` from one
source, from the file (CLI wall), and ``pathctl.sssp(table, ...)`` from the
pyarrow Table through a memfd and through a pipe.

The engine's own time of a Python call is read from the binary's summary
line, which the package logs on the "pathctl" logger. Peak RSS of this
process and of the largest child are printed below the table.

PATHCTL_MATRIX_WRITES in the environment chooses how the binary writes a
one-batch matrix: ``mapped`` (copies into its mapping on every core),
``prefill`` (the same, its pages populated ahead meanwhile; the default
where the graph is on the GPU) or ``pwrite`` (positioned writes, one
stream; the default on the CPU); the header line says which was asked
for. --compare-writes (none by default) times the memfd CLI row and ``distance_matrix`` again under each
value it lists, in the same run; the memfd rows' notes carry the binary's
``in place:`` counts where it wrote in place.

Needs python3 with pyarrow and numpy, and the package importable (installed,
or PYTHONPATH=python from the repository root); the binary is PATHCTL_BIN,
else bin/pathctl, else pathctl on PATH.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from typing import Callable, List, Optional, Tuple

import numpy as np
import pyarrow as pa

# Seconds per unit of a Go duration ("241ms", "1.5s", "1m2.5s", "396.7µs").
UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def engine_seconds(stderr: str) -> Optional[float]:
    """The engine's time from the binary's summary line, or None.

    Go prints durations such as 241ms, 1.5s or 1m2.5s; the last form is
    read as minutes plus seconds."""
    for line in reversed(stderr.splitlines()):
        m = re.search(r"pairs in ((?:[0-9]+h)?(?:[0-9]+m(?!s))?[0-9.]*(?:ns|µs|us|ms|s)?) ", line)
        if not m:
            continue
        text, total = m.group(1), 0.0
        for value, unit in re.findall(r"([0-9.]+)(h|ms|µs|us|ns|m|s)", text):
            total += float(value) * UNITS[unit]
        return total
    return None


def duration_seconds(text: str) -> float:
    """A Go duration ("241ms", "1.5s", "1m2.5s") in seconds."""
    return sum(float(v) * UNITS[u] for v, u in re.findall(r"([0-9.]+)(h|ms|µs|us|ns|m|s)", text))


def read_edges(path: str) -> pa.Table:
    lower = path.lower()
    if lower.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        return pq.read_table(path)
    if lower.endswith((".arrow", ".feather", ".ipc", ".arrows")):
        with pa.memory_map(path) as src:
            try:
                return pa.ipc.open_file(src).read_all()
            except pa.ArrowInvalid:
                src.seek(0)
                return pa.ipc.open_stream(src).read_all()
    if lower.endswith((".csv", ".tsv")):
        import pyarrow.csv as pcsv

        return pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter="\t" if lower.endswith(".tsv") else ","))
    raise SystemExit(f"bench_handoff: {path}: want a .parquet, .arrow or .csv edge file")


class SummaryLines(logging.Handler):
    """Collects the binary's stderr lines that the package logs."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: List[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def take(self) -> str:
        text, self.lines = "\n".join(self.lines), []
        return text


def median_of(repeat: int, fn: Callable[[], Tuple[float, Optional[float]]]) -> Tuple[float, Optional[float]]:
    walls, engines = [], []
    for _ in range(repeat):
        wall, eng = fn()
        walls.append(wall)
        if eng is not None:
            engines.append(eng)
    return statistics.median(walls), (statistics.median(engines) if engines else None)


def landed_in(address: int) -> str:
    """What holds address in this process: "a memfd", "anonymous memory"
    (written there by the binary) or "a file"."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                if lo <= address < hi:
                    name = fields[5].strip() if len(fields) > 5 else ""
                    if "memfd:" in name:
                        return "a memfd"
                    return "anonymous memory" if not name else "a file"
    except OSError:
        pass
    return "unknown memory"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("edges")
    ap.add_argument("--undirected", action="store_true")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--weight-col", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tmpfs", default="/dev/shm", help="where the CLI writes its matrix (default /dev/shm)")
    ap.add_argument("--compare-pipe", action="store_true", help="also time distance_matrix through pipes")
    ap.add_argument("--input-only", action="store_true",
                    help="time only the edges' handoff: one-source stats from the file and from the Table")
    ap.add_argument("--compare-writes", default=None,
                    help="comma-separated PATHCTL_MATRIX_WRITES values under which the memfd CLI row and "
                         "distance_matrix are timed again (default: none)")
    ap.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        return rss_child(args)
    if args.compare_writes is None:
        args.compare_writes = ""
    compare_writes = [w for w in args.compare_writes.split(",") if w]

    import pathctl
    from pathctl import _local

    binary = pathctl.find_binary()
    handler = SummaryLines()
    log = logging.getLogger("pathctl")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False

    table = read_edges(args.edges)
    opts = {"engine": args.engine, "directed": not args.undirected}
    if args.weight_col:
        opts["weight_col"] = args.weight_col
    flags = ["--engine", args.engine] + (["--undirected"] if args.undirected else [])
    if args.weight_col:
        flags += ["--weight-col", args.weight_col]
    out = os.path.join(args.tmpfs, f"bench-handoff-{os.getpid()}.arrow")
    vout = os.path.join(args.tmpfs, f"bench-handoff-{os.getpid()}.vertices.arrow")
    rows: List[Tuple[str, float, Optional[float], str]] = []
    shape = dtype = dm_dtype = None
    batches = {}

    def cli(layout: str) -> Tuple[float, Optional[float]]:
        cmd = [binary, "run", "--layout", layout, *flags, "--vertices-out", vout, "-o", out, args.edges]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"bench_handoff: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
        return wall, engine_seconds(proc.stderr)

    memfd_info = {}

    def cli_memfd() -> Tuple[float, Optional[float]]:
        fd = os.memfd_create("bench-handoff", os.MFD_CLOEXEC)
        try:
            cmd = [binary, "run", "--layout", "matrix", *flags, "-v", "--format", "arrow",
                   "--vertices-out", vout, "-o", f"/dev/fd/{fd}", args.edges]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, pass_fds=(fd,))
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise SystemExit(f"bench_handoff: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
            size = os.fstat(fd).st_size
            with pa.memory_map(f"/proc/self/fd/{fd}") as src:
                memfd_info["batches"] = pa.ipc.open_file(src).num_record_batches
            memfd_info["size"] = size
            sink = re.search(r"in the sink ([0-9.]+(?:ms|µs|us|s))", proc.stderr)
            memfd_info.setdefault("sink", []).append(duration_seconds(sink.group(1)) if sink else float("nan"))
            return wall, engine_seconds(proc.stderr)
        finally:
            os.close(fd)

    def read_file(full_pass: bool) -> Tuple[float, Optional[float]]:
        nonlocal shape, dtype
        t0 = time.perf_counter()
        with pa.memory_map(out) as src:
            t = pa.ipc.open_file(src).read_all()
            batches["file"] = t.column("distance").num_chunks
            m = pathctl.matrix_from_table(t)
            del t
            if full_pass:
                m.max()
        wall = time.perf_counter() - t0
        shape, dtype = m.shape, m.dtype
        del m
        return wall, None

    landed = {}

    def dmatrix(full_pass: bool, mode: str = "auto", peer: str = "auto") -> Tuple[float, Optional[float]]:
        nonlocal dm_dtype
        os.environ[_local.HANDOFF_ENV] = mode
        os.environ[_local.RESULT_PEER_ENV] = peer
        handler.take()
        t0 = time.perf_counter()
        D, _ = pathctl.distance_matrix(table, **opts)
        dm_dtype = D.dtype
        if full_pass:
            D.max()
        wall = time.perf_counter() - t0
        landed[peer] = landed_in(D.__array_interface__["data"][0])
        del D
        return wall, engine_seconds(handler.take())

    def stats_py() -> Tuple[float, Optional[float]]:
        os.environ[_local.HANDOFF_ENV] = "auto"
        handler.take()
        t0 = time.perf_counter()
        pathctl.apsp(table, layout="stats", **opts)
        wall = time.perf_counter() - t0
        return wall, engine_seconds(handler.take())

    def sssp_cli(source) -> Tuple[float, Optional[float]]:
        cmd = [binary, "sssp", "--source", str(source), "--layout", "stats", *flags, "--format", "arrow", "-o", "/dev/null", args.edges]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"bench_handoff: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
        return wall, engine_seconds(proc.stderr)

    def sssp_py(source, mode: str) -> Tuple[float, Optional[float]]:
        os.environ[_local.HANDOFF_ENV] = mode
        handler.take()
        t0 = time.perf_counter()
        pathctl.sssp(table, source, layout="stats", **opts)
        wall = time.perf_counter() - t0
        return wall, engine_seconds(handler.take())

    if args.input_only:
        source = table.column("src")[0].as_py()
        try:
            rows.append(("`pathctl sssp --layout stats` from the file (CLI wall)",
                         *median_of(args.repeat, lambda: sssp_cli(source)), f"{table.num_rows} edges"))
            rows.append((f"`sssp(table, layout=\"stats\")` via {_local.handoff_mode()}",
                         *median_of(args.repeat, lambda: sssp_py(source, "auto")), "edges as an IPC file in a memfd"))
            rows.append(("`sssp(table, layout=\"stats\")` via pipe",
                         *median_of(args.repeat, lambda: sssp_py(source, "pipe")), "edges as an IPC stream on stdin"))
        finally:
            os.environ.pop(_local.HANDOFF_ENV, None)
        print_table(args, table, binary, rows, "input only")
        return 0

    try:
        # First, before the CLI rows write (and remove) their 8.4 GiB files
        # on tmpfs: the same call after them found fresh huge pages slower
        # to come by (H100 host: 1.05-1.06 s against 0.88-0.97; BENCHMARKS.md,
        # "Issue 16: `distance_matrix` from a pyarrow Table").
        wall, eng = median_of(args.repeat, lambda: dmatrix(False))
        rows.append(("`distance_matrix(table)`, before the CLI rows", wall, eng,
                     f"the matrix in {landed['auto']}; no tmpfs file written yet"))
        wall, eng = median_of(args.repeat, lambda: cli("matrix"))
        size = os.path.getsize(out)
        rows.append(("`pathctl run --layout matrix -o tmpfs` (CLI wall)", wall, eng, f"{size / 2**30:.2f} GiB file"))
        if hasattr(os, "memfd_create"):
            wall, eng = median_of(args.repeat, cli_memfd)
            rows.append(("`pathctl run --layout matrix -o /dev/fd/N` (memfd, CLI wall)", wall, eng,
                         f"{memfd_info['batches']} record batches, {memfd_info['size'] / 2**30:.2f} GiB; "
                         f"in the writer {statistics.median(memfd_info['sink']):.3f} s"))
        wall, _ = median_of(args.repeat, lambda: read_file(False))
        joined = batches.get("file", 1) > 1
        rows.append(("tmpfs file → numpy (memory_map + matrix_from_table)", wall, None,
                     f"{batches.get('file')} record batches: " + ("joined with one copy" if joined else "a view")))
        wall, _ = median_of(args.repeat, lambda: read_file(True))
        rows.append(("tmpfs file → numpy + one full pass (`max`)", wall, None, "faults every page in"))
        for name in (out, vout):
            if os.path.exists(name):
                os.remove(name)
        wall, eng = median_of(args.repeat, lambda: dmatrix(False))
        rows.append((f"`distance_matrix(table)`", wall, eng,
                     f"pyarrow Table → numpy; the matrix in {landed['auto']}"))
        wall, eng = median_of(args.repeat, lambda: dmatrix(True))
        rows.append((f"`distance_matrix(table)` + one full pass", wall, eng, ""))
        reuse = {}

        def dmatrix_into() -> Tuple[float, Optional[float]]:
            os.environ[_local.HANDOFF_ENV] = "auto"
            os.environ[_local.RESULT_PEER_ENV] = "auto"
            if "out" not in reuse:
                reuse["out"], _ = pathctl.distance_matrix(table, **opts)  # its pages, once
            handler.take()
            t0 = time.perf_counter()
            D, _ = pathctl.distance_matrix(table, out=reuse["out"], **opts)
            wall = time.perf_counter() - t0
            assert D is reuse["out"]
            return wall, engine_seconds(handler.take())

        wall, eng = median_of(args.repeat, dmatrix_into)
        rows.append((f"`distance_matrix(table, out=D)` into the array of an earlier call", wall, eng,
                     "no fresh pages"))
        reuse.clear()
        wall, eng = median_of(args.repeat, lambda: dmatrix(False, peer="off"))
        rows.append((f"`distance_matrix(table)`, PATHCTL_RESULT_PEER=off", wall, eng,
                     f"the matrix in {landed['off']}"))
        os.environ.pop(_local.RESULT_PEER_ENV, None)
        asked = os.environ.get("PATHCTL_MATRIX_WRITES")
        for writes in compare_writes:
            os.environ["PATHCTL_MATRIX_WRITES"] = writes
            try:
                memfd_info["sink"] = []
                if hasattr(os, "memfd_create"):
                    wall, eng = median_of(args.repeat, cli_memfd)
                    rows.append((f"`pathctl run --layout matrix -o /dev/fd/N`, matrix writes {writes}", wall, eng,
                                 f"in the writer {statistics.median(memfd_info['sink']):.3f} s"))
                wall, eng = median_of(args.repeat, lambda: dmatrix(False))
                rows.append((f"`distance_matrix(table)` via {_local.handoff_mode()}, matrix writes {writes}", wall, eng, ""))
            finally:
                if asked is None:
                    os.environ.pop("PATHCTL_MATRIX_WRITES", None)
                else:
                    os.environ["PATHCTL_MATRIX_WRITES"] = asked
        if args.compare_pipe:
            wall, eng = median_of(args.repeat, lambda: dmatrix(False, "pipe"))
            rows.append(("`distance_matrix(table)` via pipe (before)", wall, eng, "PATHCTL_HANDOFF=pipe"))
        wall, eng = median_of(args.repeat, lambda: cli("stats"))
        rows.append(("`pathctl run --layout stats` (CLI wall)", wall, eng, ""))
        wall, eng = median_of(args.repeat, stats_py)
        rows.append(("`apsp(table, layout=\"stats\")`", wall, eng, ""))
    finally:
        for name in (out, vout):
            if os.path.exists(name):
                os.remove(name)
        os.environ.pop(_local.HANDOFF_ENV, None)

    print_table(args, table, binary, rows, f"matrix {shape}: {dtype} in the CLI's file, {dm_dtype} from distance_matrix")
    return 0


def print_table(args, table: pa.Table, binary: str, rows, what: str) -> None:
    print(f"edges: {args.edges} ({table.num_rows} rows), {'undirected' if args.undirected else 'directed'}, "
          f"engine {args.engine}; {what}; median of {args.repeat}; pathctl {binary}; "
          f"matrix writes {os.environ.get('PATHCTL_MATRIX_WRITES') or 'default'}; "
          f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, numpy {np.__version__}")
    print()
    print("| measurement | wall s | engine s | note |")
    print("|---|---:|---:|---|")
    for name, wall, eng, note in rows:
        print(f"| {name} | {wall:.3f} | {'' if eng is None else f'{eng:.3f}'} | {note} |")
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print()
    print(f"peak RSS: this process {me:.2f} GiB, largest child {kids:.2f} GiB")
    if not args.input_only:
        print(one_call_rss(args))


def one_call_rss(args) -> str:
    """Peak RSS of one distance_matrix call in a fresh Python process and
    of its binary, against the result's bytes (issue 16: at most the
    result plus 10 %)."""
    cmd = [sys.executable, os.path.abspath(__file__), args.edges, "--rss-child", "--engine", args.engine]
    if args.undirected:
        cmd.append("--undirected")
    if args.weight_col:
        cmd += ["--weight-col", args.weight_col]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return f"one call's peak RSS: the child failed: {proc.stderr.strip()[-500:]}"
    grown, binary, before, result = (float(x) for x in proc.stdout.split())
    return (f"one call's memory, in a fresh process: Python's peak RSS {grown / 2**30:.2f} GiB above its "
            f"{before / 2**30:.2f} GiB before the call (interpreter, libraries, the edge table), the binary's "
            f"peak {binary / 2**30:.2f} GiB; the result {result / 2**30:.2f} GiB: "
            f"{(grown + binary) / result:.3f}× the result")


def rss_child(args) -> int:
    """--rss-child: one distance_matrix call; prints the peak RSS of this
    process and of the binary, the edge table's and the result's bytes."""
    import pathctl

    table = read_edges(args.edges)
    opts = {"engine": args.engine, "directed": not args.undirected}
    if args.weight_col:
        opts["weight_col"] = args.weight_col
    with open("/proc/self/statm") as f:
        before = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    D, _ = pathctl.distance_matrix(table, **opts)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # The package reaps the binary in the background once it has said the
    # result is complete: wait for that, so that its usage counts.
    deadline = time.monotonic() + 30
    while (kid := resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    print(me - before, kid, before, D.nbytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
