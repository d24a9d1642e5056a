#!/usr/bin/env python3
"""The benchmark as one command (`make bench`): pathctl's GPU engine (auto and
every seed algorithm) and CPU engine through `pathctl bench --json`, and the
peers on the same graphs in the same run on the same machine: scipy's
Dijkstra on one core and on every core (a fork pool over blocks of sources),
networkx on the graphs below --nx-max-vertices, and NetworKit (APSP, or SPSP
on a sample) where `import networkit` works.

    PATHCTL_BIN=bin/pathctl python3 bench/bench_gpu.py --out bench/results/bench-gpu.md

Graphs: the suite that `pathctl bench` generates (seeded R-MAT 14/16/18/20,
grids 128² and 256², uniform 65,536 × 16, all undirected, integer weights
1..100), saved by it as Parquet in --work so that the peers read the very
same edges, and the real graphs that bench/export_graph_tool.py exported to
--data (said to be "not exported" otherwise).

Correctness, in the same run: `pathctl bench` compares every one of its rows
with the serial oracle on sampled sources and fails on a mismatch; here,
pathctl's auto on each engine, networkx and NetworKit are compared with
scipy's distances on --check sampled sources. Any mismatch exits 1.

Where a peer's all-source run is estimated above --budget seconds, it runs
a sample of sources and the table marks its time extrapolated.

Beside the table, every row goes to a CSV of records (--records, default
the --out file with .csv): graph, n, arcs, run, engine, sources, seconds,
extrapolated, machine, date. bench/plot_scaling.py draws the scaling curve
from such records (on a machine with matplotlib).
"""
import argparse
import csv
import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu as bc  # noqa: E402  (graph loading, result reading, scipy pool)

BIN = os.environ.get("PATHCTL_BIN", "bin/pathctl")
ALGOS = ["auto", "dijkstra", "delta", "edge", "bfs", "bfs-level", "bellman-ford"]
SUITE = ["rmat14", "rmat16", "rmat18", "rmat20", "grid128", "grid256", "uniform65536d16"]
REAL = ["email-Enron", "cond-mat-2005", "pgp-strong-2009"]
# Graphs too large to time every algorithm on: GPU auto (and the CPU row)
# only, unless --algos names others explicitly.
AUTO_ONLY = {"rmat18", "rmat20"}
# A sample size above every graph's vertex count: pathctl bench then runs
# every source (its --sample runs every source when not below n).
EVERY_SOURCE = 1 << 30


# --------------------------------------------------------------------------
# Rows and the table


@dataclass
class Row:
    graph: str
    n: int
    arcs: int
    run: str
    sources: int  # sources timed
    seconds: float  # for every source (extrapolated when sources < n)
    extrapolated: bool = False
    note: str = ""

    @property
    def pairs_per_second(self) -> float:
        return self.n * self.n / self.seconds if self.seconds > 0 else float("inf")

    @property
    def relaxations_per_second(self) -> float:
        return self.arcs * self.n / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class Report:
    machine: dict = field(default_factory=dict)
    bandwidth: float | None = None  # device-to-host bytes/s
    floors: dict = field(default_factory=dict)  # graph -> seconds
    rows: list = field(default_factory=list)
    disk: dict | None = None
    notes: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    no_networkx: list = field(default_factory=list)  # graphs too large for networkx
    floats: list = field(default_factory=list)  # FloatRow: one graph's weights as int, float32, float64
    floats_graph: str = ""
    wall: list = field(default_factory=list)  # WallRun: `pathctl run` of one graph, start to exit
    wall_command: str = ""


@dataclass
class FloatRow:
    """One row of the float section: the same graph with other weights."""
    weights: str  # "int 1..100", "float32 0.1..10", "float64 0.1..10"
    distances: str  # the distance type the run computed
    seconds: float
    checked: int  # sources that matched the serial oracle
    extrapolated: bool = False


@dataclass
class WallRun:
    """One timed `pathctl run`: the process from its start to its exit, and
    what its --verbose lines say (wall time to the output closed; the
    pipeline's own time)."""
    process: float
    to_closed: float | None
    pipeline: float | None


