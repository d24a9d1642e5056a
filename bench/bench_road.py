#!/usr/bin/env python3
"""Road networks: pathctl's contraction hierarchy against RoutingKit's
customizable contraction hierarchy (routingkit-cch on PyPI), on one
machine, every answer checked against scipy in the same run
(``make bench-road``).

    python3 bench/bench_road.py --pathctl bin/pathctl --rows 1000 --cols 1000 --od 4096

It needs python3 with numpy, scipy and pyarrow and the pathctl binary; the
peer where ``import routingkit_cch`` works (else one line says so and the
pathctl rows run alone; ``--skip-peer`` leaves it out on purpose).

The graph: ``pathctl gen grid --rows R --cols C`` (``--graph road``: ``pathctl
gen road``, travel times, ``--oneway`` of its local streets one-way), seeded;
vertex (r, c) has id r·C + c, which gives the peer's nested dissection its
coordinates (latitude r, longitude c). Every file holds both arcs of a
two-way street, so every tool reads it as directed arcs. S = T = ``--od``
vertices are drawn at random (seeded), sources and targets apart.

Rows, in this order:

1. ``pathctl index G -o X``: the process's wall time, the build time it
   prints, and the index's bytes over the CSR's (int64 offsets, int32
   targets and a weight per arc).
2. OD S×T with ``--index X`` (``run --sources-file --targets-file --layout
   matrix``) on each ``--engine`` (ch's sweeps: per source on the CPU, a
   block of sources at once on the GPU), then the same without an
   index on each ``--engine`` (the CPU engine's auto builds a hierarchy in
   the run where the sources repay it; the GPU engine runs its search
   kernels): the process's wall time and the engine time of the summary
   line of ``--verbose`` ("pairs in": preparing the runner, the
   hierarchy's build or the targets' buckets included, computing, writing).
3. One pair: ``pathctl path --algo ch --index X`` (the process's wall;
   ``path`` prints no engine time) and the same pair as a 1 × 1 ``run
   --index`` (its engine time, which the summary rounds to the millisecond).
4. The peer, in this process: the nested-dissection order
   (``compute_order_inertial``), the CCH built from it, the customization
   with the weights (``CCHMetric``), OD S×T through ``CCHOneToMany`` (the
   targets pinned, one sweep per source) on one thread (``--peer-sample``
   sources, extrapolated) and on ``--peer-threads`` threads (one pinned
   query object each; the binding releases the GIL in the sweeps), and
   ``--pairs`` random pairs through ``CCHQuery`` (distance and node path),
   averaged. The Python lists the binding takes are made before each clock
   starts; its results are converted to numpy after the clock stops.

Checks, each against ``scipy.sparse.csgraph.dijkstra`` from ``--check``
sampled sources of the OD matrix and the first ``--check`` pairs' sources:
every OD matrix's rows of those sources; the path's distance, its ends, its
arcs and their weights' sum; the 1 × 1 run's distance; the peer's OD rows
and pairs (distance and node path). Beyond the sample, every OD matrix must
equal the first in full (the peer's rows where it ran a sample). Any
mismatch or failed run exits 1.

Threads: pathctl's ``--threads`` (default every core); for each row the CPU
time over the wall time (pathctl: its process, from rusage; the peer: this
process's) says how many cores it kept busy. The table ends with the
comparison of issue 40: pathctl end to end, its index build included,
against the peer's query phase alone on OD S×T. ``--out`` is rewritten after
every row, so that a run cut short still leaves the rows it finished.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import resource
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu as bc  # noqa: E402  (graph rules, result readers, comparisons)
import bench_queries as bq  # noqa: E402  (the --verbose summary, id files, the machine line)

ENGINES = ("cpu", "gpu", "auto")
DIST_BYTES = {"int32": 4, "float32": 4, "int64": 8, "float64": 8}

# --------------------------------------------------------------------------
# The graph


@dataclass
class Road:
    """The generated graph as pathctl builds it, and each vertex's grid
    coordinates (its row and column, from its id)."""

    path: str
    g: bc.Graph
    cols: int

    @property
    def lat(self) -> np.ndarray:
        return (self.g.ids // self.cols).astype(np.float64)

    @property
    def lon(self) -> np.ndarray:
        return (self.g.ids % self.cols).astype(np.float64)


def gen_command(args: argparse.Namespace, out: str) -> list[str]:
    cmd = [args.pathctl, "gen", args.graph, "--rows", str(args.rows), "--cols", str(args.cols), "--seed", str(args.seed)]
    if args.graph == "grid":
        cmd += ["--weights", args.weights]
    elif args.oneway:
        cmd += ["--oneway", repr(args.oneway)]
    return cmd + ["-o", out]


def make_graph(args: argparse.Namespace, log) -> Road:
    import pyarrow.parquet as pq

    path = os.path.join(args.work, f"{args.graph}{args.rows}x{args.cols}.parquet")
    cmd = gen_command(args, path)
    print("+ " + shlex.join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    t = pq.read_table(path)
    g = bc.canonical_graph(t.column("src").to_numpy(), t.column("dst").to_numpy(), t.column("weight").to_numpy())
    return Road(path, g, args.cols)


def csr_bytes(n: int, arcs: int, dist_type: str) -> int:
    """The CSR's memory as pathctl holds it: int64 offsets, int32 targets,
    a weight of the distance type per arc."""
    return 8 * (n + 1) + 4 * arcs + DIST_BYTES[dist_type] * arcs


# --------------------------------------------------------------------------
# Running pathctl


@dataclass
class Proc:
    """One pathctl process: its wall and CPU seconds, stdout and stderr."""

    wall: float
    cpu: float
    stdout: str
    stderr: str


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_process(cmd: list[str], log) -> Proc:
    """Runs cmd, timed; raises with its stderr where it fails."""
    print("+ " + shlex.join(cmd), file=log, flush=True)
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    print(f"  wall {wall:.3f} s, CPU {cpu:.3f} s", file=log, flush=True)
    return Proc(wall, cpu, proc.stdout, proc.stderr)


_INDEX_LINE = re.compile(r"wrote the hierarchy of (\d+) vertices \((\d+) arcs, (\d+) shortcuts\) to .* in (\S+)$", re.M)
_READY = re.compile(r"distances \(ready in (\S+)\)$", re.M)
_AUTO = re.compile(r"^pathctl: auto: (.*)$", re.M)


@dataclass
class Index:
    proc: Proc
    build: float  # the seconds index prints (its start to the hierarchy built)
    arcs: int
    shortcuts: int


def parse_index(proc: Proc) -> Index:
    m = _INDEX_LINE.search(proc.stderr)
    if not m:
        raise RuntimeError(f"pathctl index printed no summary line: {proc.stderr.strip()}")
    return Index(proc, bq.parse_duration(m.group(4)), int(m.group(2)), int(m.group(3)))


@dataclass
class ODRun:
    proc: Proc
    run: bq.Run  # the summary line: engine seconds, engine, algorithm, distance type
    ready: float | None  # the runner's preparation (a hierarchy built, the targets' buckets)
    auto: str  # what auto said it chose and why ("" where it said nothing)


def parse_od(proc: Proc) -> ODRun:
    run = bq.parse_verbose(proc.stderr, proc.wall)
    if run.pipeline is None:
        raise RuntimeError(f"pathctl run printed no summary line: {proc.stderr.strip()}")
    ready = _READY.search(proc.stderr)
    auto = _AUTO.findall(proc.stderr)
    return ODRun(proc, run, bq.parse_duration(ready.group(1)) if ready else None, "; ".join(auto))


def pathctl_args(args: argparse.Namespace) -> list[str]:
    return ["--threads", str(args.threads)] if args.threads else []


# --------------------------------------------------------------------------
# Checks


def check_od(label: str, road: Road, sources: np.ndarray, targets: np.ndarray, want: np.ndarray,
             path: str) -> tuple[list[str], np.ndarray]:
    """Problems of the OD matrix in path (compact ids sources × targets)
    against scipy's rows want of its first len(want) sources, and the
    matrix (float64, +inf unreachable)."""
    ids = road.g.ids
    got_sources, columns, got = bc.read_matrix(path, ids[sources])
    problems = []
    if not np.array_equal(np.asarray(columns, dtype=np.int64), ids[targets]):
        problems.append(f"{label}: the columns are not the targets in their given order")
        return problems, got
    for k in range(len(want)):
        problems += [f"{label}, source {ids[sources[k]]}: {p}" for p in bc.compare_distances(want[k], got[k])]
    return problems, got


def same_matrix(label: str, first: np.ndarray, other: np.ndarray) -> list[str]:
    """Problems where other (its first rows) differs from first."""
    rows = len(other)
    if other.shape[1:] != first.shape[1:] or rows > len(first):
        return [f"{label}: shape {other.shape}, expected {first.shape}"]
    bad = first[:rows] != other
    if bad.any():
        r, c = np.argwhere(bad)[0]
        return [f"{label}: {int(bad.sum())} of {bad.size} distances differ from the first matrix's, "
                f"first at row {r}, column {c}: {other[r, c]} against {first[r, c]}"]
    return []


def check_path(road: Road, weights: dict, a: int, b: int, want: float, dist: float | None, path: list[int]) -> list[str]:
    """Problems of a path a → b (compact ids) of distance dist: its
    distance against scipy's, its ends, its arcs and their weights."""
    if dist is None or not np.isfinite(want):
        return [] if dist is None and not np.isfinite(want) else [f"pair {a} → {b}: distance {dist}, expected {want}"]
    out = []
    if dist != want:
        out.append(f"pair {a} → {b}: distance {dist}, expected {want}")
    if not path or path[0] != a or path[-1] != b:
        out.append(f"pair {a} → {b}: the path runs from {path[:1]} to {path[-1:]}")
        return out
    total = 0.0
    for u, v in zip(path, path[1:]):
        w = weights.get((u, v))
        if w is None:
            return out + [f"pair {a} → {b}: the path uses {u} → {v}, not an arc"]
        total += w
    if total != dist:
        out.append(f"pair {a} → {b}: the path's arcs weigh {total}, its distance is {dist}")
    return out


