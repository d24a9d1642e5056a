#!/usr/bin/env python3
"""Betweenness on the GPU engine (``make bench-betweenness-gpu``).

The GPU rows of issue 41, each from ``pathctl gen`` with a fixed seed:

- exact weighted betweenness (every vertex a source) of R-MAT 16 and
  R-MAT 18 (edge factor 16, integer weights 1..100), and R-MAT 16's
  exact edge betweenness (``--layout edge-betweenness``);
- k = 1,024 sampled sources on R-MAT 20;
- a 1000 × 1000 grid (high diameter), from ``--grid-sources`` sampled
  sources, with the exact run's time extrapolated from them (the exact run
  takes about 20 minutes).

Each row times the whole command ``pathctl run G --layout betweenness
--engine gpu -v`` (reading, building, the device, writing) and the device
part of it (the ``betweenness of N sources on the device in`` line), and
checks the engine in the same run: the GPU's unnormalized contribution of
``--check-sources`` sampled sources (``--sources``) against networkx's
``betweenness_centrality_subset`` (``edge_betweenness_centrality_subset``
for the edges) on R-MAT 16, and against the CPU engine
(itself checked against networkx by ``make bench-betweenness`` and the
tests) on the larger graphs, within a relative 1e-9. A failed check exits
1. Times are printed and written as Markdown to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
DEVICE = re.compile(r"betweenness of (\d+) sources on the device in ([0-9.]+)(ms|s)")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pathctl", default=str(REPO / "bin" / "pathctl"))
    p.add_argument("--rows", default="rmat16,rmat16-edges,rmat18,rmat20-k1024,grid1000",
                   help="comma-separated rows: rmat16, rmat16-edges, rmat18, rmat18-edges, rmat20-k1024, grid1000")
    p.add_argument("--grid-sources", type=int, default=4096)
    p.add_argument("--check-sources", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--engine", default="gpu", help="gpu (the rows), or cpu for a check of the harness itself")
    p.add_argument("--shrink", type=int, default=0,
                   help="the rows on graphs 2^SHRINK times smaller (R-MAT scales less SHRINK, the grid's side "
                        "halved SHRINK/2 times), for a quick check of the harness")
    p.add_argument("--work", default=str(REPO / "bench" / "results"))
    p.add_argument("--out", default=None, help="Markdown report (default: WORK/bench-betweenness-gpu.md)")
    return p.parse_args(argv)


def generate(args, row: str) -> Path:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if row.startswith("grid"):
        side = 1000 >> (args.shrink // 2)
        path = work / f"bc-grid{side}.parquet"
        cmd = ["gen", "grid", "--rows", str(side), "--cols", str(side)]
    else:
        scale = int(row[4:6]) - args.shrink
        path = work / f"bc-rmat{scale}.parquet"
        cmd = ["gen", "rmat", "--scale", str(scale), "--seed", "3"]
    if not path.exists():
        subprocess.run([args.pathctl, *cmd, "-o", str(path)], check=True, capture_output=True)
    return path


def read_values(path: Path) -> np.ndarray:
    """The betweenness column of a result, in row order (vertex order, or
    CSR order of the edges)."""
    with pa.memory_map(str(path)) as source:
        t = pa.ipc.open_file(source).read_all()
    return t.column("betweenness").to_numpy()


def read_edges(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The src and dst columns of an edge-betweenness result."""
    with pa.memory_map(str(path)) as source:
        t = pa.ipc.open_file(source).read_all()
    return t.column("src").to_numpy(), t.column("dst").to_numpy()


