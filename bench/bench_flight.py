#!/usr/bin/env python3
"""How fast `pathctl serve` streams a distance matrix over loopback Flight
(issue 16), beside the same result written by `pathctl run`, as one
Markdown table.

    PATHCTL_BIN=bin/pathctl python3 bench/bench_flight.py [--scale 14]
        [--engine auto] [--repeat 3] [--tmpfs /dev/shm] [--max-message-bytes N]

It makes an R-MAT graph (``pathctl gen rmat --scale S``, weights 1..100) in
a temporary directory, starts ``pathctl serve`` on a free loopback port with
a temporary data directory, uploads the graph (undirected) with DoPut, and
then times, each the median of --repeat runs:

- DoGet of the matrix layout: from the call to the last batch received
  (raw pyarrow.flight, no pathctl package); MB/s is the Arrow buffer bytes
  of the batches received per second, rows/s the matrix rows per second;
- DoGet of the stats layout (the small-result case);
- ``pathctl run ... --layout matrix -o TMPFS/x.arrow``: the command's wall
  time, and the engine's own time from its summary line ("N pairs in T").

The first DoGet of each layout is a warm-up (the server reads the stored
graph once), not counted. Needs python3 with pyarrow; the binary is
PATHCTL_BIN, else bin/pathctl, else pathctl on PATH. Scale 14 takes a few
seconds on the CPU engine; scale 16 suits the GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Optional, Sequence, Tuple

# Seconds per unit of a Go duration ("241ms", "1.5s", "1m2.5s", "396.7µs").
UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=14, help="R-MAT scale (default 14)")
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--engine", default="auto", help="engine of the queries (auto, cpu, gpu)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of each row (default 3)")
    p.add_argument("--tmpfs", default="/dev/shm", help="where `pathctl run` writes its matrix")
    p.add_argument("--max-message-bytes", type=int, default=0,
                   help="passed to `pathctl serve` when set")
    p.add_argument("--bin", default=None, help="pathctl binary (default PATHCTL_BIN, bin/pathctl, PATH)")
    a = p.parse_args(argv)
    if a.scale < 1 or a.scale > 20:
        p.error(f"--scale {a.scale}: choose 1..20 (a matrix of 2^scale rows must fit memory)")
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}: at least 1")
    if a.max_message_bytes < 0:
        p.error(f"--max-message-bytes {a.max_message_bytes} is negative")
    return a


def find_binary(given: Optional[str]) -> str:
    for cand in (given, os.environ.get("PATHCTL_BIN"), "bin/pathctl"):
        if cand and os.path.isfile(cand):
            return os.path.abspath(cand)
    found = shutil.which("pathctl")
    if not found:
        sys.exit("bench_flight: no pathctl binary (set PATHCTL_BIN or build bin/pathctl)")
    return found


def engine_seconds(stderr: str) -> Optional[float]:
    """The engine's time from the binary's summary line ("N pairs in T"),
    or None."""
    for line in reversed(stderr.splitlines()):
        m = re.search(r"pairs in ((?:[0-9]+h)?(?:[0-9]+m(?!s))?[0-9.]*(?:ns|µs|us|ms|s)?) ", line)
        if not m:
            continue
        return sum(float(v) * UNITS[u] for v, u in re.findall(r"([0-9.]+)(h|ms|µs|us|ns|m|s)", m.group(1)))
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median_time(fn: Callable[[], object], repeat: int) -> Tuple[float, object]:
    times, last = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        last = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), last


def fmt_rate(count: float, seconds: float, unit: float) -> str:
    return f"{count / seconds / unit:,.0f}" if seconds > 0 else "-"


def run(a: argparse.Namespace) -> List[Tuple[str, float, Optional[int], Optional[int], str]]:
    """Runs the benchmark; returns rows (what, seconds, bytes, rows, note)."""
    import pyarrow as pa
    import pyarrow.flight as fl
    import pyarrow.parquet as pq

    binary = find_binary(a.bin)
    work = tempfile.mkdtemp(prefix="bench_flight-")
    server = None
    out_file = os.path.join(a.tmpfs, f"bench_flight-{os.getpid()}.arrow")
    try:
        edges = os.path.join(work, "rmat.parquet")
        subprocess.run([binary, "gen", "rmat", "--scale", str(a.scale), "--edge-factor",
                        str(a.edge_factor), "-o", edges], check=True, capture_output=True)
        port = free_port()
        cmd = [binary, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", os.path.join(work, "data")]
        if a.max_message_bytes:
            cmd += ["--max-message-bytes", str(a.max_message_bytes)]
        log = open(os.path.join(work, "serve.log"), "wb")
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        client = fl.connect(f"grpc://127.0.0.1:{port}")
        deadline = time.time() + 15
        while True:
            try:
                list(client.list_flights())
                break
            except fl.FlightError:
                if server.poll() is not None or time.time() > deadline:
                    raise SystemExit("bench_flight: `pathctl serve` did not start:\n"
                                     + open(os.path.join(work, "serve.log")).read())
                time.sleep(0.05)

        table = pq.read_table(edges)
        desc = fl.FlightDescriptor.for_command(json.dumps({"graph": "rmat", "undirected": True}))
        writer, reader = client.do_put(desc, table.schema)
        writer.write_table(table, max_chunksize=1 << 16)
        writer.done_writing()
        reader.read()
        writer.close()

        def doget(layout: str) -> Callable[[], Tuple[int, int]]:
            ticket = fl.Ticket(json.dumps({"graph": "rmat", "layout": layout, "engine": a.engine}).encode())

            def go() -> Tuple[int, int]:
                nbytes = nrows = 0
                for chunk in client.do_get(ticket):
                    nbytes += chunk.data.nbytes
                    nrows += chunk.data.num_rows
                return nbytes, nrows

            return go

        rows = []
        for layout in ("matrix", "stats"):
            fn = doget(layout)
            fn()  # warm-up: the server reads the stored graph once
            secs, (nbytes, nrows) = median_time(fn, a.repeat)
            rows.append((f"Flight DoGet, {layout}", secs, nbytes, nrows, f"engine {a.engine}"))

        run_cmd = [binary, "run", edges, "--undirected", "--layout", "matrix", "--engine", a.engine,
                   "-o", out_file]

        def cli() -> Optional[float]:
            done = subprocess.run(run_cmd, check=True, capture_output=True, text=True)
            return engine_seconds(done.stderr)

        secs, eng = median_time(cli, a.repeat)
        size = os.path.getsize(out_file)
        with pa.memory_map(out_file) as src:
            nrows = pa.ipc.open_file(src).read_all().num_rows
        note = f"engine's own time {eng:.3f} s (last run)" if eng is not None else "no summary line"
        rows.append((f"`pathctl run -o {a.tmpfs}/x.arrow`, matrix", secs, size, nrows, note))
        return rows
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        # The matrix and the vertex order the CLI writes beside it.
        for path in (out_file, out_file[: -len(".arrow")] + ".vertices.arrow"):
            if os.path.exists(path):
                os.remove(path)
        shutil.rmtree(work, ignore_errors=True)


def table(a: argparse.Namespace, rows) -> str:
    out = [f"R-MAT {a.scale} (edge factor {a.edge_factor}, undirected, weights 1..100), "
           f"median of {a.repeat}, loopback",
           "",
           "| what | seconds | MB | MB/s | rows/s | note |",
           "|---|---:|---:|---:|---:|---|"]
    for what, secs, nbytes, nrows, note in rows:
        out.append(f"| {what} | {secs:.3f} | {nbytes / 1e6:,.1f} | {fmt_rate(nbytes, secs, 1e6)} "
                   f"| {fmt_rate(nrows, secs, 1)} | {note} |")
    return "\n".join(out)


def main(argv: Sequence[str]) -> int:
    a = parse_args(argv)
    print(table(a, run(a)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