def arc_weights(road: Road, vertices: set) -> dict:
    """The weight of every arc leaving the given compact vertices."""
    g = road.g
    sel = np.isin(g.src, np.fromiter(vertices, dtype=np.int64))
    return {(int(u), int(v)): float(w) for u, v, w in zip(g.src[sel], g.dst[sel], g.weight[sel])}


# --------------------------------------------------------------------------
# The peer: RoutingKit's customizable contraction hierarchy


def import_peer():
    """The routingkit_cch module and its version, or None and why not."""
    try:
        import routingkit_cch
    except ImportError as err:
        return None, f"routingkit_cch does not import ({err}); the peer rows are left out (pip install routingkit-cch)"
    try:
        from importlib.metadata import version

        ver = version("routingkit-cch")
    except Exception:  # noqa: BLE001  (no metadata beside the module: the version stays unknown)
        ver = "?"
    return routingkit_cch, ver


@dataclass
class Timed:
    wall: float
    cpu: float


def timed(fn):
    """fn's result, its wall seconds and this process's CPU seconds in it."""
    cpu, start = time.process_time(), time.perf_counter()
    out = fn()
    return out, Timed(time.perf_counter() - start, time.process_time() - cpu)


def peer_od(rk, metric, sources: list[int], targets: list[int], threads: int) -> tuple[list, Timed, float]:
    """sources × targets through CCHOneToMany on threads threads, each
    pinning the targets in its own query object and sweeping a contiguous
    share of the sources: (the rows in source order, the time, the longest
    pinning)."""
    shares = np.array_split(np.arange(len(sources)), threads)
    rows: list = [None] * threads
    pins = [0.0] * threads
    errors: list = []

    def work(i: int) -> None:
        try:
            start = time.perf_counter()
            query = rk.CCHOneToMany(metric, targets)
            pins[i] = time.perf_counter() - start
            rows[i] = [query.distances_from(sources[k]) for k in shares[i]]
            del query
        except Exception as err:  # noqa: BLE001  (raised again in the caller's thread)
            errors.append(err)

    def run() -> None:
        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    _, t = timed(run)
    if errors:
        raise errors[0]
    return [r for part in rows for r in part], t, max(pins)


