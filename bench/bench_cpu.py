#!/usr/bin/env python3
"""CPU benchmark of pathctl against scipy and networkx (``make bench-cpu``).

For each graph the harness, in one run:

1. generates it with ``pathctl gen`` into ``bench/results/NAME.parquet``;
2. times ``pathctl run`` on the CPU engine for all sources: ``--layout stats``
   (compute, no n^2 output) with every core and with ``--threads 1``, and
   ``--layout matrix`` into an Arrow file (compute plus the full output);
3. times ``scipy.sparse.csgraph.dijkstra`` on one core (a sample of sources,
   extrapolated to all) and on every core (a process pool over blocks of
   sources; all of them when the one-core estimate fits ``--budget``);
4. times networkx ``single_source_dijkstra_path_length`` on the graphs with
   at most ``--nx-max-arcs`` arcs (a few sources, extrapolated);
5. checks correctness: on sampled sources, pathctl's matrix rows and stats
   rows must equal scipy's distances; any mismatch fails the run (exit 1);
6. prints one table and writes it, with the machine, date and command, as
   Markdown to ``bench/results/bench-cpu.md``.

Timings of pathctl are of the whole command (reading the Parquet file,
building the graph, computing, writing). pairs/s counts n^2 (source, target)
pairs per second, unreachable pairs included. "per core vs scipy" is the
tool's pairs/s per core divided by scipy's one-core pairs/s.

The graph scipy and networkx see is the one pathctl builds: vertices are the
ids that occur in the table (ascending), self-loops are dropped and duplicate
arcs keep their smallest weight.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

# --------------------------------------------------------------------------
# Graph specifications


@dataclass(frozen=True)
class GraphSpec:
    """One benchmark graph: a name and the ``pathctl gen`` arguments."""

    name: str
    kind: str  # rmat | grid | uniform
    args: tuple[str, ...]

    def gen_command(self, pathctl: str, out: str, seed: int) -> list[str]:
        return [pathctl, "gen", self.kind, *self.args, "--seed", str(seed), "-o", out]


def rmat_spec(scale: int, edge_factor: int) -> GraphSpec:
    return GraphSpec(f"rmat{scale}", "rmat", ("--scale", str(scale), "--edge-factor", str(edge_factor)))


def grid_spec(rows: int, cols: int) -> GraphSpec:
    return GraphSpec(f"grid{rows}x{cols}", "grid", ("--rows", str(rows), "--cols", str(cols)))


def uniform_spec(n: int, degree: int) -> GraphSpec:
    return GraphSpec(f"uniform{n}d{degree}", "uniform", ("--vertices", str(n), "--degree", str(degree)))


def parse_pair(text: str, sep: str) -> tuple[int, int]:
    a, b = text.lower().split(sep)
    return int(a), int(b)


def graph_specs(args: argparse.Namespace) -> list[GraphSpec]:
    specs = [rmat_spec(s, args.edge_factor) for s in args.rmat_scales]
    specs += [grid_spec(*parse_pair(g, "x")) for g in args.grids]
    specs += [uniform_spec(*parse_pair(u, ":")) for u in args.uniform]
    return specs


# --------------------------------------------------------------------------
# Loading the edge table as pathctl sees it


@dataclass
class Graph:
    """A deduplicated directed graph over compact ids 0..n-1."""

    ids: np.ndarray  # external id of each compact vertex, ascending
    src: np.ndarray  # compact ids, int64
    dst: np.ndarray
    weight: np.ndarray  # float64
    rows: int  # rows of the input table
    integer_weights: bool = True  # integer or no weights: distances compare exactly

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def m(self) -> int:
        return len(self.src)

    def csr(self):
        import scipy.sparse as sp

        return sp.csr_matrix((self.weight, (self.src, self.dst)), shape=(self.n, self.n))


def canonical_graph(src, dst, weight=None) -> Graph:
    """Applies pathctl's input rules to raw columns: vertices are the ids that
    occur, in ascending order; self-loops are dropped; of duplicate arcs the
    lightest stays. Weight None means every arc weighs 1."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    rows = len(src)
    w = np.ones(rows, dtype=np.float64) if weight is None else np.asarray(weight, dtype=np.float64)
    ids = np.unique(np.concatenate([src, dst]))
    u = np.searchsorted(ids, src)
    v = np.searchsorted(ids, dst)
    keep = u != v
    u, v, w = u[keep], v[keep], w[keep]
    order = np.lexsort((w, v, u))  # by u, then v, then weight
    u, v, w = u[order], v[order], w[order]
    first = np.ones(len(u), dtype=bool)
    first[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    integer = weight is None or np.asarray(weight).dtype.kind in "iu"
    return Graph(ids=ids, src=u[first], dst=v[first], weight=w[first], rows=rows, integer_weights=integer)


def load_parquet(path: str) -> Graph:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    weight = table.column("weight").to_numpy() if "weight" in table.column_names else None
    return canonical_graph(table.column("src").to_numpy(), table.column("dst").to_numpy(), weight)


# --------------------------------------------------------------------------
# Reading pathctl's results


def read_matrix(path: str, sources: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reads a matrix-layout result: returns (sources, vertex order, distances)
    with distances as float64, +inf where unreachable (null for integers).
    With sources (external ids), only their rows are converted, in that
    order, so that a large result is never copied whole; a source missing
    from the file raises KeyError."""
    import pyarrow as pa
    import pyarrow.compute as pc

    with pa.memory_map(path) as source:
        table = pa.ipc.open_file(source).read_all()
    meta = table.schema.metadata or {}
    vertices_name = meta.get(b"pathctl.vertices")
    if vertices_name is not None:
        vertices_path = os.path.join(os.path.dirname(path), vertices_name.decode())
    else:
        base, ext = os.path.splitext(path)
        vertices_path = base + ".vertices" + ext
    with pa.memory_map(vertices_path) as source:
        vertices = pa.ipc.open_file(source).read_all().column("vertex").to_numpy()
    n = len(vertices)
    all_sources = table.column("source").to_numpy()
    column = table.column("distance")
    if sources is not None:
        row_of = {int(s): i for i, s in enumerate(all_sources)}
        missing = [int(s) for s in sources if int(s) not in row_of]
        if missing:
            raise KeyError(f"{path}: no row for source {missing[0]}")
        column = column.take(pa.array([row_of[int(s)] for s in sources], pa.int64()))
        all_sources = np.asarray(sources)
    flat = column.combine_chunks().flatten()  # respects the list array's offset
    values = pc.fill_null(flat.cast("float64"), float("inf")).to_numpy()
    return all_sources, vertices, values.reshape(-1, n)


def read_stats(path: str) -> dict[str, np.ndarray]:
    import pyarrow as pa

    with pa.memory_map(path) as source:
        table = pa.ipc.open_file(source).read_all()
    return {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}


# --------------------------------------------------------------------------
# Correctness


def compare_distances(expected: np.ndarray, got: np.ndarray, rtol: float = 0.0) -> list[str]:
    """Compares two rows of distances (inf = unreachable); returns one line per
    kind of disagreement (empty when they agree)."""
    problems = []
    exp_inf, got_inf = np.isinf(expected), np.isinf(got)
    if (exp_inf != got_inf).any():
        k = int(np.argmax(exp_inf != got_inf))
        problems.append(f"reachability differs at target index {k}: expected {expected[k]}, got {got[k]}")
    both = ~exp_inf & ~got_inf
    if rtol == 0.0:
        bad = both & (expected != got)
    else:
        bad = both & ~np.isclose(expected, got, rtol=rtol, atol=0.0)
    if bad.any():
        k = int(np.argmax(bad))
        problems.append(f"{int(bad.sum())} distances differ, first at target index {k}: expected {expected[k]}, got {got[k]}")
    return problems


def stats_of_row(row: np.ndarray, source_index: int) -> dict[str, float]:
    """design.md's stats of one distance row, over the other vertices reached:
    reachable, sum, eccentricity (None when none is reached), closeness in
    the Wasserman-Faust form and harmonic (1/0 counted as 0)."""
    n = len(row)
    mask = np.isfinite(row)
    mask[source_index] = False
    reached = row[mask]
    r, total = int(mask.sum()), float(reached.sum())
    closeness = (r / total) * (r / (n - 1)) if r > 0 and total > 0 else 0.0
    positive = reached[reached > 0]
    return {
        "reachable": r,
        "sum": total,
        "eccentricity": float(reached.max()) if r else None,
        "closeness": closeness,
        "harmonic": float((1.0 / positive).sum()),
    }


def check_results(g: Graph, check_sources: np.ndarray, matrix_path: str, stats_path: str, rtol: float) -> list[str]:
    """Checks pathctl's matrix rows and stats rows of check_sources (compact
    ids) against scipy's Dijkstra. Returns the problems found."""
    from scipy.sparse.csgraph import dijkstra

    want = dijkstra(g.csr(), directed=True, indices=check_sources)
    problems = []
    external = g.ids[check_sources]
    try:
        _, vertices, dist = read_matrix(matrix_path, external)
    except KeyError as err:
        return [f"matrix: {err}"]
    if len(vertices) != g.n or not np.array_equal(np.asarray(vertices, dtype=np.int64), g.ids):
        return [f"{matrix_path}: vertex order has {len(vertices)} ids, expected the {g.n} ascending ids of the input"]
    for k, s in enumerate(check_sources):
        for p in compare_distances(want[k], dist[k], rtol):
            problems.append(f"matrix, source {int(g.ids[s])}: {p}")
    return problems + check_stats(g, check_sources, want, stats_path, rtol)


def check_stats(g: Graph, check_sources: np.ndarray, want: np.ndarray, stats_path: str, rtol: float) -> list[str]:
    """Checks pathctl's stats rows of check_sources (compact ids) against
    want, their rows of scipy's Dijkstra. Returns the problems found."""
    problems = []
    stats = read_stats(stats_path)
    stats_row_of = {int(s): i for i, s in enumerate(stats["source"])}
    for k, s in enumerate(check_sources):
        ext = int(g.ids[s])
        if ext not in stats_row_of:
            problems.append(f"stats: source {ext} missing")
            continue
        i = stats_row_of[ext]
        exp = stats_of_row(want[k], int(s))
        if int(stats["reachable"][i]) != exp["reachable"]:
            problems.append(f"stats, source {ext}: reachable {stats['reachable'][i]}, expected {exp['reachable']}")
        if not np.isclose(float(stats["sum"][i]), exp["sum"], rtol=max(rtol, 1e-12)):
            problems.append(f"stats, source {ext}: sum {stats['sum'][i]}, expected {exp['sum']}")
        for name in ("closeness", "harmonic"):
            if name in stats and not np.isclose(float(stats[name][i]), exp[name], rtol=max(rtol, 1e-9), atol=0.0):
                problems.append(f"stats, source {ext}: {name} {stats[name][i]}, expected {exp[name]}")
        ecc = stats["eccentricity"][i]
        if exp["eccentricity"] is None:
            if ecc is not None and not (isinstance(ecc, float) and np.isnan(ecc)):
                problems.append(f"stats, source {ext}: eccentricity {ecc}, expected null")
        elif ecc is None or not np.isclose(float(ecc), exp["eccentricity"], rtol=max(rtol, 1e-12)):
            problems.append(f"stats, source {ext}: eccentricity {ecc}, expected {exp['eccentricity']}")
    return problems


# --------------------------------------------------------------------------
# Timed runs


@dataclass
class Row:
    graph: str
    n: int
    m: int
    tool: str
    cores: int
    seconds: float
    extrapolated: bool = False
    note: str = ""

    @property
    def pairs_per_second(self) -> float:
        return self.n * self.n / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    load_at_start: float = 0.0


def run_timed(cmd: list[str], log) -> float:
    """Runs cmd, returns its wall time; raises with its stderr on failure."""
    return run_timed_stderr(cmd, log)[0]


def run_timed_stderr(cmd: list[str], log) -> tuple[float, str]:
    """Runs cmd, returns its wall time and its stderr (also copied to log);
    raises with its stderr on failure."""
    print("+ " + shlex.join(cmd), file=log, flush=True)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    if proc.stderr.strip():
        print("  " + proc.stderr.strip().replace("\n", "\n  "), file=log, flush=True)
    return elapsed, proc.stderr


def best_of(repeat: int, fn) -> float:
    return min(fn() for _ in range(max(1, repeat)))


_POOL_CSR = None


def _pool_block(block: np.ndarray) -> tuple[int, float]:
    """Worker: Dijkstra from one block of sources; returns small reductions so
    that no n^2 result crosses the process boundary."""
    from scipy.sparse.csgraph import dijkstra

    d = dijkstra(_POOL_CSR, directed=True, indices=block)
    finite = np.isfinite(d)
    return int(finite.sum()), float(d[finite].sum())


def scipy_one_core(csr, sources: np.ndarray) -> float:
    from scipy.sparse.csgraph import dijkstra

    start = time.perf_counter()
    dijkstra(csr, directed=True, indices=sources)
    return time.perf_counter() - start


def scipy_pool(csr, sources: np.ndarray, workers: int, block: int) -> tuple[float, int, float]:
    """Dijkstra over sources on a fork pool of workers; returns (seconds,
    finite pairs, sum of finite distances)."""
    global _POOL_CSR
    _POOL_CSR = csr
    blocks = [sources[i : i + block] for i in range(0, len(sources), block)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        start = time.perf_counter()
        parts = pool.map(_pool_block, blocks, chunksize=1)
        elapsed = time.perf_counter() - start
    _POOL_CSR = None
    return elapsed, sum(p[0] for p in parts), sum(p[1] for p in parts)


def networkx_time(g: Graph, sources: np.ndarray) -> float:
    import networkx as nx

    G = nx.DiGraph()
    G.add_nodes_from(range(g.n))
    G.add_weighted_edges_from(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))
    start = time.perf_counter()
    for s in sources.tolist():
        nx.single_source_dijkstra_path_length(G, s)
    return time.perf_counter() - start


def extrapolate(seconds: float, done: int, total: int) -> float:
    """Time for total sources from the time of done sources."""
    return seconds * total / max(done, 1)


def sample_sources(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(n, size=min(k, n), replace=False)).astype(np.int64)


def bench_graph(spec: GraphSpec, args: argparse.Namespace, report: Report, log) -> None:
    out = args.out
    parquet = os.path.join(out, spec.name + ".parquet")
    extra = ["--float-weights"] if args.float_weights else []
    gen_seconds = run_timed(spec.gen_command(args.pathctl, parquet, args.seed) + extra, log)
    g = load_parquet(parquet)
    n, m = g.n, g.m
    report.notes.append(
        f"{spec.name}: `{shlex.join(['pathctl', 'gen', spec.kind, *spec.args, '--seed', str(args.seed), *extra])}`: "
        f"{g.rows} rows, {n} vertices that occur, {m} distinct arcs; generated and written in {gen_seconds:.2f} s"
    )
    print(f"{spec.name}: n={n} m={m} (rows {g.rows})", file=log, flush=True)
    cores = os.cpu_count() or 1
    rng = np.random.default_rng(args.seed)
    # urfave/cli stops reading flags at the first argument: the file goes last.
    def pathctl_run(*flags: str) -> list[str]:
        return [args.pathctl, "run", "--engine", "cpu", "--algo", args.algo, "--quiet", *flags, parquet]

    stats_path = os.path.join(out, spec.name + ".stats.arrow")
    t = best_of(args.repeat, lambda: run_timed(pathctl_run("--layout", "stats", "-o", stats_path), log))
    report.rows.append(Row(spec.name, n, m, "pathctl cpu (stats)", cores, t))
    t = best_of(args.repeat, lambda: run_timed(pathctl_run("--layout", "stats", "--threads", "1", "-o", stats_path), log))
    report.rows.append(Row(spec.name, n, m, "pathctl cpu (stats)", 1, t))
    matrix_path = os.path.join(out, spec.name + ".matrix.arrow")
    t = best_of(args.repeat, lambda: run_timed(pathctl_run("--layout", "matrix", "-o", matrix_path), log))
    report.rows.append(Row(spec.name, n, m, "pathctl cpu (matrix → .arrow)", cores, t))

    # Correctness, in the same run, before anything else is deleted.
    check = sample_sources(n, args.check, rng)
    problems = check_results(g, check, matrix_path, stats_path, rtol=0.0 if g.integer_weights else 1e-6)
    if problems:
        report.failures += [f"{spec.name}: {p}" for p in problems]
    else:
        report.notes.append(f"{spec.name}: pathctl matrix and stats rows of {len(check)} sampled sources equal scipy's Dijkstra")
    if not args.keep_outputs:
        for p in (matrix_path, os.path.join(out, spec.name + ".matrix.vertices.arrow")):
            if os.path.exists(p):
                os.remove(p)

    csr = g.csr()
    sample = sample_sources(n, args.scipy_samples, rng)
    t1 = extrapolate(scipy_one_core(csr, sample), len(sample), n)
    report.rows.append(Row(spec.name, n, m, "scipy dijkstra", 1, t1, extrapolated=len(sample) < n))

    all_sources = np.arange(n, dtype=np.int64)
    if t1 / cores <= args.budget:
        tp, _, _ = scipy_pool(csr, all_sources, cores, args.block)
        report.rows.append(Row(spec.name, n, m, "scipy dijkstra (process pool)", cores, tp))
    else:
        k = max(cores * args.block, int(n * args.budget * cores / t1))
        part = sample_sources(n, k, rng)
        tp, _, _ = scipy_pool(csr, part, cores, args.block)
        report.rows.append(
            Row(spec.name, n, m, "scipy dijkstra (process pool)", cores, extrapolate(tp, len(part), n), extrapolated=len(part) < n)
        )

    if m <= args.nx_max_arcs and args.nx_samples > 0:
        nsample = sample_sources(n, args.nx_samples, rng)
        tn = extrapolate(networkx_time(g, nsample), len(nsample), n)
        report.rows.append(Row(spec.name, n, m, "networkx dijkstra", 1, tn, extrapolated=len(nsample) < n))


# --------------------------------------------------------------------------
# The table


HEADER = ["graph", "n", "m", "tool", "cores", "seconds", "pairs/s", "per core vs scipy", "extrapolated"]


def human(x: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


def table_rows(rows: list[Row]) -> list[list[str]]:
    """Formats rows; the ratio is against the scipy one-core row of the same graph."""
    scipy_rate = {r.graph: r.pairs_per_second for r in rows if r.tool == "scipy dijkstra" and r.cores == 1}
    out = []
    for r in rows:
        base = scipy_rate.get(r.graph)
        ratio = f"{r.pairs_per_second / r.cores / base:.2f}×" if base else "—"
        out.append(
            [r.graph, str(r.n), str(r.m), r.tool, str(r.cores), f"{r.seconds:.3f}", human(r.pairs_per_second), ratio, "yes" if r.extrapolated else "no"]
        )
    return out


def format_table(rows: list[Row], markdown: bool) -> str:
    cells = table_rows(rows)
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(HEADER)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    return "\n".join([fmt.format(*HEADER)] + [fmt.format(*c) for c in cells])


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions(pathctl: str) -> str:
    import networkx
    import pyarrow
    import scipy

    parts = [f"Python {platform.python_version()}", f"numpy {np.__version__}", f"scipy {scipy.__version__}",
             f"pyarrow {pyarrow.__version__}", f"networkx {networkx.__version__}"]
    try:
        info = subprocess.run([pathctl, "info", "--json"], capture_output=True, text=True, timeout=60)
        if info.returncode == 0:
            version = json.loads(info.stdout).get("version")
            if version:
                parts.insert(0, f"pathctl {version}")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return ", ".join(parts)


def markdown_report(report: Report, args: argparse.Namespace, argv: list[str]) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## CPU benchmark",
        "",
        f"- machine: {cpu_model()}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}",
        f"- date: {now}",
        f"- command: `{shlex.join(['python3', 'bench/bench_cpu.py', *argv])}`",
        f"- software: {versions(args.pathctl)}",
        f"- load average (1 min) at the start: {report.load_at_start:.2f} (other work on the machine slows every row)",
        "",
        format_table(report.rows, markdown=True),
        "",
        "pathctl times are of the whole command (read Parquet, build, compute, write); `stats` writes one row per",
        "source, `matrix` the full n×n distances to an Arrow file. pairs/s = n² / seconds. \"per core vs scipy\" =",
        "(pairs/s ÷ cores) ÷ scipy's one-core pairs/s. Extrapolated rows timed a sample of sources and scaled",
        "to all n. The process pool forks one scipy worker per core over blocks of sources.",
        "",
    ]
    lines += [f"- {note}" for note in report.notes]
    if report.failures:
        lines += ["", "**FAILED** (this run is not valid):", ""] + [f"- {line}" for line in report.failures]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# main


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pathctl", default="bin/pathctl", help="pathctl binary (default bin/pathctl)")
    p.add_argument("--out", default="bench/results", help="directory for graphs and results (default bench/results)")
    p.add_argument("--quick", action="store_true", help="small graphs and samples: a smoke run of a minute or so")
    p.add_argument("--rmat-scales", type=lambda s: [int(x) for x in s.split(",") if x], default=None, help="R-MAT scales, comma-separated (default 12,14)")
    p.add_argument("--edge-factor", type=int, default=16, help="R-MAT edge factor (default 16)")
    p.add_argument("--grids", type=lambda s: [x for x in s.split(",") if x], default=None, help="grids ROWSxCOLS, comma-separated (default 128x128)")
    p.add_argument("--uniform", type=lambda s: [x for x in s.split(",") if x], default=None, help="uniform graphs N:DEGREE, comma-separated (default 16384:16)")
    p.add_argument("--algo", default="auto", help="pathctl --algo (default auto)")
    p.add_argument("--seed", type=int, default=1, help="seed for generators and samples (default 1)")
    p.add_argument("--repeat", type=int, default=1, help="pathctl runs per measurement, best kept (default 1)")
    p.add_argument("--check", type=int, default=None, help="sources checked against scipy (default 32; quick 8)")
    p.add_argument("--scipy-samples", type=int, default=None, help="sources timed for scipy on one core (default 512; quick 64)")
    p.add_argument("--budget", type=float, default=None, help="seconds the scipy pool may take before it samples (default 120; quick 10)")
    p.add_argument("--block", type=int, default=64, help="sources per process-pool task (default 64)")
    p.add_argument("--nx-samples", type=int, default=None, help="sources timed for networkx (default 16; quick 4); 0 skips it")
    p.add_argument("--nx-max-arcs", type=int, default=100_000, help="networkx only on graphs with at most this many arcs (default 100000)")
    p.add_argument("--float-weights", action="store_true", help="float64 weights (pathctl gen --float-weights) instead of integers 1..100")
    p.add_argument("--keep-outputs", action="store_true", help="keep the matrix results (n² distances each)")
    args = p.parse_args(argv)
    quick = args.quick
    if args.rmat_scales is None:
        args.rmat_scales = [10] if quick else [12, 14]
    if args.grids is None:
        args.grids = ["48x48"] if quick else ["128x128"]
    if args.uniform is None:
        args.uniform = ["2048:8"] if quick else ["16384:16"]
    for name, full, small in (("check", 32, 8), ("scipy_samples", 512, 64), ("budget", 120.0, 10.0), ("nx_samples", 16, 4)):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not os.path.exists(args.pathctl):
        print(f"bench_cpu: {args.pathctl} not found; build it with `CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl`", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    report = Report(load_at_start=os.getloadavg()[0])
    for spec in graph_specs(args):
        try:
            bench_graph(spec, args, report, sys.stderr)
        except Exception as err:  # one graph's failure must not hide the others' rows
            report.failures.append(f"{spec.name}: {type(err).__name__}: {err}")
    print(format_table(report.rows, markdown=False))
    md_path = os.path.join(args.out, "bench-cpu.md")
    with open(md_path, "w") as f:
        f.write(markdown_report(report, args, argv))
    print(f"\nwrote {md_path}")
    if report.failures:
        print("\nFAILED:", file=sys.stderr)
        for line in report.failures:
            print("  " + line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