def extrapolate(measured: float, done: int, total: int) -> tuple[float, bool]:
    """Seconds for total sources from measured seconds for done of them, and
    whether that is an extrapolation."""
    if done >= total:
        return measured, False
    return measured * total / max(done, 1), True


def floor_seconds(n: int, dist_bytes: int, bandwidth: float | None) -> float | None:
    """The physical floor of an all-pairs run that brings every distance to
    the host: n² × distance bytes over the device-to-host bandwidth."""
    if not bandwidth:
        return None
    return n * n * dist_bytes / bandwidth


DIST_BYTES = {"int32": 4, "float32": 4, "int64": 8, "float64": 8}


def rows_from_pathctl(doc: dict) -> list[Row]:
    """The rows of a `pathctl bench --json` report."""
    rows = []
    for r in doc["rows"]:
        note = f"extrapolated from {r['sources']} sources" if r["extrapolated"] else "all sources"
        if r.get("chosen") and r["chosen"] != r["algorithm"]:
            note += "; " + r["chosen"]
        note += f"; {r['checked_sources']} sources match the serial oracle"
        if r.get("layout", "stats") != "stats":
            note += f"; {r['layout']} layout"
        rows.append(Row(r["graph"], r["n"], r["arcs"], f"pathctl {r['engine']} {r['algorithm']}",
                        r["sources"], r["seconds"], r["extrapolated"], note))
    return rows


def scipy_all_cores_row(rows: list[Row], graph: str) -> Row | None:
    for r in rows:
        if r.graph == graph and r.run.startswith("scipy") and not r.run.endswith("(1 core)"):
            return r
    return None


def human_rate(x: float) -> str:
    return f"{x:.3g}"


