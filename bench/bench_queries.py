#!/usr/bin/env python3
"""The narrow queries' benchmark (issue 17's "Speed" rows): pathctl's
origin–destination matrix, cutoff, k nearest and nearest source, each timed
against its peer or baseline and checked against scipy in the same run.

    python3 bench/bench_queries.py --pathctl bin/pathctl --out bench/results/bench-queries.md

It needs python3 with numpy, scipy and pyarrow, and the pathctl binary (not
the pathctl Python package). It builds its graphs itself, from --seed:

- grid: a --grid-side² grid (default 1000², a million vertices), 4
  neighbours, --grid-drop (10 %) of its edges dropped at random, integer
  weights 1..1000, undirected; written as Parquet (src, dst, weight int64).
- rmat: `pathctl gen rmat --scale R --edge-factor 16 --seed S` (--rmat-scale, --seed)
  (integer weights 1..100), run undirected.

Rows:

1. OD matrix (grid): --od-sources random sources × --od-targets random
   targets, `--layout matrix` into an Arrow file. Peer: scipy's Dijkstra
   from every source on every core (a fork pool over blocks of sources),
   then the target columns; a sample of sources, extrapolated, where the
   whole would take longer than --peer-budget seconds (judged from a first
   round of one source per process). Check: --check rows
   equal scipy's. Device-to-host bytes: sources × targets × distance size,
   or sources × n × size where the engine narrows on the host.
2. Cutoff (rmat): every source (or --rmat-sources sampled, extrapolated),
   stats layout, with --cutoff at the --percentile-th percentile of all
   distances (estimated from scipy on --percentile-sample sources), against
   the same run without a cutoff. Check: --check sources' stats equal
   those of scipy's rows with limit=cutoff.
3. k nearest (rmat): the same sources, --k-nearest K into an Arrow file,
   against the stats run's time. Check: --check sources' K nearest (ties by
   vertex order) equal those of scipy's rows.
4. Nearest source (grid): --nearest-sources random sources, `--nearest`,
   against scipy's `dijkstra(indices=sources, min_only=True)` with the
   sources returned (one process: min_only is one multi-source run, which
   scipy does not split over cores). With --engine gpu it runs the device's
   multi-source kernels (gpu/nearest.go), whose summary (in the note) gives
   the bucket width, the rounds, the device time and the time of the whole
   device run beside the pipeline's. Check: every distance equals scipy's; sources equal
   scipy's where scipy picks the same, and where it does not, a sample is
   checked to be a tie won by the smaller id.

pathctl seconds are the in-process time: the pipeline time that
`--verbose` prints (engine start, compute, copies and writing; reading the
edge file and building the graph excluded); the process's wall time has a
column of its own. The device-to-host column is what the GPU engine says it
copied back (`--verbose`: "device-to-host: N bytes of results"), beside the
bytes the narrow answer needs (sources × targets × the distance's size, the
k nearest's sources × K × (size + 4), the stats' 32 bytes a source); "—"
on the CPU engine. Any failed check or run
exits 1. --out is rewritten after every row, so that a run cut short by a
time limit still leaves the rows it finished.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu as bc  # noqa: E402  (graph rules, result readers, row stats)

DIST_BYTES = {"int32": 4, "float32": 4, "int64": 8, "float64": 8}
STATS_BYTES = 32  # the four 8-byte stats words a source the GPU copies back
ROWS = ["od", "cutoff", "knearest", "nearest"]

# --------------------------------------------------------------------------
# Graphs


def grid_edges(side: int, drop: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The road-like grid: side × side vertices (id = row·side + column),
    edges to the right and downward neighbours, round(drop · edges) of them
    dropped at random, integer weights 1..1000. Deterministic from seed."""
    rng = np.random.default_rng([seed, 0x6772])
    ids = np.arange(side * side, dtype=np.int64).reshape(side, side)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    m = len(src)
    keep = np.sort(rng.permutation(m)[: m - int(round(drop * m))])
    weight = rng.integers(1, 1001, size=m, dtype=np.int64)
    return src[keep], dst[keep], weight[keep]


def write_edges(path: str, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64()),
                             "weight": pa.array(weight, pa.int64())}), path)


