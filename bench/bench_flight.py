#!/usr/bin/env python3
"""How fast `pathctl serve` streams a distance matrix over loopback Flight
(issue 16), beside the engine's own time and the same result written by
`pathctl run`, as one Markdown table; every Flight result is checked
against the CLI's.

    PATHCTL_BIN=bin/pathctl python3 bench/bench_flight.py [--scale 14]
        [--engine auto] [--repeat 3] [--tmpfs /dev/shm] [--max-message-bytes N]
        [--client-window BYTES]

It makes an R-MAT graph (``pathctl gen rmat --scale S``, weights 1..100) in
a temporary directory, starts ``pathctl serve`` on a free loopback port with
a temporary data directory, uploads the graph (undirected) with DoPut, and
then times, each the median of --repeat runs:

- DoGet of the matrix layout: from the call to the last batch received
  (raw pyarrow.flight, no pathctl package); GB/s is the Arrow buffer bytes
  of the batches received per second of that wall time. Beside it, from the
  server's request log of the same run: ``engine s``, the time the stream
  waited for the engine (the pipeline's run less the sending), and
  ``send GB/s``, the bytes over the time spent sending them (the transport
  alone: gRPC, the loopback and this client);
- DoGet of the stats layout (the small-result case; with a GPU, the graph's
  CSR stays on the device between queries, so a repeated query costs the
  engine's time and little more);
- ``pathctl run ... -o TMPFS/x.arrow`` for both layouts: the command's wall
  time, and the engine's own time from its summary line ("N pairs in T").

The first DoGet of each layout is a warm-up (the server reads the stored
graph once and makes it resident on the GPU), not counted. The matrix and
stats received over Flight must equal the CLI's files, else the script says
which differ and exits 1. Needs python3 with pyarrow; the binary is
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
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

# Seconds per unit of a Go duration ("241ms", "1.5s", "1m2.5s", "396.7µs").
UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}

# The flow-control window the client grants each stream, as the server's
# own (flight/transport.go): gRPC starts at 64 KiB and grows it only as its
# estimator learns the bandwidth.
CLIENT_WINDOW = 16 << 20


class Row(NamedTuple):
    """One line of the table. engine and send are the server's times of
    the same DoGet (None for the CLI's rows, whose engine time is in note)."""
    what: str
    seconds: float
    nbytes: int
    nrows: int
    engine: Optional[float]
    send: Optional[float]
    note: str


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=14, help="R-MAT scale (default 14)")
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--engine", default="auto", help="engine of the queries (auto, cpu, gpu)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of each row (default 3)")
    p.add_argument("--tmpfs", default="/dev/shm", help="where `pathctl run` writes its matrix")
    p.add_argument("--max-message-bytes", type=int, default=0,
                   help="passed to `pathctl serve` when set")
    p.add_argument("--client-window", type=int, default=CLIENT_WINDOW,
                   help="gRPC stream window the client grants the server, bytes (default 16 MiB; 0: gRPC's default)")
    p.add_argument("--bin", default=None, help="pathctl binary (default PATHCTL_BIN, bin/pathctl, PATH)")
    a = p.parse_args(argv)
    if a.scale < 1 or a.scale > 20:
        p.error(f"--scale {a.scale}: choose 1..20 (a matrix of 2^scale rows must fit memory)")
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}: at least 1")
    if a.max_message_bytes < 0:
        p.error(f"--max-message-bytes {a.max_message_bytes} is negative")
    if a.client_window < 0:
        p.error(f"--client-window {a.client_window} is negative")
    return a


def find_binary(given: Optional[str]) -> str:
    for cand in (given, os.environ.get("PATHCTL_BIN"), "bin/pathctl"):
        if cand and os.path.isfile(cand):
            return os.path.abspath(cand)
    found = shutil.which("pathctl")
    if not found:
        sys.exit("bench_flight: no pathctl binary (set PATHCTL_BIN or build bin/pathctl)")
    return found