def as_matrix(rows: list) -> np.ndarray:
    """The peer's rows (None unreachable) as float64 with +inf."""
    m = np.array(rows, dtype=np.float64).reshape(len(rows), -1)
    m[np.isnan(m)] = np.inf
    return m


# --------------------------------------------------------------------------
# Report


@dataclass
class Row:
    tool: str
    step: str
    wall: float | None  # the process's wall seconds (pathctl), None for calls in this process
    seconds: float | None  # in-process seconds: pathctl's summary line, the peer's call
    threads: str
    cpu_ratio: float | None  # CPU seconds / wall seconds
    check: str
    note: str = ""


@dataclass
class Report:
    rows: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    comparison: list = field(default_factory=list)


HEADER = ["tool", "step", "wall seconds", "in-process seconds", "threads", "CPU / wall", "check", "note"]


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


def format_report(report: Report, machine: str, command: str, graph: str) -> str:
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [f"Machine: {machine}. Date: {date}.", "", f"Graph: {graph}.", "", f"Command: `{command}`", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in report.rows:
        cells = [r.tool, r.step, fmt(r.wall), fmt(r.seconds), r.threads, "—" if r.cpu_ratio is None else f"{r.cpu_ratio:.2f}",
                 r.check, r.note]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "wall seconds: the pathctl process, reading the graph (and the index) included. in-process seconds: "
              "pathctl's summary line (`--verbose`: \"pairs in\", or what `index` prints), the peer's call alone. "
              "CPU / wall: the cores a row kept busy."]
    if report.comparison:
        lines += [""] + report.comparison
    if report.notes:
        lines += ["", "Notes:"] + [f"- {x}" for x in report.notes]
    if report.failures:
        lines += ["", "FAILURES:"] + [f"- {x}" for x in report.failures]
    return "\n".join(lines) + "\n"