def read_edges(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return t.column("src").to_numpy(), t.column("dst").to_numpy(), t.column("weight").to_numpy()


def undirected_graph(src, dst, weight) -> bc.Graph:
    """The graph `pathctl run --undirected` builds from the rows."""
    return bc.canonical_graph(np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([weight, weight]))


# --------------------------------------------------------------------------
# Running pathctl


@dataclass
class Run:
    """One `pathctl run --verbose`: wall and pipeline seconds, and what its
    summary says."""

    wall: float
    pipeline: float | None
    engine: str = "?"
    algorithm: str = "?"
    dist_type: str | None = None
    d2h: int | None = None  # device-to-host bytes of results, as --verbose reports them
    stderr: str = ""

    @property
    def seconds(self) -> float:
        return self.pipeline if self.pipeline is not None else self.wall

    @property
    def host_narrowed(self) -> bool:
        """Whether the engine brought full rows to the host and narrowed them there."""
        return "on the host" in self.algorithm


_DURATION = re.compile(r"([0-9.]+)(h|ms|µs|us|ns|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def parse_duration(text: str) -> float:
    """Seconds of a Go duration string (117ms, 2.5s, 1m2.3s, 0s)."""
    parts = _DURATION.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(a) * _UNIT[b] for a, b in parts)


_SUMMARY = re.compile(r"pairs in (\S+) \([^)]*\), engine (\S+), algorithm (.*); \d+ rows, .* written to ")
_DIST = re.compile(r"\b(int32|int64|float32|float64) distances\b")
_D2H = re.compile(r"device-to-host: (\d+) bytes of results")


def parse_verbose(stderr: str, wall: float) -> Run:
    """The pipeline time, engine, algorithm and distance type that `pathctl
    run --verbose` printed (None and "?" where it printed none)."""
    run = Run(wall=wall, pipeline=None, stderr=stderr)
    for line in stderr.splitlines():
        m = _SUMMARY.search(line)
        if m:
            run.pipeline = parse_duration(m.group(1))
            run.engine, run.algorithm = m.group(2), m.group(3)
        d = _DIST.search(line)
        if d and run.dist_type is None:
            run.dist_type = d.group(1)
        b = _D2H.search(line)
        if b:
            run.d2h = int(b.group(1))
    return run


def run_pathctl(args: argparse.Namespace, argv: list[str], log) -> Run:
    """Runs `pathctl run ARGV --engine E --verbose`; raises with its stderr on failure."""
    cmd = [args.pathctl, "run", *argv, "--engine", args.engine, "--verbose", *shlex.split(args.pathctl_args)]
    print("+ " + shlex.join(cmd), file=log, flush=True)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    run = parse_verbose(proc.stderr, wall)
    print(f"  wall {wall:.2f} s, pipeline {'?' if run.pipeline is None else f'{run.pipeline:.3f}'} s, "
          f"engine {run.engine}, {run.algorithm}, device-to-host {d2h_cell(run.d2h, None)}", file=log, flush=True)
    return run


def write_ids(path: str, ids: np.ndarray) -> str:
    with open(path, "w") as f:
        f.write("\n".join(str(int(x)) for x in ids) + "\n")
    return path


# --------------------------------------------------------------------------
# scipy


_POOL_CSR = None
_POOL_TARGETS = None


def _od_block(block: np.ndarray) -> np.ndarray:
    """Worker: Dijkstra from a block of sources, then the target columns."""
    from scipy.sparse.csgraph import dijkstra

    return dijkstra(_POOL_CSR, directed=True, indices=block)[:, _POOL_TARGETS]


def scipy_od(csr, sources: np.ndarray, targets: np.ndarray, workers: int) -> tuple[float, np.ndarray]:
    """scipy's sources × targets distances on a fork pool of workers, in
    blocks of sources: (seconds, the matrix)."""
    global _POOL_CSR, _POOL_TARGETS
    _POOL_CSR, _POOL_TARGETS = csr, targets
    block = max(1, min(64, len(sources) // (4 * workers)))
    blocks = [sources[i : i + block] for i in range(0, len(sources), block)]
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            start = time.perf_counter()
            parts = pool.map(_od_block, blocks, chunksize=1)
            elapsed = time.perf_counter() - start
    finally:
        _POOL_CSR = _POOL_TARGETS = None
    return elapsed, np.vstack(parts)


def peer_rounds(first_round: float, rounds: int, budget: float) -> int:
    """How many rounds (one source per worker each) scipy runs of the rounds
    that every source needs, the first of which took first_round seconds:
    all of them when they fit budget seconds, else as many as fit, at least
    the first."""
    if first_round * rounds <= budget:
        return rounds
    return max(1, min(rounds, int(budget / first_round) if first_round > 0 else rounds))


def percentile_lower(values: np.ndarray, q: float) -> float:
    """The q-th percentile of values, the lower of the two neighbours where
    it falls between two (numpy's method="lower", on any numpy): a
    distance that occurs."""
    ordered = np.sort(values)
    return float(ordered[int(np.floor(q / 100 * (len(ordered) - 1)))])


def k_nearest_of_row(row: np.ndarray, source: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest vertices of a distance row other than source (ties by
    vertex index), nearest first: (vertex indices, distances)."""
    reach = np.flatnonzero(np.isfinite(row))
    reach = reach[reach != source]
    order = np.lexsort((reach, row[reach]))[:k]
    return reach[order], row[reach[order]]


def nearest_truth(csr, vertex: int, sources: np.ndarray) -> tuple[float, int]:
    """The distance from vertex to its nearest source and that source's
    index, the smallest of a tie (csr symmetric: one Dijkstra from vertex)."""
    from scipy.sparse.csgraph import dijkstra

    d = dijkstra(csr, directed=True, indices=[vertex])[0][sources]
    best = d.min()
    return float(best), int(sources[d == best].min()) if np.isfinite(best) else -1


# --------------------------------------------------------------------------
# Result checks


def compare_stats(want_row: np.ndarray, source: int, stats: dict, i: int, label: str) -> list[str]:
    """Problems between stats row i of a result and the stats of want_row."""
    exp = bc.stats_of_row(want_row, source)
    out = []
    if int(stats["reachable"][i]) != exp["reachable"]:
        out.append(f"{label}: reachable {stats['reachable'][i]}, expected {exp['reachable']}")
    for name in ("sum", "closeness", "harmonic"):
        if not np.isclose(float(stats[name][i]), exp[name], rtol=1e-9, atol=0.0):
            out.append(f"{label}: {name} {stats[name][i]}, expected {exp[name]}")
    ecc = stats["eccentricity"][i]
    ecc = None if ecc is None or (isinstance(ecc, float) and np.isnan(ecc)) else float(ecc)
    if (ecc is None) != (exp["eccentricity"] is None) or (ecc is not None and ecc != exp["eccentricity"]):
        out.append(f"{label}: eccentricity {ecc}, expected {exp['eccentricity']}")
    return out


def read_table(path: str):
    import pyarrow as pa

    with pa.memory_map(path) as f:
        return pa.ipc.open_file(f).read_all()


def check_k_nearest(g: bc.Graph, want: np.ndarray, check: np.ndarray, k: int, path: str) -> list[str]:
    """Problems between the k-nearest pairs in path and scipy's rows want of
    the check sources (compact ids)."""
    t = read_table(path)
    for name in ("source", "target", "distance", "rank"):
        if name not in t.column_names:
            return [f"{path}: no {name} column (columns {t.column_names})"]
    src = t.column("source").to_numpy()
    out = []
    for r, s in enumerate(check):
        ext = int(g.ids[s])
        sel = np.flatnonzero(src == ext)
        rank = t.column("rank").take(sel).to_numpy()
        order = np.argsort(rank)
        got_t = t.column("target").take(sel).to_numpy()[order]
        got_d = t.column("distance").take(sel).to_numpy().astype(np.float64)[order]
        vs, ds = k_nearest_of_row(want[r], int(s), k)
        if not np.array_equal(rank[order], np.arange(1, len(sel) + 1)):
            out.append(f"k nearest, source {ext}: ranks {rank[order].tolist()}, expected 1..{len(sel)}")
        if len(sel) != len(vs) or not np.array_equal(got_t, g.ids[vs]) or not np.array_equal(got_d, ds):
            out.append(f"k nearest, source {ext}: got {list(zip(got_t.tolist(), got_d.tolist()))}, "
                       f"expected {list(zip(g.ids[vs].tolist(), ds.tolist()))}")
    return out


def check_nearest(g: bc.Graph, csr, sources: np.ndarray, dist: np.ndarray, owner: np.ndarray,
                  path: str, sample: int, rng: np.random.Generator) -> tuple[list[str], str]:
    """Problems between the nearest layout in path and scipy's min_only
    answer (dist, owner: compact ids, -1 where unreached), and a line on
    the sources compared."""
    import pyarrow.compute as pc

    t = read_table(path)
    for name in ("vertex", "distance", "source"):
        if name not in t.column_names:
            return [f"{path}: no {name} column (columns {t.column_names})"], ""
    vert = np.searchsorted(g.ids, t.column("vertex").to_numpy())
    got_d = np.full(g.n, np.inf)
    got_s = np.full(g.n, -1, dtype=np.int64)
    got_d[vert] = pc.cast(t.column("distance"), "float64").to_numpy()
    got_s[vert] = np.searchsorted(g.ids, t.column("source").to_numpy())
    out = []
    if len(np.unique(vert)) != len(vert):
        out.append(f"nearest: {len(vert) - len(np.unique(vert))} vertices appear more than once")
    for p in bc.compare_distances(dist, got_d):
        out.append(f"nearest distances: {p}")
    reached = np.isfinite(dist)
    differ = np.flatnonzero(reached & (got_s != owner))
    pick = np.concatenate([rng.choice(differ, size=min(sample, len(differ)), replace=False),
                           rng.choice(np.flatnonzero(reached), size=min(sample, int(reached.sum())), replace=False)])
    for v in pick:
        d, s = nearest_truth(csr, int(v), sources)
        if got_s[v] != s or got_d[v] != d:
            out.append(f"nearest, vertex {g.ids[v]}: source {g.ids[got_s[v]] if got_s[v] >= 0 else None} at {got_d[v]}, "
                       f"expected {g.ids[s]} at {d} (the smallest id of the nearest)")
    line = (f"distances equal scipy's at all {g.n} vertices; the source equals scipy's at {int(reached.sum()) - len(differ)}, "
            f"differs at {len(differ)} (ties scipy breaks otherwise), {len(pick)} sampled checked as the smallest nearest id")
    return out, line


# --------------------------------------------------------------------------
# Report


@dataclass
class Row:
    graph: str
    n: int
    arcs: int
    row: str
    pathctl: float | None  # seconds
    peer: float | None
    ratio: float | None
    goal: str  # text, e.g. "≥ 100×"
    met: bool | None
    check: str
    note: str = ""
    wall: float | None = None  # the pathctl process's wall seconds (not extrapolated)
    d2h: int | None = None  # device-to-host bytes the engine reported
    d2h_needed: int | None = None  # the narrow answer's bytes


@dataclass
class Report:
    rows: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


HEADER = ["graph", "n", "arcs", "row", "pathctl seconds", "peer seconds", "ratio", "goal", "met?", "check",
          "wall seconds", "device-to-host", "note"]


def ratio_of(a: float, b: float) -> float | None:
    """a / b, None where b is 0 (a time below the millisecond --verbose prints)."""
    return a / b if b > 0 else None


def at_least(ratio: float | None, goal: float) -> bool | None:
    return None if ratio is None else ratio >= goal


def fmt(x: float | None, suffix: str = "") -> str:
    return "—" if x is None else f"{x:.3g}{suffix}"


def format_table(report: Report, machine: str, command: str) -> str:
    lines = [f"Machine: {machine}. Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}.",
             "", f"Command: `{command}`", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in report.rows:
        met = "—" if r.met is None else ("yes" if r.met else "no")
        cells = [r.graph, str(r.n), str(r.arcs), r.row, fmt(r.pathctl), fmt(r.peer), fmt(r.ratio, "×"), r.goal, met, r.check,
                 fmt(r.wall), d2h_cell(r.d2h, r.d2h_needed), r.note]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "pathctl seconds: the in-process time, the pipeline time `--verbose` prints (reading the edge file and "
              "building the graph excluded); extrapolated as seconds × n / sources where sources were sampled. wall "
              "seconds: the pathctl process's, as run (not extrapolated). device-to-host: the result bytes the GPU engine "
              "copied back in the run, and in brackets those the narrow answer needs. ratio: peer / pathctl for OD matrix, cutoff and nearest source (a speedup); k nearest / "
              "stats for k nearest."]
    if report.notes:
        lines += ["", "Notes:"] + [f"- {x}" for x in report.notes]
    if report.failures:
        lines += ["", "FAILURES:"] + [f"- {x}" for x in report.failures]
    return "\n".join(lines) + "\n"


def machine_line(pathctl: str) -> str:
    cpu = bc.cpu_model()
    gpu = "no GPU seen by nvidia-smi"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            gpu = out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        ver = subprocess.run([pathctl, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except OSError:
        ver = "?"
    return f"{gpu}; {os.cpu_count()} CPUs ({cpu}); {ver}"


# --------------------------------------------------------------------------
# The rows


def od_row(args, g: bc.Graph, path: str, report: Report, log) -> None:
    from scipy.sparse.csgraph import dijkstra

    rng = np.random.default_rng([args.seed, 1])
    sources = rng.choice(g.n, size=min(args.od_sources, g.n), replace=False)
    targets = rng.choice(g.n, size=min(args.od_targets, g.n), replace=False)
    s_file = write_ids(os.path.join(args.work, "od-sources.txt"), g.ids[sources])
    t_file = write_ids(os.path.join(args.work, "od-targets.txt"), g.ids[targets])
    out = os.path.join(args.work, "od.arrow")
    run = run_pathctl(args, [path, "--undirected", "--sources-file", s_file, "--targets-file", t_file,
                             "--layout", "matrix", "-o", out], log)

    csr = g.csr()
    check = sources[: args.check]
    want = dijkstra(csr, directed=True, indices=check)[:, targets]
    problems = []
    got_sources, columns, got = bc.read_matrix(out, g.ids[check])
    if not np.array_equal(np.asarray(columns, dtype=np.int64), g.ids[targets]):
        problems.append("OD matrix: the columns are not the targets in their given order")
    else:
        for k, s in enumerate(check):
            problems += [f"OD matrix, source {g.ids[s]}: {p}" for p in bc.compare_distances(want[k], got[k])]

    # scipy on every core: a first round of one source per worker says how
    # many rounds fit --peer-budget (the rest of the sources, or a sample).
    workers = args.workers or os.cpu_count() or 1
    first, peer_first = scipy_od(csr, sources[:workers], targets, workers)
    rounds = peer_rounds(first, -(-len(sources) // workers), args.peer_budget)
    k = min(len(sources), rounds * workers)
    elapsed, peer_rest = scipy_od(csr, sources[workers:k], targets, workers) if k > workers else (0.0, peer_first[:0])
    peer = (first + elapsed) * len(sources) / k
    peer_matrix = np.vstack([peer_first, peer_rest])
    m = min(k, len(check))
    if len(peer_matrix) != k or not np.array_equal(peer_matrix[:m], want[:m]):
        problems.append("OD matrix: scipy's pool disagrees with scipy's single run")

    size = DIST_BYTES.get(run.dist_type or "", 4)
    narrow = len(sources) * len(targets) * size
    note = f"engine {run.engine}: {run.algorithm}; {run.dist_type} distances"
    if run.engine == "gpu" and run.host_narrowed:
        note += f", but the engine moves full rows: {bc_bytes(len(sources) * g.n * size)} (targets gathered on the host)"
    elif run.engine != "gpu":
        note += " (no device: CPU engine)"
    note += f"; scipy {'on all' if k == len(sources) else f'on {k} of the'} {len(sources)} sources, {workers} processes" + \
            ("" if k == len(sources) else ", extrapolated")
    report.failures += problems
    report.rows.append(Row("grid", g.n, g.m, f"OD matrix {len(sources)} × {len(targets)}", run.seconds, peer,
                           ratio_of(peer, run.seconds), "≥ 100×", at_least(ratio_of(peer, run.seconds), 100),
                           f"{len(check)} rows equal scipy's" if not problems else "MISMATCH", note,
                           wall=run.wall, d2h=run.d2h, d2h_needed=narrow))


def device_note(run: Run, sources: int, n: int) -> str:
    """What a GPU run of rows that are narrowed on the host (k nearest, a
    cutoff) moves off the device: full rows."""
    if run.engine != "gpu":
        return ""
    size = DIST_BYTES.get(run.dist_type or "", 4)
    return f"; off the device: full rows, {bc_bytes(sources * n * size)} for the {sources} sources run"


def d2h_cell(got: int | None, needed: int | None) -> str:
    """The device-to-host cell: the bytes copied, and those needed."""
    if got is None:
        return "—"
    return bc_bytes(got) + ("" if needed is None else f" (needs {bc_bytes(needed)})")


def bc_bytes(x: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if x >= scale:
            return f"{x / scale:.1f} {unit}"
    return f"{int(x)} B"


_DEVICE_TIMES = re.compile(r"on the device: kernels (\S+), device-to-host copies (\S+),")


def device_times(run: Run) -> tuple[float, float] | None:
    """The kernels' and the device-to-host copies' seconds that `--verbose`
    printed on its time line (CUDA events, in the process), or None (no
    device)."""
    m = _DEVICE_TIMES.search(run.stderr)
    if not m:
        return None
    return parse_duration(m.group(1)), parse_duration(m.group(2))


def cutoff_times(cut: Run, full: Run, scipy_limit: float, checked: int, sources: int) -> str:
    """The cutoff row's in-process times: the pipeline's with and without
    the cutoff, the kernels' and device-to-host copies' where the engine ran
    on the device, and scipy's dijkstra(limit) on one process, extrapolated
    from the checked sources to every source run."""
    line = f"pipeline {cut.seconds:.3g} s vs {full.seconds:.3g} s without the cutoff"
    dev_cut, dev_full = device_times(cut), device_times(full)
    if dev_cut and dev_full:
        speedup = ratio_of(dev_full[0], dev_cut[0])
        line += (f"; kernels {dev_cut[0]:.3g} s vs {dev_full[0]:.3g} s"
                 f"{'' if speedup is None else f' ({speedup:.3g}×)'}"
                 f", device-to-host copies {dev_cut[1]:.3g} s vs {dev_full[1]:.3g} s")
    return line + f"; scipy dijkstra(limit=cutoff) {scipy_limit:.3g} s (1 process, {checked} sources extrapolated to {sources})"


def rmat_rows(args, g: bc.Graph, path: str, report: Report, log, save=lambda extra: None) -> None:
    from scipy.sparse.csgraph import dijkstra

    csr = g.csr()
    rng = np.random.default_rng([args.seed, 2])
    sample = rng.choice(g.n, size=min(args.percentile_sample, g.n), replace=False)
    d = dijkstra(csr, directed=True, indices=sample)
    d[np.arange(len(sample)), sample] = np.inf  # a source's own 0 is no distance between two vertices
    finite = d[np.isfinite(d)]
    cutoff = percentile_lower(finite, args.percentile)
    report.notes.append(f"rmat cutoff {cutoff:g}: the percentile {args.percentile:g} of the {len(finite)} finite distances "
                        f"from {len(sample)} sampled sources (scipy)")

    base = [path, "--undirected"]
    n_sources = g.n
    if args.rmat_sources and args.rmat_sources < g.n:
        chosen = rng.choice(g.n, size=args.rmat_sources, replace=False)
        base += ["--sources-file", write_ids(os.path.join(args.work, "rmat-sources.txt"), g.ids[chosen])]
        n_sources = len(chosen)
    else:
        chosen = np.arange(g.n)
    scale = g.n / n_sources
    extrap = "" if n_sources == g.n else f"; {n_sources} of {g.n} sources, extrapolated"
    check = chosen[rng.choice(len(chosen), size=min(args.check, len(chosen)), replace=False)]

    full_path = os.path.join(args.work, "rmat-stats.arrow")
    cut_path = os.path.join(args.work, "rmat-stats-cutoff.arrow")
    k_path = os.path.join(args.work, "rmat-knearest.arrow")
    want_full = dijkstra(csr, directed=True, indices=check)

    # The stats run without a cutoff is the baseline of both rows.
    full = run_pathctl(args, base + ["--layout", "stats", "-o", full_path], log)

    def cutoff_row() -> None:
        cut = run_pathctl(args, base + ["--layout", "stats", "--cutoff", repr(cutoff), "-o", cut_path], log)
        start = time.perf_counter()
        want = dijkstra(csr, directed=True, indices=check, limit=cutoff)
        scipy_limit = (time.perf_counter() - start) * n_sources / len(check)
        times = cutoff_times(cut, full, scipy_limit, len(check), n_sources)
        print(f"  cutoff {cutoff:g}: {times}", file=log, flush=True)
        report.notes.append(f"rmat cutoff row, in the process: {times}")
        problems = []
        if not np.array_equal(want, np.where(want_full > cutoff, np.inf, want_full)):
            problems.append("scipy's limit disagrees with its clipped rows")
        for path_, rows, label in ((cut_path, want, "stats with cutoff"), (full_path, want_full, "stats")):
            stats = bc.read_stats(path_)
            row_of = {int(s): i for i, s in enumerate(stats["source"])}
            for k, s in enumerate(check):
                ext = int(g.ids[s])
                if ext not in row_of:
                    problems.append(f"{label}: no row for source {ext}")
                    continue
                problems += compare_stats(rows[k], int(s), stats, row_of[ext], f"{label}, source {ext}")
        report.failures += problems
        ratio = ratio_of(full.seconds, cut.seconds)
        note = (f"peer: the same run without --cutoff (wall {full.wall:.3g} s, {d2h_cell(full.d2h, None)} off the device); "
                f"cutoff {cutoff:g} (percentile {args.percentile:g} of all distances); "
                f"engine {cut.engine}: {cut.algorithm}{extrap}"
                f"{device_note(cut, n_sources, g.n) if cut.host_narrowed else ''}")
        report.rows.append(Row("rmat", g.n, g.m, "cutoff, stats", cut.seconds * scale, full.seconds * scale, ratio,
                               "≥ 5×", at_least(ratio, 5),
                               f"{len(check)} sources' stats equal scipy's (limit) and without it" if not problems else "MISMATCH",
                               note, wall=cut.wall, d2h=cut.d2h, d2h_needed=STATS_BYTES * n_sources))

    def knearest_row() -> None:
        kn = run_pathctl(args, base + ["--k-nearest", str(args.k), "-o", k_path], log)
        problems = check_k_nearest(g, want_full, check, args.k, k_path)
        report.failures += problems
        ratio = ratio_of(kn.seconds, full.seconds)
        on_device = "selected by the engine" in kn.algorithm
        size = DIST_BYTES.get(kn.dist_type or "", 4)
        note = (f"peer: the stats layout's run (wall {full.wall:.3g} s); pairs with rank to an Arrow file; "
                f"engine {kn.engine}: {kn.algorithm}{extrap}"
                f"{'' if on_device or 'selected on the host' in kn.algorithm else '; the k nearest selected on the host'}"
                f"{'' if on_device else device_note(kn, n_sources, g.n)}")
        report.rows.append(Row("rmat", g.n, g.m, f"k nearest, K = {args.k}", kn.seconds * scale, full.seconds * scale,
                               ratio, "≤ 1.5×", None if ratio is None else ratio <= 1.5,
                               f"{len(check)} sources' {args.k} nearest equal scipy's" if not problems else "MISMATCH", note,
                               wall=kn.wall, d2h=kn.d2h, d2h_needed=n_sources * args.k * (size + 4)))

    for name, fn in (("cutoff", cutoff_row), ("knearest", knearest_row)):
        if name in args.rows:
            try:
                fn()
            except (RuntimeError, OSError, KeyError, ValueError) as err:
                report.failures.append(f"{name}: {err}")
            save(["(run in progress)"])


def nearest_row(args, g: bc.Graph, path: str, report: Report, log) -> None:
    from scipy.sparse.csgraph import dijkstra

    rng = np.random.default_rng([args.seed, 3])
    sources = np.sort(rng.choice(g.n, size=min(args.nearest_sources, g.n), replace=False))
    s_file = write_ids(os.path.join(args.work, "nearest-sources.txt"), g.ids[rng.permutation(sources)])
    out = os.path.join(args.work, "nearest.arrow")
    run = run_pathctl(args, [path, "--undirected", "--sources-file", s_file, "--nearest", "-o", out], log)
    csr = g.csr()
    start = time.perf_counter()
    dist, _, owner = dijkstra(csr, directed=True, indices=sources, min_only=True, return_predecessors=True)
    peer = time.perf_counter() - start
    problems, line = check_nearest(g, csr, sources, dist, owner, out, args.check, rng)
    if args.engine != "auto" and run.engine != args.engine:
        problems.append(f"nearest: ran on engine {run.engine}, asked for {args.engine}")
    report.failures += problems
    ratio = ratio_of(peer, run.seconds)
    report.rows.append(Row("grid", g.n, g.m, f"nearest source, {len(sources)} sources", run.seconds, peer, ratio,
                           "≥ 20×", at_least(ratio, 20), "equal to scipy's" if not problems else "MISMATCH",
                           f"peer: scipy dijkstra(min_only=True, return_predecessors=True), 1 process; "
                           f"engine {run.engine}: {run.algorithm}; {line}", wall=run.wall, d2h=run.d2h))


# --------------------------------------------------------------------------
# Main


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pathctl", default=os.environ.get("PATHCTL_BIN", "bin/pathctl"), help="the pathctl binary")
    ap.add_argument("--engine", default="auto", help="pathctl's --engine: auto, gpu or cpu")
    ap.add_argument("--pathctl-args", default="", help="more arguments for every `pathctl run`, e.g. '--max-block 256'")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"rows to run, of {','.join(ROWS)}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grid-side", type=int, default=1000, help="the grid is side × side vertices")
    ap.add_argument("--grid-drop", type=float, default=0.1, help="share of the grid's edges dropped")
    ap.add_argument("--rmat-scale", type=int, default=18)
    ap.add_argument("--od-sources", type=int, default=4096)
    ap.add_argument("--od-targets", type=int, default=4096)
    ap.add_argument("--nearest-sources", type=int, default=10000)
    ap.add_argument("--rmat-sources", type=int, default=0, help="R-MAT sources sampled for cutoff and k nearest (0: every vertex)")
    ap.add_argument("--k", type=int, default=16, help="K of the k-nearest row")
    ap.add_argument("--percentile", type=float, default=1.0, help="the cutoff's percentile of all distances")
    ap.add_argument("--percentile-sample", type=int, default=16, help="scipy sources that estimate the percentile")
    ap.add_argument("--peer-budget", type=float, default=60.0, help="seconds scipy's OD run may take before it is sampled")
    ap.add_argument("--workers", type=int, default=0, help="scipy processes (0: every core)")
    ap.add_argument("--check", type=int, default=4, help="sources (and vertices) checked against scipy per row")
    ap.add_argument("--work", default="bench/results/queries", help="folder for the graphs and results")
    ap.add_argument("--out", default="bench/results/bench-queries.md", help="the markdown report")
    args = ap.parse_args(argv)
    args.rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    bad = [r for r in args.rows if r not in ROWS]
    if bad:
        ap.error(f"--rows: unknown row {bad[0]!r} (rows: {','.join(ROWS)})")
    if args.grid_side < 2 or args.rmat_scale < 1 or min(args.od_sources, args.od_targets, args.nearest_sources, args.k, args.check) < 1:
        ap.error("sizes must be positive (--grid-side at least 2)")
    if not 0 < args.percentile <= 100:
        ap.error(f"--percentile {args.percentile}: between 0 and 100")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    log = sys.stderr
    os.makedirs(args.work, exist_ok=True)
    report = Report()
    started = time.perf_counter()
    machine = machine_line(args.pathctl)
    command = "python3 bench/bench_queries.py " + shlex.join(argv)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    def save(extra: list[str]) -> str:
        text = format_table(Report(report.rows, report.failures, report.notes + extra), machine, command)
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
        return text

    if {"od", "nearest"} & set(args.rows):
        path = os.path.join(args.work, f"grid{args.grid_side}.parquet")
        src, dst, w = grid_edges(args.grid_side, args.grid_drop, args.seed)
        write_edges(path, src, dst, w)
        g = undirected_graph(src, dst, w)
        print(f"grid {args.grid_side}²: {g.n} vertices, {g.m} arcs ({time.perf_counter() - started:.1f} s)", file=log, flush=True)
        for name, fn in (("od", od_row), ("nearest", nearest_row)):
            if name in args.rows:
                try:
                    at = time.perf_counter()
                    fn(args, g, path, report, log)
                    report.notes.append(f"the {name} row took {time.perf_counter() - at:.0f} s, checks and peer included")
                except (RuntimeError, OSError, KeyError, ValueError) as err:
                    report.failures.append(f"{name}: {err}")
                save(["(run in progress)"])
        del g
    if {"cutoff", "knearest"} & set(args.rows):
        path = os.path.join(args.work, f"rmat{args.rmat_scale}.parquet")
        cmd = [args.pathctl, "gen", "rmat", "--scale", str(args.rmat_scale), "--edge-factor", "16", "--seed", str(args.seed),
               "--weights", "1:100", "-o", path]
        print("+ " + shlex.join(cmd), file=log, flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            report.failures.append(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
        else:
            g = undirected_graph(*read_edges(path))
            print(f"rmat {args.rmat_scale}: {g.n} vertices, {g.m} arcs", file=log, flush=True)
            try:
                at = time.perf_counter()
                rmat_rows(args, g, path, report, log, save)
                report.notes.append(f"the rmat rows took {time.perf_counter() - at:.0f} s, checks included")
            except (RuntimeError, OSError, KeyError, ValueError) as err:
                report.failures.append(f"rmat: {err}")

    report.notes.append(f"the whole run took {time.perf_counter() - started:.0f} s")
    print(save([]))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