def run(args, graph: Path, extra: list[str], engine: str, out: Path, layout: str) -> tuple[float, float | None]:
    """Runs the betweenness layout; its wall time and device time (the
    wall time on the CPU engine)."""
    cmd = [args.pathctl, "run", str(graph), "--layout", layout, "--engine", engine, "-o", str(out), "-v", *extra]
    wall = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    if r.returncode != 0:
        sys.exit(f"bench_betweenness_gpu: {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    m = DEVICE.search(r.stderr)
    if engine == "gpu" and m is None:
        sys.exit(f"bench_betweenness_gpu: {graph.name}: the run did not compute on the device:\n{r.stderr}")
    device = wall
    if m:
        device = float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
    return wall, device


def check(args, graph: Path, oracle: str, layout: str) -> float:
    """The GPU's contribution of sampled sources against the oracle's; the
    largest relative difference."""
    work = Path(args.work)
    t = pq.read_table(graph)
    ids = np.unique(np.concatenate([t.column("src").to_numpy(), t.column("dst").to_numpy()]))
    rng = np.random.default_rng(args.seed)
    picked = np.sort(rng.choice(len(ids), size=min(args.check_sources, len(ids)), replace=False))
    sources = ["--normalized=false", "--sources", ",".join(str(x) for x in ids[picked])]
    run(args, graph, sources, args.engine, work / "bc-check-gpu.arrow", layout)
    mine = read_values(work / "bc-check-gpu.arrow")
    if oracle == "networkx":
        import networkx as nx

        w = t.column("weight").to_numpy() if "weight" in t.column_names else np.ones(t.num_rows)
        src = np.searchsorted(ids, t.column("src").to_numpy())
        dst = np.searchsorted(ids, t.column("dst").to_numpy())
        G = nx.DiGraph()
        G.add_nodes_from(range(len(ids)))
        for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
            if u != v and (not G.has_edge(u, v) or G[u][v]["weight"] > x):
                G.add_edge(u, v, weight=x)
        everyone = list(range(len(ids)))
        if layout == "edge-betweenness":
            got = nx.edge_betweenness_centrality_subset(G, picked.tolist(), everyone, normalized=False, weight="weight")
            # The result's ids are the input's: back to dense ones, as G's.
            us, vs = (np.searchsorted(ids, c) for c in read_edges(work / "bc-check-gpu.arrow"))
            theirs = np.array([got[(u, v)] for u, v in zip(us.tolist(), vs.tolist())])
        else:
            got = nx.betweenness_centrality_subset(G, picked.tolist(), everyone, normalized=False, weight="weight")
            theirs = np.array([got[v] for v in everyone])
    else:
        run(args, graph, sources, "cpu", work / "bc-check-cpu.arrow", layout)
        theirs = read_values(work / "bc-check-cpu.arrow")
    diff = float(np.max(np.abs(mine - theirs) / np.maximum(1.0, np.abs(theirs))))
    if diff > 1e-9:
        sys.exit(f"bench_betweenness_gpu: {graph.name}: the GPU differs from {oracle} by {diff:.3g} (relative)")
    return diff


def main(argv=None) -> int:
    args = parse_args(argv)
    work = Path(args.work)
    lines = []
    for row in args.rows.split(","):
        graph = generate(args, row)
        extra, label = [], {"rmat16": "R-MAT 16, exact", "rmat16-edges": "R-MAT 16 edges, exact", "rmat18": "R-MAT 18, exact",
                            "rmat18-edges": "R-MAT 18 edges, exact",
                            "rmat20-k1024": "R-MAT 20, k = 1,024", "grid1000": "1000² grid"}[row]
        layout = "edge-betweenness" if row.endswith("-edges") else "betweenness"
        n = len(np.unique(np.concatenate([pq.read_table(graph, columns=[c]).column(0).to_numpy() for c in ("src", "dst")])))
        if row == "rmat20-k1024":
            extra = ["--k", str(min(1024, n)), "--seed", str(args.seed)]
        grid_sources = min(args.grid_sources, n)
        if row == "grid1000":
            extra = ["--k", str(grid_sources), "--seed", str(args.seed)]
            label += f", k = {grid_sources:,}"
        wall, device = run(args, graph, extra, args.engine, work / "bc-gpu.arrow", layout)
        oracle = "networkx" if row.startswith("rmat16") else "cpu engine"
        diff = check(args, graph, oracle, layout)
        text = f"{label}: {wall:.2f} s wall, {device:.2f} s on the device; {args.check_sources} sources " \
               f"against {oracle}: {diff:.1e}"
        if row == "grid1000":
            text += f"; every source extrapolated: {device * n / grid_sources:.0f} s on the device"
        print(text, flush=True)
        lines.append(f"| {label} | {wall:.2f} s | {device:.2f} s | {oracle}, {diff:.1e} |")
    out = Path(args.out) if args.out else work / "bench-betweenness-gpu.md"
    shrunk = f" (graphs 2^{args.shrink} times smaller)" if args.shrink else ""
    head = [f"Betweenness on the {args.engine.upper()} engine{shrunk}, {datetime.date.today()}, {platform.node()}", "",
            "| row | wall | device | check (relative) |", "|---|---|---|---|"]
    out.write_text("\n".join(head + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