def go_seconds(text: str) -> float:
    """Seconds of a Go duration ("1m2.5s", "396.7µs")."""
    return sum(float(v) * UNITS[u] for v, u in re.findall(r"([0-9.]+)(h|ms|µs|us|ns|m|s)", text))


def server_times(log: str) -> List[Tuple[float, float]]:
    """(engine_time, send_time) in seconds of every DoGet line of the
    server's request log, in order."""
    out = []
    for line in log.splitlines():
        if "method=DoGet" not in line:
            continue
        e, s = re.search(r"engine_time=(\S+)", line), re.search(r"send_time=(\S+)", line)
        if e and s:
            out.append((go_seconds(e.group(1)), go_seconds(s.group(1))))
    return out


def engine_seconds(stderr: str) -> Optional[float]:
    """The engine's time from the binary's summary line ("N pairs in T"),
    or None."""
    for line in reversed(stderr.splitlines()):
        m = re.search(r"pairs in ((?:[0-9]+h)?(?:[0-9]+m(?!s))?[0-9.]*(?:ns|µs|us|ms|s)?) ", line)
        if not m:
            continue
        return go_seconds(m.group(1))
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
    if seconds <= 0:
        return "-"
    rate = count / seconds / unit
    return f"{rate:,.2f}" if rate < 100 else f"{rate:,.0f}"


def same_columns(got, want, names: Sequence[str]) -> List[str]:
    """The names among names whose columns differ between two tables
    (compared chunk by chunk: a matrix is not copied whole)."""
    return [n for n in names if not got.column(n).equals(want.column(n))]