def checked(problems: list[str], what: str) -> str:
    return what if not problems else "MISMATCH"


# --------------------------------------------------------------------------
# The rows


@dataclass
class Bench:
    """What the rows share: the graph, the sample, scipy's rows, the
    results that later rows compare with."""

    args: argparse.Namespace
    road: Road
    report: Report
    log: object
    save: object
    sources: np.ndarray  # compact ids
    targets: np.ndarray
    pairs: np.ndarray  # (k, 2) compact ids
    want_od: np.ndarray  # scipy: the first --check sources' rows, the targets' columns
    want_pairs: np.ndarray  # scipy: the first --check pairs' distances
    index_path: str = ""
    index: Index | None = None
    first_od: np.ndarray | None = None  # the --index run's matrix
    od_index: ODRun | None = None
    od_auto: dict = field(default_factory=dict)  # engine: ODRun
    peer_query: Timed | None = None
    peer_setup: float = 0.0  # order + CCH + customization seconds

    @property
    def threads(self) -> str:
        return str(self.args.threads or os.cpu_count() or 1)

    def files(self) -> tuple[str, str]:
        ids = self.road.g.ids
        s = bq.write_ids(os.path.join(self.args.work, "od-sources.txt"), ids[self.sources])
        t = bq.write_ids(os.path.join(self.args.work, "od-targets.txt"), ids[self.targets])
        return s, t


def index_row(b: Bench) -> None:
    g = b.road.g
    b.index_path = os.path.join(b.args.work, "road.idx")
    proc = run_process([b.args.pathctl, "index", b.road.path, "-o", b.index_path, *pathctl_args(b.args)], b.log)
    b.index = parse_index(proc)
    size = os.path.getsize(b.index_path)
    csr = csr_bytes(g.n, g.m, "int32")
    b.report.rows.append(Row("pathctl", "`index G -o X`", proc.wall, b.index.build, b.threads, proc.cpu / proc.wall,
                             "— (the OD and pair rows check it)",
                             f"{b.index.arcs} hierarchy arcs, {b.index.shortcuts} shortcuts; index {size / 1e6:.2f} MB / "
                             f"CSR {csr / 1e6:.2f} MB = {size / csr:.2f}×"))