def format_table(report: Report) -> str:
    """The markdown report: machine, bandwidth, one table, disk, notes."""
    m = report.machine
    gpu = m.get("gpu") or "no GPU" + (f" ({m['gpu_unavailable']})" if m.get("gpu_unavailable") else "")
    if m.get("gpu"):
        if m.get("driver"):
            gpu += f", driver {m['driver']}"
        if m.get("cuda_driver"):
            gpu += f" (CUDA {m['cuda_driver']})"
    cpu = f"{m.get('cpus', os.cpu_count())} CPUs" + (f" ({m['cpu_model']})" if m.get("cpu_model") else "")
    lines = [f"Machine: {gpu}; {cpu}. Date: {m.get('date', time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))}. "
             f"pathctl {m.get('pathctl', '?')}.", ""]
    if report.bandwidth:
        lines += [f"Device-to-host bandwidth (pinned memory, measured in this run): {report.bandwidth / 1e9:.1f} GB/s. "
                  "floor = n² × distance bytes / that bandwidth: copying the whole distance matrix to the host.", ""]
    lines += [
        "| graph | n | arcs | run | sources | seconds | pairs/s | relaxations/s | vs scipy all cores | floor (s) | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report.rows:
        ref = scipy_all_cores_row(report.rows, r.graph)
        vs = f"{ref.seconds / r.seconds:.2f}×" if ref and r.seconds > 0 else "—"
        floor = report.floors.get(r.graph)
        floor_text = f"{floor:.3g}" if floor is not None else "—"
        lines.append(f"| {r.graph} | {r.n} | {r.arcs} | {r.run} | {r.sources} | {r.seconds:.3g} | "
                     f"{human_rate(r.pairs_per_second)} | {human_rate(r.relaxations_per_second)} | {vs} | {floor_text} | {r.note} |")
    lines += ["", "seconds: for every source, extrapolated (seconds × n / sources) where a sample ran; pathctl's rows "
              "build the stats layout (distances reduced to per-source centralities) and discard it; "
              "pairs/s = n² / seconds; relaxations/s = arcs × n / seconds (every arc once per source); "
              "vs scipy all cores = scipy's all-core seconds / the row's seconds."]
    d = report.disk
    if d:
        verdict = "meets" if d["ratio"] >= 0.8 else "misses"
        lines += ["", f"Disk: the {d['graph']} matrix ({d['engine']}, {d['algorithm']}, every source) written to an "
                  f"uncompressed Arrow IPC file with fsync: {d['bytes']} bytes in {d['arrow_seconds']:.2f} s "
                  f"({d['arrow_bytes_per_second'] / 1e6:.0f} MB/s, compute included; {d['compute_seconds']:.2f} s without the file); "
                  f"a plain sequential write of the same bytes (writeback started every 32 MiB, as the result file's) with fsync in the same directory: {d['plain_seconds']:.2f} s "
                  f"({d['plain_bytes_per_second'] / 1e6:.0f} MB/s). Ratio **{100 * d['ratio']:.0f} %**: "
                  f"{verdict} the target of ≥ 80 %."
                  + (f" Best of {len(d['arrow_runs'])} alternating rounds; Arrow file "
                     f"{', '.join(f'{x:.2f}' for x in d['arrow_runs'])} s, plain write "
                     f"{', '.join(f'{x:.2f}' for x in d['plain_runs'])} s." if d.get("arrow_runs") else "")]
    lines += format_floats(report) + format_wall(report)
    if report.notes:
        lines += ["", "Notes:"] + [f"- {x}" for x in report.notes]
    if report.failures:
        lines += ["", "FAILURES:"] + [f"- {x}" for x in report.failures]
    return "\n".join(lines) + "\n"


def format_floats(report: Report) -> list[str]:
    """The float section: each weight type's seconds and its ratio to the
    integer weights' on the same graph."""
    if not report.floats:
        return []
    base = next((f.seconds for f in report.floats if f.weights.startswith("int")), None)
    lines = ["", f"Float weights: {report.floats_graph}, every source but where marked, stats layout, "
             "pathctl's auto; each row checked against the serial oracle.", "",
             "| weights | distances | seconds | × int | checked sources |", "|---|---|---|---|---|"]
    for f in report.floats:
        ratio = f"{f.seconds / base:.2f} ×" if base else "—"
        secs = f"{f.seconds:.3g}" + (" (extrapolated)" if f.extrapolated else "")
        lines.append(f"| {f.weights} | {f.distances} | {secs} | {ratio} | {f.checked} |")
    return lines


def format_wall(report: Report) -> list[str]:
    """The wall-time section: every timed run of one `pathctl run`."""
    if not report.wall:
        return []
    def s(x):
        return "—" if x is None else f"{x:.3f}"
    lines = ["", f"Wall time of `{report.wall_command}`, run after run:", "",
             "| run | process start to exit (s) | --verbose wall time, to the output closed (s) | pairs in (s) |",
             "|---|---|---|---|"]
    for i, w in enumerate(report.wall, 1):
        lines.append(f"| {i} | {s(w.process)} | {s(w.to_closed)} | {s(w.pipeline)} |")
    return lines


# --------------------------------------------------------------------------
# Records: one machine-readable line per row, for bench/plot_scaling.py


RECORD_FIELDS = ["graph", "n", "arcs", "run", "engine", "sources", "seconds", "extrapolated", "machine", "date"]


def engine_of(run: str) -> str:
    """The engine of a row's run label, as the records name it:
    pathctl-gpu, pathctl-cpu, scipy-all-cores, scipy-1-core, networkx,
    networkit (else the label itself)."""
    if run.startswith("pathctl gpu "):
        return "pathctl-gpu"
    if run.startswith("pathctl cpu "):
        return "pathctl-cpu"
    if run.startswith("scipy"):
        return "scipy-1-core" if run.endswith("(1 core)") else "scipy-all-cores"
    for peer in ("networkx", "networkit"):
        if run.startswith(peer):
            return peer
    return run


def machine_label(machine: dict) -> str:
    """The machine of a report in a few words: its GPU (or none), its CPUs."""
    gpu = machine.get("gpu") or "no GPU"
    return f"{gpu}; {machine.get('cpus', os.cpu_count())} CPUs"


def write_records(path: str, report: Report) -> None:
    """Writes report's rows to path as CSV, one record per row (RECORD_FIELDS)."""
    machine = machine_label(report.machine)
    date = report.machine.get("date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RECORD_FIELDS)
        w.writeheader()
        for r in report.rows:
            w.writerow({"graph": r.graph, "n": r.n, "arcs": r.arcs, "run": r.run, "engine": engine_of(r.run),
                        "sources": r.sources, "seconds": repr(float(r.seconds)),
                        "extrapolated": "true" if r.extrapolated else "false", "machine": machine, "date": date})


# --------------------------------------------------------------------------
# Graphs


def real_graph(data_dir: str, name: str) -> tuple[str, bool] | None:
    """The edge file (Parquet, or CSV) and undirected flag of an exported
    real graph, or None when it was not exported. Both come from the sidecar
    NAME.json that export_graph_tool.py writes."""
    sidecar = os.path.join(data_dir, name + ".json")
    if not os.path.exists(sidecar):
        return None
    with open(sidecar) as f:
        meta = json.load(f)
    path = os.path.join(data_dir, meta.get("file", name + ".parquet"))
    if not os.path.exists(path):
        return None
    return path, bool(meta["undirected"])


def bench_command(name: str, args: argparse.Namespace, path: str | None = None, undirected: bool = True) -> list[str]:
    """The `pathctl bench --json` command of one graph."""
    algos = args.algos
    if name in AUTO_ONLY and not args.algos_given:
        algos = "auto"
    cmd = [args.pathctl, "bench", "--json", "--graphs", path or name, "--algos", algos,
           "--cpu-sample", str(args.cpu_sample), "--check", str(args.check), "--seed", str(args.seed),
           "--save-graphs", args.work, "--disk-graph", name if name == args.disk_graph else "none",
           "--disk-dir", args.work]
    if path and undirected:
        cmd.append("--undirected")
    if args.all_sources:
        cmd += ["--sample", str(EVERY_SOURCE)]
    elif args.gpu_sample and name not in AUTO_ONLY:
        cmd += ["--sample", str(args.gpu_sample)]
    if args.engine:
        cmd += ["--engine", args.engine]
    return cmd


def load_graph(path: str, undirected: bool) -> bc.Graph:
    """The graph pathctl builds from the file: both directions when
    undirected, ids that occur in ascending order, no self-loops, the lightest
    of duplicate arcs."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    t = pcsv.read_csv(path) if path.endswith(".csv") else pq.read_table(path)
    src, dst = t.column("src").to_numpy(), t.column("dst").to_numpy()
    w = t.column("weight").to_numpy() if "weight" in t.column_names else None
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = None if w is None else np.concatenate([w, w])
    return bc.canonical_graph(src, dst, w)


# --------------------------------------------------------------------------
# Peers


def sample_size(per_source: float, seconds: float, least: int, most: int) -> int:
    """How many sources fit in seconds at per_source seconds each, within
    [least, most] (least wins where the two cross)."""
    fit = int(seconds / per_source) if per_source > 0 else most
    return max(min(least, most), min(most, fit))


def networkit_reason() -> str | None:
    """None when NetworKit imports, else why not."""
    try:
        import networkit  # noqa: F401
    except Exception as err:  # ImportError, or a wheel that fails to load
        return f"networkit not importable ({type(err).__name__}: {err}); `pip install networkit` adds it"
    return None


def networkit_graph(g: bc.Graph):
    import networkit as nk

    return nk.GraphFromCoo((g.weight, (g.src.astype(np.uint64), g.dst.astype(np.uint64))),
                           n=g.n, weighted=True, directed=True)


def networkit_distances(G, sources: np.ndarray) -> np.ndarray:
    import networkit as nk

    spsp = nk.distance.SPSP(G, [int(s) for s in sources])
    spsp.run()
    d = np.array(spsp.getDistances(), dtype=np.float64)
    d[d >= np.finfo(np.float64).max] = np.inf
    return d


def networkx_distances(g: bc.Graph, source: int) -> np.ndarray:
    import networkx as nx

    G = nx.DiGraph()
    G.add_nodes_from(range(g.n))
    G.add_weighted_edges_from(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))
    d = np.full(g.n, np.inf)
    for v, x in nx.single_source_dijkstra_path_length(G, int(source)).items():
        d[v] = x
    return d


def pathctl_distances(args, path: str, undirected: bool, engine: str, ids: np.ndarray, check: np.ndarray) -> np.ndarray:
    """pathctl run --layout matrix of the check sources on engine, as float64."""
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        sources = os.path.join(tmp, "sources.txt")
        with open(sources, "w") as f:
            f.write("\n".join(str(int(ids[s])) for s in check) + "\n")
        out = os.path.join(tmp, "check.arrow")
        cmd = [args.pathctl, "run", path, "--engine", engine, "--algo", "auto", "--layout", "matrix",
               "--sources-file", sources, "-o", out, "--quiet"]
        if undirected:
            cmd.append("--undirected")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
        _, vertices, dist = bc.read_matrix(out, ids[check])
        if not np.array_equal(np.asarray(vertices, dtype=np.int64), ids):
            raise RuntimeError(f"{out}: vertex order differs from the input's ascending ids")
        return dist


def check_rows(label: str, want: np.ndarray, got: np.ndarray, ids: np.ndarray, check: np.ndarray, rtol: float) -> list[str]:
    problems = []
    for k, s in enumerate(check):
        for p in bc.compare_distances(want[k], got[k], rtol):
            problems.append(f"{label}, source {ids[s]}: {p}")
    return problems


def peers(name: str, g: bc.Graph, path: str, undirected: bool, engines: list[str], args, report: Report, log) -> None:
    """Times the peers on g, checks pathctl, networkx and NetworKit against
    scipy on the check sources, and appends rows, notes and failures."""
    from scipy.sparse.csgraph import dijkstra

    n, arcs, cores = g.n, g.m, os.cpu_count() or 1
    csr = g.csr()
    rng = np.random.default_rng(args.seed)
    check = bc.sample_sources(n, args.check, rng)
    sample = bc.sample_sources(n, args.sample, rng)
    rtol = 0.0 if g.integer_weights else 1e-6
    want = dijkstra(csr, directed=True, indices=check)

    for engine in engines:
        got = pathctl_distances(args, path, undirected, engine, g.ids, check)
        bad = check_rows(f"pathctl {engine} auto vs scipy", want, got, g.ids, check, rtol)
        report.failures += bad
        print(f"  pathctl {engine} auto vs scipy on {len(check)} sources: {'ok' if not bad else 'MISMATCH'}", file=log, flush=True)
    if not args.peers:
        return

    # scipy on one core: a probe sizes the sample to --peer-seconds.
    probe = sample[: min(len(sample), 4)]
    per_source = bc.scipy_one_core(csr, probe) / max(1, len(probe))
    k = sample_size(per_source, args.peer_seconds, len(probe), len(sample))
    one = bc.scipy_one_core(csr, sample[:k])
    secs, extrap = extrapolate(one, k, n)
    report.rows.append(Row(name, n, arcs, "scipy dijkstra (1 core)", k, secs, extrap,
                           "extrapolated from a sample" if extrap else "all sources"))
    print(f"  scipy 1 core: {secs:.2f} s", file=log, flush=True)

    # scipy on every core: all sources where the estimate fits --budget.
    if secs / cores <= args.budget:
        sources = np.arange(n)
    else:
        sources = bc.sample_sources(n, sample_size(secs / n / cores, args.peer_seconds, 4 * cores, n), rng)
    block = max(1, min(256, len(sources) // (4 * cores)))
    elapsed, _, _ = bc.scipy_pool(csr, sources, cores, block)
    secs, extrap = extrapolate(elapsed, len(sources), n)
    report.rows.append(Row(name, n, arcs, f"scipy dijkstra ({cores} cores)", len(sources), secs, extrap,
                           "extrapolated from a sample" if extrap else "all sources"))
    print(f"  scipy {cores} cores: {secs:.2f} s", file=log, flush=True)

    if n < args.nx_max_vertices:
        nx_sources = sample[: args.nx_sources]
        secs, extrap = extrapolate(bc.networkx_time(g, nx_sources), len(nx_sources), n)
        report.rows.append(Row(name, n, arcs, "networkx dijkstra (1 core)", len(nx_sources), secs, extrap,
                               "extrapolated from a sample" if extrap else "all sources"))
        got = np.array([networkx_distances(g, s) for s in check[:1]])
        report.failures += check_rows("networkx vs scipy", want[:1], got, g.ids, check[:1], rtol)
        print(f"  networkx: {secs:.1f} s", file=log, flush=True)
    else:
        report.no_networkx.append(name)

    reason = networkit_reason()
    if reason:
        if reason not in report.notes:
            report.notes.append(reason)
        return
    import networkit as nk

    G = networkit_graph(g)
    report.failures += check_rows("networkit vs scipy", want, networkit_distances(G, check), g.ids, check, rtol)
    threads = nk.getMaxNumberOfThreads()
    probe = sample[: min(len(sample), 4 * threads)]
    start = time.perf_counter()
    networkit_distances(G, probe)
    per_source = (time.perf_counter() - start) / max(1, len(probe))
    if per_source * n <= args.budget and n * n * 8 <= args.nk_apsp_bytes:
        apsp = nk.distance.APSP(G)
        start = time.perf_counter()
        apsp.run()
        secs = time.perf_counter() - start
        report.rows.append(Row(name, n, arcs, f"networkit APSP ({threads} threads)", n, secs, False, "all sources"))
    else:
        k = sample_size(per_source, args.peer_seconds, len(probe), len(sample))
        start = time.perf_counter()
        networkit_distances(G, sample[:k])
        secs, extrap = extrapolate(time.perf_counter() - start, k, n)
        report.rows.append(Row(name, n, arcs, f"networkit SPSP ({threads} threads)", k, secs, extrap,
                               "extrapolated from a sample (APSP over --budget or --nk-apsp-bytes)" if extrap else "all sources"))
    print(f"  networkit: {secs:.2f} s", file=log, flush=True)


# --------------------------------------------------------------------------
# Float weights and the wall time of one run


def rmat_files(args, scale: int, log) -> dict[str, str]:
    """R-MAT scale (edge factor 16, the run's seed) in args.work with integer
    weights 1..100 ("int"), float64 weights 0.1..10 ("f64") and those cast
    to float32 ("f32"): the same edges each time, made once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = os.path.join(args.work, f"rmat{scale}-seed{args.seed}")
    files = {"int": base + "-int.parquet", "f64": base + "-f64.parquet", "f32": base + "-f32.parquet"}
    gen = [args.pathctl, "gen", "rmat", "--scale", str(scale), "--edge-factor", "16", "--seed", str(args.seed)]
    for key, extra in (("int", []), ("f64", ["--float-weights", "--weights", "0.1:10"])):
        if not os.path.exists(files[key]):
            cmd = gen + extra + ["-o", files[key]]
            print("+ " + shlex.join(cmd), file=log, flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(files["f32"]):
        t = pq.read_table(files["f64"])
        i = t.column_names.index("weight")
        pq.write_table(t.set_column(i, "weight", t.column("weight").cast(pa.float32())), files["f32"])
    return files


def pathctl_bench_json(args, files: list[str], log, *extra: str) -> dict:
    """`pathctl bench --json` of edge files read undirected, every source,
    pathctl's auto on args.engine (the GPU unless given)."""
    engine = args.engine or "gpu"
    # auto on the engine's rows: --algos names the GPU rows', --cpu-algos
    # the CPU rows' (bench refuses --algos where no GPU row runs).
    algos = ["--cpu-algos", "auto"] if engine == "cpu" else ["--algos", "auto"]
    cmd = [args.pathctl, "bench", "--json", "--graphs", ",".join(files), "--undirected", *algos,
           "--engine", engine, "--check", str(args.check), "--seed", str(args.seed),
           "--sample", str(EVERY_SOURCE), "--cpu-sample", str(EVERY_SOURCE), "--disk-graph", "none", *extra]
    return run_bench_json(cmd, log)


def run_bench_json(cmd: list[str], log) -> dict:
    """Runs a `pathctl bench --json` command (its progress on our stderr)
    and returns its report; raises where it fails."""
    print("+ " + shlex.join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pathctl bench exited {proc.returncode} (see its message above)")
    return json.loads(proc.stdout)


def float_rows(doc: dict, labels: dict[str, str]) -> list[FloatRow]:
    """The rows of a pathctl bench report of the float files, labelled by
    graph name (labels: name -> weights)."""
    types = {g["name"]: g["dist_type"] for g in doc["graphs"]}
    return [FloatRow(labels[r["graph"]], types[r["graph"]], r["seconds"], r["checked_sources"], r["extrapolated"])
            for r in doc["rows"] if r["graph"] in labels]


def bench_floats(args, report: Report, log) -> None:
    """The float section: R-MAT --floats with integer, float32 and float64
    weights, then the float32 weights as float64 distances."""
    files = rmat_files(args, args.floats, log)
    stem = {k: os.path.splitext(os.path.basename(v))[0] for k, v in files.items()}
    labels = {stem["int"]: "int 1..100", stem["f32"]: "float32 0.1..10", stem["f64"]: "float64 0.1..10"}
    report.floats_graph = f"R-MAT {args.floats} (edge factor 16, seed {args.seed}, read undirected)"
    doc = pathctl_bench_json(args, [files["int"], files["f32"], files["f64"]], log)
    report.floats += float_rows(doc, labels)
    doc = pathctl_bench_json(args, [files["f32"]], log, "--dist-type", "float64")
    report.floats += [dataclasses.replace(f, distances=f.distances + " (--dist-type float64)") for f in float_rows(doc, labels)]


def go_seconds(text: str) -> float:
    """Seconds of a Go duration as time.Duration prints it (1.5s, 391ms,
    2m3.5s, 800µs)."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(h|ms|m|s|us|µs|ns)", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(a) * units[b] for a, b in parts)


def wall_of(stderr: str) -> tuple[float | None, float | None]:
    """The --verbose wall time (to the output closed) and the pipeline's
    "pairs in" time of one `pathctl run -v`, None where absent."""
    wall = re.search(r"wall time (\S+) =", stderr)
    pairs = re.search(r"pairs in (\S+) \(", stderr)
    return (go_seconds(wall.group(1)) if wall else None, go_seconds(pairs.group(1)) if pairs else None)


def bench_wall(args, report: Report, log) -> None:
    """The wall-time section: `pathctl run` of R-MAT --wall's stats,
    --wall-repeat times, from the process's start to its exit."""
    path = rmat_files(args, args.wall, log)["int"]
    out = os.path.join(args.work, "wall-stats.arrow")
    cmd = [args.pathctl, "run", path, "--undirected", "--layout", "stats", "-o", out, "-v"]
    if args.engine:
        cmd += ["--engine", args.engine]
    report.wall_command = shlex.join(["pathctl", "run", os.path.basename(path), "--undirected", "--layout", "stats",
                                      "-o", "s.arrow", "-v"] + (["--engine", args.engine] if args.engine else []))
    for _ in range(args.wall_repeat):  # -v's lines, where the time went, go to the log
        took, stderr = bc.run_timed_stderr(cmd, log)
        report.wall.append(WallRun(took, *wall_of(stderr)))


# --------------------------------------------------------------------------
# Main


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=",".join(SUITE + REAL), help="suite names and exported real graphs")
    ap.add_argument("--algos", default=None, help=f"GPU algorithms (default {','.join(ALGOS)}; rmat18, rmat20: auto)")
    ap.add_argument("--engine", default="", help="pathctl bench --engine (default: its auto: GPU rows where usable, and CPU rows)")
    ap.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True,
                    help="time scipy, networkx and NetworKit too (--no-peers: pathctl rows and the checks only)")
    ap.add_argument("--sample", type=int, default=512, help="sources of the peers' samples")
    ap.add_argument("--cpu-sample", type=int, default=1024, help="sources of pathctl's CPU rows (extrapolated)")
    ap.add_argument("--gpu-sample", type=int, default=0, help="sources of pathctl's GPU rows (0: every source; rmat18, rmat20: pathctl's default)")
    ap.add_argument("--all-sources", action="store_true", help="every source on the GPU rows of every graph, rmat18 and rmat20 too")
    ap.add_argument("--floats", type=int, default=0, metavar="SCALE",
                    help="also time R-MAT SCALE with integer, float32 and float64 weights, and the float32 weights as float64 distances (0: not)")
    ap.add_argument("--wall", type=int, default=0, metavar="SCALE",
                    help="also time `pathctl run` of R-MAT SCALE's stats from the process's start to its exit (0: not)")
    ap.add_argument("--wall-repeat", type=int, default=5, help="runs of --wall")
    ap.add_argument("--check", type=int, default=4, help="sources compared with the oracles")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds a peer may take for every source before it is sampled")
    ap.add_argument("--peer-seconds", type=float, default=30.0, help="seconds a sampled peer measurement aims at")
    ap.add_argument("--nx-max-vertices", type=int, default=20000)
    ap.add_argument("--nx-sources", type=int, default=8)
    ap.add_argument("--nk-apsp-bytes", type=float, default=16e9, help="largest n² × 8 bytes NetworKit's APSP may hold")
    ap.add_argument("--disk-graph", default="rmat16", help="graph of the disk measurement (none to skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pathctl", default=BIN)
    ap.add_argument("--work", default="bench/results")
    ap.add_argument("--data", default="bench/results/data", help="where export_graph_tool.py wrote the real graphs")
    ap.add_argument("--out", default="bench/results/bench-gpu.md")
    ap.add_argument("--records", default=None, help="CSV of every row for bench/plot_scaling.py (default: --out with .csv)")
    args = ap.parse_args(argv)
    if args.records is None:
        args.records = os.path.splitext(args.out)[0] + ".csv"
    args.algos_given = args.algos is not None
    if args.algos is None:
        args.algos = ",".join(ALGOS)
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    log = sys.stderr
    report = Report()
    for name in [x for x in args.graphs.split(",") if x]:
        path, undirected = None, True
        if name not in SUITE:
            found = real_graph(args.data, name)
            if found is None:
                report.notes.append(f"{name}: not exported (python3 bench/export_graph_tool.py --out {args.data}, "
                                    "with Debian's python3-graph-tool)")
                print(f"{name}: not exported", file=log, flush=True)
                continue
            path, undirected = found
        try:
            doc = run_bench_json(bench_command(name, args, path, undirected), log)
        except RuntimeError as err:
            report.failures.append(f"{name}: {err}")
            break
        if not report.machine:
            report.machine = doc["machine"]
        if doc.get("d2h_bytes_per_second") and not report.bandwidth:
            report.bandwidth = doc["d2h_bytes_per_second"]
        if doc.get("disk"):
            report.disk = doc["disk"]
        ginfo = doc["graphs"][0]
        gname = ginfo["name"]
        report.floors[gname] = floor_seconds(ginfo["n"], DIST_BYTES[ginfo["dist_type"]], report.bandwidth)
        report.rows += rows_from_pathctl(doc)
        graph_path = ginfo.get("path") or path
        g = load_graph(graph_path, ginfo["undirected"])
        if g.n != ginfo["n"] or g.m != ginfo["arcs"]:
            report.failures.append(f"{gname}: scipy's graph has {g.n} vertices and {g.m} arcs, pathctl's {ginfo['n']} and {ginfo['arcs']}")
            break
        engines = sorted({r["engine"] for r in doc["rows"]})
        try:
            peers(gname, g, graph_path, ginfo["undirected"], engines, args, report, log)
        except RuntimeError as err:
            report.failures.append(f"{gname}: {err}")
            break
    for scale, section in ((args.floats, bench_floats), (args.wall, bench_wall)):
        if scale and not report.failures:
            try:
                section(args, report, log)
            except (RuntimeError, subprocess.CalledProcessError) as err:
                report.failures.append(str(err))
    if report.no_networkx:
        report.notes.append(f"networkx not timed on {', '.join(report.no_networkx)}: {args.nx_max_vertices} vertices or more")
    text = format_table(report)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    write_records(args.records, report)
    print(text)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