def run(a: argparse.Namespace) -> Tuple[List[Row], List[str]]:
    """Runs the benchmark; returns the rows and the differences found
    between the Flight results and the CLI's (none when they agree)."""
    import pyarrow as pa
    import pyarrow.flight as fl

    binary = find_binary(a.bin)
    work = tempfile.mkdtemp(prefix="bench_flight-")
    server = None
    out_files = {layout: os.path.join(a.tmpfs, f"bench_flight-{os.getpid()}-{layout}.arrow")
                 for layout in ("matrix", "stats")}
    log_path = os.path.join(work, "serve.log")
    try:
        edges = os.path.join(work, "rmat.parquet")
        subprocess.run([binary, "gen", "rmat", "--scale", str(a.scale), "--edge-factor",
                        str(a.edge_factor), "-o", edges], check=True, capture_output=True)
        port = free_port()
        cmd = [binary, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", os.path.join(work, "data")]
        if a.max_message_bytes:
            cmd += ["--max-message-bytes", str(a.max_message_bytes)]
        log = open(log_path, "wb")
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        options = [("grpc.http2.lookahead_bytes", a.client_window)] if a.client_window else []
        client = fl.FlightClient(f"grpc://127.0.0.1:{port}", generic_options=options)
        deadline = time.time() + 15
        while True:
            try:
                list(client.list_flights())
                break
            except fl.FlightError:
                if server.poll() is not None or time.time() > deadline:
                    raise SystemExit("bench_flight: `pathctl serve` did not start:\n"
                                     + open(log_path).read())
                time.sleep(0.05)

        import pyarrow.parquet as pq
        table = pq.read_table(edges)
        desc = fl.FlightDescriptor.for_command(json.dumps({"graph": "rmat", "undirected": True}))
        writer, reader = client.do_put(desc, table.schema)
        writer.write_table(table, max_chunksize=1 << 16)
        writer.done_writing()
        reader.read()
        writer.close()

        def logged_times(count: int) -> Tuple[float, float]:
            """The server's times of its count-th DoGet, waiting for the
            line (it is written once the stream has ended)."""
            wait = time.time() + 5
            while True:
                times = server_times(open(log_path, encoding="utf-8", errors="replace").read())
                if len(times) >= count or time.time() > wait:
                    break
                time.sleep(0.01)
            if len(times) < count:
                raise SystemExit("bench_flight: no engine_time in the server's log (a binary older than the script?)")
            return times[count - 1]

        rows: List[Row] = []
        got: Dict[str, object] = {}
        gets = 0
        for layout in ("matrix", "stats"):
            ticket = fl.Ticket(json.dumps({"graph": "rmat", "layout": layout, "engine": a.engine}).encode())
            got[layout] = client.do_get(ticket).read_all()  # warm-up, kept for the check
            gets += 1
            runs = []
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                nbytes = nrows = 0
                for chunk in client.do_get(ticket):
                    nbytes += chunk.data.nbytes
                    nrows += chunk.data.num_rows
                secs = time.perf_counter() - t0
                gets += 1
                engine, send = logged_times(gets)
                runs.append((secs, nbytes, nrows, engine, send))
            secs, nbytes, nrows, engine, send = sorted(runs)[len(runs) // 2]
            rows.append(Row(f"Flight DoGet, {layout}", secs, nbytes, nrows, engine, send, f"engine {a.engine}"))

        problems: List[str] = []
        for layout, out_file in out_files.items():
            run_cmd = [binary, "run", edges, "--undirected", "--layout", layout, "--engine", a.engine,
                       "-o", out_file]

            def cli() -> Optional[float]:
                done = subprocess.run(run_cmd, check=True, capture_output=True, text=True)
                return engine_seconds(done.stderr)

            secs, eng = median_time(cli, a.repeat)
            size = os.path.getsize(out_file)
            with pa.memory_map(out_file) as src:
                want = pa.ipc.open_file(src).read_all()
                names = ("source", "distance") if layout == "matrix" else ("source", "reachable", "eccentricity", "sum")
                if got[layout].num_rows != want.num_rows:
                    problems.append(f"{layout}: Flight sent {got[layout].num_rows} rows, the CLI wrote {want.num_rows}")
                else:
                    problems += [f"{layout}: column {n} differs from the CLI's" for n in same_columns(got[layout], want, names)]
                nrows = want.num_rows
            note = f"engine's own time {eng:.3f} s (last run)" if eng is not None else "no summary line"
            rows.append(Row(f"`pathctl run -o {a.tmpfs}/x.arrow`, {layout}", secs, size, nrows, None, None, note))
        return rows, problems
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        # The results and the vertex order the CLI writes beside a matrix.
        for out_file in out_files.values():
            for path in (out_file, out_file[: -len(".arrow")] + ".vertices.arrow"):
                if os.path.exists(path):
                    os.remove(path)
        shutil.rmtree(work, ignore_errors=True)


def fmt_seconds(s: Optional[float]) -> str:
    return "-" if s is None else f"{s:.3f}"


def table(a: argparse.Namespace, rows: Sequence[Row], problems: Sequence[str] = ()) -> str:
    window = f"client window {a.client_window >> 20} MiB" if a.client_window else "client window gRPC's default"
    out = [f"R-MAT {a.scale} (edge factor {a.edge_factor}, undirected, weights 1..100), "
           f"median of {a.repeat}, loopback, {window}",
           "",
           "| what | seconds | MB | GB/s | engine s | send s | send GB/s | rows/s | note |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        send_rate = fmt_rate(r.nbytes, r.send, 1e9) if r.send else "-"
        out.append(f"| {r.what} | {r.seconds:.3f} | {r.nbytes / 1e6:,.1f} | {r.nbytes / r.seconds / 1e9:.2f} "
                   f"| {fmt_seconds(r.engine)} | {fmt_seconds(r.send)} | {send_rate} "
                   f"| {fmt_rate(r.nrows, r.seconds, 1)} | {r.note} |")
    out.append("")
    if problems:
        out += [f"MISMATCH: {p}" for p in problems]
    else:
        out.append("checked: the matrix and the stats received over Flight equal the CLI's")
    return "\n".join(out)


def main(argv: Sequence[str]) -> int:
    a = parse_args(argv)
    rows, problems = run(a)
    print(table(a, rows, problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