def od_rows(b: Bench) -> None:
    s_file, t_file = b.files()
    g, args = b.road.g, b.args
    shape = f"OD {len(b.sources)} × {len(b.targets)}"
    base = [args.pathctl, "run", b.road.path, "--sources-file", s_file, "--targets-file", t_file, "--layout", "matrix",
            "--verbose", *pathctl_args(args)]
    runs = [(f"index-{e}", ["--index", b.index_path, "--engine", e], f"{shape}, `--index X`, `--engine {e}`") for e in args.engine]
    runs += [(e, ["--engine", e], f"{shape}, no index, `--engine {e}`") for e in args.engine]
    for key, extra, step in runs:
        out = os.path.join(args.work, f"od-{key}.arrow")
        try:
            od = parse_od(run_process(base + extra + ["-o", out], b.log))
        except RuntimeError as err:
            b.report.failures.append(f"{step}: {err}")
            b.save()
            continue
        problems, got = check_od(step, b.road, b.sources, b.targets, b.want_od, out)
        if b.first_od is None:
            b.first_od = got
        else:
            problems += same_matrix(step, b.first_od, got)
        if e_differs(key.removeprefix("index-"), od.run.engine):
            problems.append(f"{step}: ran on engine {od.run.engine}")
        if od.run.dist_type and od.run.dist_type != "int32":
            csr = csr_bytes(g.n, g.m, od.run.dist_type)
            b.report.notes.append(f"{od.run.dist_type} distances: the CSR holds {csr / 1e6:.2f} MB")
        b.report.failures += problems
        if key.startswith("index-"):
            # The comparison takes the fastest engine's run with the index.
            if b.od_index is None or od.run.pipeline < b.od_index.run.pipeline:
                b.od_index = od
        else:
            b.od_auto[key] = od
        note = f"engine {od.run.engine}: {od.run.algorithm}; prepared in {fmt(od.ready)} s"
        if od.auto:
            note += f"; auto: {od.auto}"
        b.report.rows.append(Row("pathctl", step, od.proc.wall, od.run.pipeline, b.threads, od.proc.cpu / od.proc.wall,
                                 checked(problems, f"{len(b.want_od)} rows equal scipy's"
                                         + ("" if b.first_od is got else "; all equal the first matrix")), note))
        b.save()


def e_differs(asked: str, ran: str) -> bool:
    return asked != "auto" and asked != ran


def pair_rows(b: Bench) -> None:
    args, ids = b.args, b.road.g.ids
    a, z = (int(x) for x in b.pairs[0])
    want = b.want_pairs[0]
    try:
        proc = run_process([args.pathctl, "path", b.road.path, "--algo", "ch", "--index", b.index_path, "--engine", "cpu",
                            "--from", str(ids[a]), "--to", str(ids[z]), *pathctl_args(args)], b.log)
        lines = proc.stdout.split()
        dist = float(lines[0]) if lines else None
        path = [int(np.searchsorted(ids, int(x))) for x in lines[1:]]
        problems = check_path(b.road, arc_weights(b.road, set(path)), a, z, want, dist, path)
        b.report.failures += problems
        b.report.rows.append(Row("pathctl", "one pair, `path --algo ch --index X`", proc.wall, None, "1",
                                 proc.cpu / proc.wall,
                                 checked(problems, "distance equals scipy's; the path's arcs add up to it"),
                                 f"{ids[a]} → {ids[z]}: distance {fmt(dist)}, {len(path)} vertices; `path` prints no engine time"))
    except RuntimeError as err:
        b.report.failures.append(f"path: {err}")
    out = os.path.join(args.work, "pair.arrow")
    try:
        od = parse_od(run_process([args.pathctl, "run", b.road.path, "--index", b.index_path, "--engine", "cpu",
                                   "--sources", str(ids[a]), "--targets", str(ids[z]), "--layout", "matrix", "--verbose",
                                   "-o", out, *pathctl_args(args)], b.log))
        _, _, got = bc.read_matrix(out, ids[[a]])
        problems = [f"1 × 1 run: {p}" for p in bc.compare_distances(np.array([want]), got[0])]
        b.report.failures += problems
        b.report.rows.append(Row("pathctl", "one pair, 1 × 1 `run --index X`", od.proc.wall, od.run.pipeline, "1",
                                 od.proc.cpu / od.proc.wall, checked(problems, "distance equals scipy's"),
                                 "the summary rounds to the millisecond (0: under half of one); "
                                 f"prepared (the target's bucket) in {fmt(od.ready)} s"))
    except (RuntimeError, KeyError) as err:
        b.report.failures.append(f"1 × 1 run: {err}")
    b.save()


