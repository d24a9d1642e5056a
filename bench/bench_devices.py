#!/usr/bin/env python3
"""Issue 19's scaling from one GPU to every GPU of the machine: the stats
layout of every source of an R-MAT graph, on every device and on the first
alone, in turn, checked in the same run.

    python3 bench/bench_devices.py --pathctl bin/pathctl --out bench/results/bench-devices.md
    python3 bench/bench_devices.py --pathctl bin/pathctl --variant "" --variant hubseeds=0

Each round runs `pathctl run G --undirected --layout stats -o S -v` with
--devices all, then with --devices 0 (--all, --one), --repeat rounds under
each --variant (a `pathctl run --tune` setting, docs/engine.md; "" is
the default configuration). The time is the pipeline's "pairs in" of
--verbose (the engines' start, the blocks and the writing; the read and
the CSR build excluded), as BENCHMARKS.md's issue-19 rows give it; the
ratio is the median of one device's over the median of every device's.

The graph is `pathctl gen rmat --scale S --edge-factor 16 --seed 1`
(integer weights 1..100), read undirected, or --graph (a Parquet edge
file, read undirected).

With --breakdown, each variant runs once more on each column with
PATHCTL_TRACE=1 (untimed), and a second table says where each device's
time went: from the engine's preparing to its hub rows, the hub rows
(on several devices, the phases' kernels and the rest: the boundaries'
sends and waits), and from the hub rows to its last block's stats.

Checks, in the same run: every stats file of a variant holds the rows of
its first (pyarrow's Table.equals: the devices share the blocks, not the
answers), and the stats of --check sampled sources equal those of scipy's
Dijkstra (bench_cpu.check_stats). A failed run or check exits 1, after
the table. --engine cpu runs both columns on the CPU engine without
--devices: the script's own test, on machines without a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu as bc  # noqa: E402  (stats checks)
import bench_gpu as bg  # noqa: E402  (the graph as pathctl reads it)
import bench_queries as bq  # noqa: E402  (the --verbose summary)


@dataclass
class Variant:
    setting: str
    algorithm: str = ""  # what --verbose said of the first run on every device (their count too)
    every: list[float] = field(default_factory=list)  # seconds on every device
    one: list[float] = field(default_factory=list)  # seconds on the first
    problems: list[str] = field(default_factory=list)

    def ratio(self) -> float | None:
        if not self.every or not self.one:
            return None
        return statistics.median(self.one) / statistics.median(self.every)


def stats_run(args: argparse.Namespace, graph: str, out: str, devices: str, setting: str, log,
              trace: bool = False) -> tuple[str, float]:
    """Runs `pathctl run G --undirected --layout stats -o out -v` on the
    devices under the --tune setting (with PATHCTL_TRACE=1 where trace):
    its stderr and wall seconds."""
    cmd = [args.pathctl, "run", graph, "--undirected", "--layout", "stats", "-o", out, "-v", "--engine", args.engine]
    if args.engine == "gpu":
        cmd += ["--devices", devices]
    if setting:
        cmd += ["--tune", setting]
    env = dict(os.environ)
    if trace:
        env["PATHCTL_TRACE"] = "1"
    print(f"+ {'PATHCTL_TRACE=1 ' if trace else ''}" + " ".join(cmd), file=log, flush=True)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=args.limit)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return proc.stderr, wall


def run_stats(args: argparse.Namespace, graph: str, out: str, devices: str, setting: str, log) -> bq.Run:
    """One stats run of every source: its pipeline seconds and algorithm."""
    stderr, wall = stats_run(args, graph, out, devices, setting, log)
    run = bq.parse_verbose(stderr, wall)
    if run.pipeline is None:
        raise RuntimeError(f"no 'pairs in' summary in --verbose: {stderr.strip()[-400:]}")
    return run


@dataclass
class Breakdown:
    """One device's share of a traced run, in milliseconds (None: its
    trace has no such step)."""

    device: int
    to_hubs: float | None = None  # from the engine's preparing to its hub rows
    hubs: float | None = None  # the hub rows, asked to ready
    kernels: float | None = None  # of which the phases' kernels (several devices)
    phases: int = 0
    after: float | None = None  # from the hub rows ready to its last stats done


TRACE_LINE = re.compile(r"^pathctl trace\s+([0-9.]+) ms (gpu (\d+)|pipeline): (.*)$")


def parse_trace(text: str) -> list[Breakdown]:
    """Each device's Breakdown from a PATHCTL_TRACE=1 run's stderr."""
    start = None
    events: dict[int, list[tuple[float, str]]] = {}
    for line in text.splitlines():
        m = TRACE_LINE.match(line.strip())
        if not m:
            continue
        t, what = float(m.group(1)), m.group(4)
        if m.group(3) is None:
            if what == "preparing the engine" and start is None:
                start = t
            continue
        events.setdefault(int(m.group(3)), []).append((t, what))
    out = []
    for dev in sorted(events):
        b = Breakdown(dev)
        asked = ready = done = None
        began: dict[str, float] = {}
        kernels = 0.0
        for t, what in events[dev]:
            if asked is None and re.fullmatch(r"hub rows: \d+", what):
                asked = t
            elif what == "hub rows ready" and ready is None:
                ready = t
            elif re.fullmatch(r"stats of \d+ sources done", what):
                done = t
            elif m := re.fullmatch(r"hub phase (\d+): \d+ rows", what):
                began[m.group(1)] = t
            elif (m := re.fullmatch(r"hub phase (\d+) computed", what)) and m.group(1) in began:
                kernels += t - began[m.group(1)]
                b.phases += 1
        if start is not None and asked is not None:
            b.to_hubs = asked - start
        if asked is not None and ready is not None:
            b.hubs = ready - asked
            if b.phases:
                b.kernels = kernels
        if ready is not None and done is not None:
            b.after = done - ready
        out.append(b)
    return out


def format_breakdowns(rows: list[tuple[str, str, list[Breakdown]]]) -> str:
    """The --breakdown table: (setting, devices, breakdowns) per traced run."""
    def ms(x: float | None) -> str:
        return "—" if x is None else f"{x:.1f}"

    lines = [
        "| setting | devices | device | to the hub rows (ms) | hub rows (ms) | phases' kernels (ms) | the rest (ms) | after them (ms) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for setting, devices, bds in rows:
        for b in bds:
            rest = b.hubs - b.kernels if b.hubs is not None and b.kernels is not None else None
            kern = ms(b.kernels) + (f" ({b.phases} phases)" if b.kernels is not None else "")
            lines.append(f"| {f'`{setting}`' if setting else 'default'} | {devices} | {b.device} | {ms(b.to_hubs)} | "
                         f"{ms(b.hubs)} | {kern} | {ms(rest)} | {ms(b.after)} |")
    return "\n".join(lines)


def traced(args: argparse.Namespace, graph: str, devices: str, setting: str, log) -> list[Breakdown]:
    """One untimed run with PATHCTL_TRACE=1, as run_stats runs it."""
    stderr, _ = stats_run(args, graph, os.path.join(args.dir, "traced.arrow"), devices, setting, log, trace=True)
    return parse_trace(stderr)


def same_rows(a: str, b: str) -> bool:
    import pyarrow as pa

    with pa.memory_map(a) as fa, pa.memory_map(b) as fb:
        return pa.ipc.open_file(fa).read_all().equals(pa.ipc.open_file(fb).read_all())


def bench_variant(args: argparse.Namespace, graph: str, g: bc.Graph, want: np.ndarray, check: np.ndarray,
                  setting: str, log) -> Variant:
    v = Variant(setting)
    first = None
    for rnd in range(args.repeat):
        for label, devices, times in (("every", args.all, v.every), ("one", args.one, v.one)):
            out = os.path.join(args.dir, f"stats-{label}-{rnd}.arrow")
            try:
                run = run_stats(args, graph, out, devices, setting, log)
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                v.problems.append(f"{label} device(s), round {rnd + 1}: {err}")
                continue
            times.append(run.pipeline)
            if label == "every" and not v.algorithm:
                v.algorithm = run.algorithm
            if first is None:
                first = out
                v.problems += bc.check_stats(g, check, want, out, 0.0)
            elif not same_rows(first, out):
                v.problems.append(f"{label} device(s), round {rnd + 1}: not the rows of the first run")
    return v


def format_table(variants: list[Variant], every: str, one: str) -> str:
    lines = [
        f"| setting | devices {every} (s) | devices {one} (s) | ratio | checks |",
        "|---|---|---|---:|---|",
    ]
    for v in variants:
        ratio = v.ratio()
        lines.append("| {} | {} | {} | {} | {} |".format(
            f"`{v.setting}`" if v.setting else "default",
            ", ".join(f"{x:.3f}" for x in v.every) or "—",
            ", ".join(f"{x:.3f}" for x in v.one) or "—",
            f"{ratio:.2f} ×" if ratio is not None else "—",
            "ok" if not v.problems else f"{len(v.problems)} failed",
        ))
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pathctl", default="bin/pathctl", help="the pathctl binary")
    p.add_argument("--graph", help="a Parquet edge file (read undirected) instead of the R-MAT graph")
    p.add_argument("--scale", type=int, default=18, help="R-MAT scale of the generated graph")
    p.add_argument("--seed", type=int, default=1, help="seed of the graph and of the checked sources")
    p.add_argument("--repeat", type=int, default=3, help="rounds of each variant")
    p.add_argument("--variant", action="append", help='a --tune setting of pathctl run (repeatable; "" the default)')
    p.add_argument("--all", default="all", help="--devices of the first column")
    p.add_argument("--one", default="0", help="--devices of the second column")
    p.add_argument("--check", type=int, default=4, help="sources checked against scipy")
    p.add_argument("--engine", default="gpu", choices=["gpu", "cpu"])
    p.add_argument("--limit", type=float, default=600, help="seconds a run may take")
    p.add_argument("--dir", help="where the graph and outputs go (a new temporary directory)")
    p.add_argument("--out", help="also write the report to this file")
    p.add_argument("--breakdown", action="store_true", help="one traced run per variant and column: where the time goes")
    args = p.parse_args(argv)
    if args.variant is None:
        args.variant = [""]
    if args.repeat < 1 or args.check < 1:
        p.error("--repeat and --check must be at least 1")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    args.dir = args.dir or tempfile.mkdtemp(prefix="pathctl-devices-")
    log = sys.stderr
    graph = args.graph
    if graph is None:
        graph = os.path.join(args.dir, f"rmat{args.scale}.parquet")
        if not os.path.exists(graph):
            subprocess.run([args.pathctl, "gen", "rmat", "--scale", str(args.scale), "--edge-factor", "16",
                            "--seed", str(args.seed), "-o", graph], check=True, stdout=subprocess.DEVNULL)
    from scipy.sparse.csgraph import dijkstra

    g = bg.load_graph(graph, undirected=True)
    rng = np.random.default_rng(args.seed)
    check = np.sort(rng.choice(g.n, size=min(args.check, g.n), replace=False))
    want = dijkstra(g.csr(), directed=True, indices=check)
    variants = [bench_variant(args, graph, g, want, check, setting, log) for setting in args.variant]
    lines = [
        f"# Devices: {os.path.basename(graph)}, stats of every source ({g.n} vertices, {g.m} arcs)",
        "",
        f"Machine: {bq.machine_line(args.pathctl)}; {datetime.date.today()}; engine {args.engine}; "
        f"{args.repeat} rounds, the devices in turn; {len(check)} sources checked against scipy.",
        "",
        format_table(variants, args.all, args.one),
        "",
    ] + [f"- {v.setting or 'default'}, devices {args.all}: {v.algorithm}" for v in variants if v.algorithm]
    problems = [f"{v.setting or 'default'}: {p}" for v in variants for p in v.problems]
    if args.breakdown:
        rows = []
        for v in variants:
            for devices in (args.all, args.one):
                try:
                    rows.append((v.setting, devices, traced(args, graph, devices, v.setting, log)))
                except (RuntimeError, subprocess.TimeoutExpired) as err:
                    problems.append(f"{v.setting or 'default'}: {err}")
        lines += ["", "Where the time went (one traced run each, `PATHCTL_TRACE=1`):", "", format_breakdowns(rows)]
    if problems:
        lines += ["", "Failed:", ""] + [f"- {p}" for p in problems]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