def peer_rows(b: Bench, rk, version: str) -> None:
    """The peer's phases, each row checked where it answers."""
    args, road, g = b.args, b.road, b.road.g
    tool = f"routingkit-cch {version}"
    tail, head = g.src.tolist(), g.dst.tolist()
    lat, lon = road.lat.tolist(), road.lon.tolist()
    weights = g.weight.astype(np.int64).tolist()

    order, t = timed(lambda: rk.compute_order_inertial(g.n, tail, head, lat, lon))
    b.report.rows.append(Row(tool, "order: `compute_order_inertial` (nested dissection)", None, t.wall, "1",
                             t.cpu / t.wall, "—", "coordinates: latitude = row, longitude = column of the grid"))
    setup = t.wall
    cch, t = timed(lambda: rk.CCH(order, tail, head, False))
    b.report.rows.append(Row(tool, "preprocessing: `CCH(order, tail, head)`", None, t.wall, "1", t.cpu / t.wall, "—",
                             "weight-independent"))
    setup += t.wall
    metric, t = timed(lambda: rk.CCHMetric(cch, weights))
    b.report.rows.append(Row(tool, "customization: `CCHMetric(cch, weights)`", None, t.wall, "1", t.cpu / t.wall, "—",
                             "the binding's sequential customization (it has no parallel one)"))
    setup += t.wall
    b.peer_setup = setup
    b.save()

    sources = [int(x) for x in b.sources]  # the compact ids are the peer's vertices
    targets = [int(x) for x in b.targets]
    shape = f"OD {len(sources)} × {len(targets)}"

    # One thread on a sample: the pinning once, the sweeps extrapolated.
    k = min(len(sources), max(args.peer_sample, len(b.want_od)))
    rows, t1, pin = peer_od(rk, metric, sources[:k], targets, 1)
    per_source = (t1.wall - pin) / k
    one = pin + per_source * len(sources)
    sample = as_matrix(rows)
    problems = peer_problems(b, f"{tool} {shape}, 1 thread", sample)
    b.report.failures += problems
    b.report.rows.append(Row(tool, f"{shape}, `CCHOneToMany`, 1 thread", None, one, "1", t1.cpu / t1.wall,
                             checked(problems, peer_checked(b, k)),
                             f"pinning the targets {pin:.3g} s, then {per_source * 1e3:.3g} ms a source"
                             + ("" if k == len(sources) else f"; {k} of {len(sources)} sources, extrapolated")))
    b.save()

    # Every thread: all the sources, or as many as fit --peer-budget.
    threads = args.peer_threads or os.cpu_count() or 1
    estimate = threads * pin + per_source * len(sources) / threads
    k = len(sources) if estimate <= args.peer_budget else \
        min(len(sources), max(threads, int((args.peer_budget - threads * pin) / per_source * threads)))
    rows, tn, pin_n = peer_od(rk, metric, sources[:k], targets, threads)
    query = Timed(tn.wall * len(sources) / k, tn.cpu * len(sources) / k)
    problems = peer_problems(b, f"{tool} {shape}, {threads} threads", as_matrix(rows))
    b.report.failures += problems
    b.peer_query = query
    b.report.rows.append(Row(tool, f"{shape}, `CCHOneToMany`, {threads} threads", None, query.wall, str(threads),
                             tn.cpu / tn.wall,
                             checked(problems, peer_checked(b, k)),
                             f"one query object a thread, each pinning the targets (the longest {pin_n:.3g} s)"
                             + ("" if k == len(sources) else f"; {k} of {len(sources)} sources (--peer-budget), extrapolated")))
    b.save()

    # Pairs: distance and node path, as pathctl path gives them.
    pairs = [(int(a), int(z)) for a, z in b.pairs]
    query_obj = rk.CCHQuery(metric)

    def run_pairs():
        out = []
        for a, z in pairs:
            r = query_obj.run(a, z)
            out.append((r.distance, r.node_path))
            del r
        return out

    answers, t = timed(run_pairs)
    del query_obj
    weights_of = arc_weights(road, {v for _, p in answers[: len(b.want_pairs)] for v in p})
    problems = []
    for (a, z), (dist, path), want in zip(pairs, answers, b.want_pairs):
        problems += [f"{tool} pair: {p}" for p in check_path(road, weights_of, a, z, want,
                                                              None if dist is None else float(dist), list(path))]
    b.report.failures += problems
    b.report.rows.append(Row(tool, "one pair, `CCHQuery.run` (distance and node path)", None, t.wall / len(pairs), "1",
                             t.cpu / t.wall,
                             checked(problems, f"{len(b.want_pairs)} pairs' distances equal scipy's; their paths add up"),
                             f"the mean of {len(pairs)} random pairs"))
    b.save()


def peer_problems(b: Bench, label: str, got: np.ndarray) -> list[str]:
    """The peer's OD rows against scipy's and against pathctl's first matrix."""
    out = []
    for k in range(min(len(b.want_od), len(got))):
        out += [f"{label}, source {b.road.g.ids[b.sources[k]]}: {p}" for p in bc.compare_distances(b.want_od[k], got[k])]
    if b.first_od is not None:
        out += same_matrix(label, b.first_od, got)
    return out


def peer_checked(b: Bench, rows: int) -> str:
    what = f"{len(b.want_od)} rows equal scipy's"
    return what if b.first_od is None else what + f"; {rows} rows equal pathctl's"


def comparison(b: Bench, peer: bool) -> list[str]:
    """Issue 40's comparison: pathctl end to end, the index build included,
    against the peer's query phase alone on OD S×T."""
    out = []
    shape = f"OD {len(b.sources)} × {len(b.targets)}"
    if b.index is None or b.od_index is None:
        return [f"Comparison: no {shape} figure of pathctl with its index (a run failed)."]
    ours = b.index.proc.wall + b.od_index.proc.wall
    text = (f"pathctl end to end on {shape}, index build included: `index` {b.index.proc.wall:.3g} s + `run --index` "
            f"{b.od_index.proc.wall:.3g} s = {ours:.3g} s (process walls; in process {b.index.build:.3g} s + "
            f"{b.od_index.run.pipeline:.3g} s)")
    auto = b.od_auto.get("cpu")
    if auto is not None:
        text += f"; one `run` without an index on the CPU engine: {auto.proc.wall:.3g} s"
    out.append(text + ".")
    if peer and b.peer_query is not None:
        q = b.peer_query.wall
        out.append(f"routingkit-cch's query phase alone on {shape}: {q:.3g} s on {b.args.peer_threads or os.cpu_count()} "
                   f"threads (its order, preprocessing and customization before it: {b.peer_setup:.3g} s, not counted).")
        out.append(f"**pathctl end to end takes {ours / q:.3g}× routingkit-cch's query phase** (below 1×: pathctl is faster)"
                   + ("" if auto is None else f"; one run without an index {auto.proc.wall / q:.3g}×")
                   + f"; pathctl's query alone (`run --index`, in process) {b.od_index.run.pipeline / q:.3g}× the peer's; "
                   f"both whole (pathctl index + run against the peer's order, CCH, customization and query) "
                   f"{ours / (q + b.peer_setup):.3g}×.")
    return ["Comparison (issue 40): " + out[0]] + out[1:]


# --------------------------------------------------------------------------
# Main


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pathctl", default=os.environ.get("PATHCTL_BIN", "bin/pathctl"), help="the pathctl binary")
    ap.add_argument("--graph", choices=("grid", "road"), default="grid", help="pathctl gen grid or pathctl gen road")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=1000)
    ap.add_argument("--weights", default="1:100", help="gen grid's integer weights MIN:MAX")
    ap.add_argument("--oneway", type=float, default=0.0, help="gen road's share of one-way local street segments")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--od", type=int, default=4096, help="sources and targets of the OD matrix (each)")
    ap.add_argument("--engine", default="cpu",
                    help="engines of the OD run without an index, comma-separated, of cpu, gpu, auto")
    ap.add_argument("--threads", type=int, default=0, help="pathctl's --threads (0: its default, every core)")
    ap.add_argument("--check", type=int, default=4, help="OD sources and pairs checked against scipy")
    ap.add_argument("--pairs", type=int, default=1000, help="the peer's random pairs (the first is pathctl's pair)")
    ap.add_argument("--skip-peer", action="store_true", help="leave routingkit-cch out")
    ap.add_argument("--peer-threads", type=int, default=0, help="the peer's OD threads (0: every core)")
    ap.add_argument("--peer-sample", type=int, default=256, help="sources of the peer's one-thread OD, extrapolated")
    ap.add_argument("--peer-budget", type=float, default=240.0,
                    help="seconds the peer's OD on every thread may take before it runs a sample")
    ap.add_argument("--work", default="bench/results/road", help="folder for the graph, the index and the results")
    ap.add_argument("--out", default="bench/results/bench-road.md", help="the markdown report")
    args = ap.parse_args(argv)
    args.engine = [e.strip() for e in args.engine.split(",") if e.strip()]
    bad = [e for e in args.engine if e not in ENGINES]
    if bad or not args.engine:
        ap.error(f"--engine: {bad[0] if bad else 'none'} (engines: {','.join(ENGINES)})")
    if args.rows < 2 or args.cols < 2 or min(args.od, args.check, args.pairs, args.peer_sample) < 1:
        ap.error("--rows and --cols at least 2, --od, --check, --pairs and --peer-sample at least 1")
    if args.threads < 0 or args.peer_threads < 0:
        ap.error("--threads and --peer-threads are not negative")
    return args


def main(argv: list[str]) -> int:
    from scipy.sparse.csgraph import dijkstra

    args = parse_args(argv)
    log = sys.stderr
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    started = time.perf_counter()
    machine = bq.machine_line(args.pathctl)
    command = "python3 bench/bench_road.py " + shlex.join(argv)
    report = Report()
    graph = f"`{' '.join(gen_command(args, 'G')[1:])}`"

    def save(extra: list[str] | None = None) -> str:
        text = format_report(Report(report.rows, report.failures, report.notes + (extra or []), report.comparison),
                             machine, command, graph)
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
        return text

    peer, version = (None, "--skip-peer: the peer rows are left out") if args.skip_peer else import_peer()
    if peer is None:
        print(version, flush=True)
        report.notes.append(version)

    # 1. The graph, the sample and scipy's answers for the checks.
    try:
        road = make_graph(args, log)
    except RuntimeError as err:
        report.failures.append(str(err))
        print(save())
        return 1
    g = road.g
    graph += f": {g.n} vertices, {g.m} arcs"
    rng = np.random.default_rng([args.seed, 40])
    sources = rng.choice(g.n, size=min(args.od, g.n), replace=False)
    targets = rng.choice(g.n, size=min(args.od, g.n), replace=False)
    pairs = rng.integers(0, g.n, size=(args.pairs, 2))
    check = min(args.check, len(sources))
    checked_sources = np.concatenate([sources[:check], pairs[: args.check, 0]])
    at = time.perf_counter()
    want = dijkstra(g.csr(), directed=True, indices=checked_sources)
    report.notes.append(f"scipy's Dijkstra from the {len(checked_sources)} checked sources took {time.perf_counter() - at:.1f} s")
    want_od = want[:check][:, targets]
    want_pairs = want[check + np.arange(min(args.check, len(pairs))), pairs[: args.check, 1]]
    del want
    b = Bench(args, road, report, log, save, sources, targets, pairs, want_od, want_pairs)
    save(["(run in progress)"])

    # 2. pathctl: the index, the OD matrices, one pair.
    try:
        index_row(b)
    except RuntimeError as err:
        report.failures.append(f"index: {err}")
    save(["(run in progress)"])
    if b.index is not None:
        od_rows(b)
        pair_rows(b)

    # 3. The peer.
    if peer is not None:
        try:
            peer_rows(b, peer, version)
        except (RuntimeError, ValueError, OverflowError) as err:
            report.failures.append(f"routingkit-cch: {err}")

    report.comparison = comparison(b, peer is not None)
    report.notes.append(f"the whole run took {time.perf_counter() - started:.0f} s, checks included")
    print(save())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
