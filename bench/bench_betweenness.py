#!/usr/bin/env python3
"""Exact weighted betweenness on the CPU: pathctl against NetworKit
(``make bench-betweenness``).

The row of issue 41: R-MAT 14 (edge factor 16, integer weights 1..100),
every vertex a source, on the same machine and thread count (2 by
default). In one run the harness:

1. generates the graph with ``pathctl gen rmat`` and writes the graph that
   pathctl builds from it (ids in ascending order, self-loops dropped,
   duplicate arcs at their smallest weight) as dense arrays, for NetworKit;
2. times, in ``--rounds`` interleaved rounds, ``pathctl run --layout
   betweenness --normalized=false --threads T`` (the whole command: reading
   the Parquet file, building the graph, computing, writing) and
   NetworKit's ``Betweenness(G, normalized=False).run()`` after
   ``setNumberOfThreads(T)`` (the computation alone), each with its wall
   time and the CPU time of its process;
3. checks that the two agree on every vertex within a relative 1e-9, and
   fails (exit 1) where they do not;
   then runs networkx (``betweenness_centrality_subset``, weighted, one
   thread) from ``--networkx-sources`` sources sampled with the seed,
   checks it against ``pathctl run --sources`` of the same sources, and
   extrapolates its time to every source (networkx would take hours);
4. prints medians with the spread (lowest and highest of the rounds) and
   the ratio of the medians, and writes them as Markdown to ``--out``.

NetworKit is optional: it runs in ``--networkit-python`` (by default the
ignored venv ``.peers`` of the repository, made by ``python3 -m venv .peers
&& .peers/bin/pip install networkit``), and where it does not import the
harness says so in one line and times pathctl alone. On a machine shared
with other work, wall times vary from round to round; CPU times (user +
system of the process and its threads) vary less, and both are given.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]

# Runs in NetworKit's interpreter: the graph from the .npz, Betweenness on
# the given threads, the scores to a .npy and the times as JSON on stdout.
NETWORKIT_WORKER = r"""
import json, sys, time
import numpy as np
import networkit as nk
g = np.load(sys.argv[1])
G = nk.GraphFromCoo((g["w"].astype(np.float64), (g["src"].astype(np.uint64), g["dst"].astype(np.uint64))),
                    n=int(g["n"]), weighted=True, directed=True)
nk.setNumberOfThreads(int(sys.argv[2]))
wall, cpu = time.perf_counter(), time.process_time()
b = nk.centrality.Betweenness(G, normalized=False)
b.run()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
np.save(sys.argv[3], np.asarray(b.scores(), dtype=np.float64))
print(json.dumps({"wall": wall, "cpu": cpu, "version": nk.__version__, "arcs": G.numberOfEdges()}))
"""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pathctl", default=str(REPO / "bin" / "pathctl"))
    p.add_argument("--scale", type=int, default=14)
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--weights", default="1:100", help="integer weights MIN:MAX (pathctl gen --weights)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--networkit-python", default=None,
                   help="a Python that imports networkit (default: .peers/bin/python, else this one)")
    p.add_argument("--networkx-sources", type=int, default=16,
                   help="sources networkx runs (sampled; its time extrapolated to every source; 0: no networkx row)")
    p.add_argument("--work", default=str(REPO / "bench" / "results"))
    p.add_argument("--out", default=None, help="Markdown report (default: WORK/bench-betweenness.md)")
    return p.parse_args(argv)


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def dense_graph(path: str) -> tuple[np.ndarray, dict]:
    """The graph pathctl builds from the edge file: vertex ids (ascending)
    and dense arcs without self-loops, duplicates at their smallest weight."""
    t = pq.read_table(path)
    src, dst, w = (t.column(c).to_numpy() for c in ("src", "dst", "weight"))
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    s, d = inv[:len(src)], inv[len(src):]
    keep = s != d
    s, d, w = s[keep], d[keep], w[keep]
    order = np.lexsort((w, d, s))
    s, d, w = s[order], d[order], w[order]
    first = np.ones(len(s), dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    return ids, {"n": len(ids), "src": s[first], "dst": d[first], "w": w[first]}


def time_pathctl(args, graph: str, out: str) -> tuple[float, float, np.ndarray, np.ndarray]:
    cmd = [args.pathctl, "run", graph, "--layout", "betweenness", "--normalized=false",
           "--threads", str(args.threads), "--engine", "cpu", "-o", out, "--quiet"]
    cpu, wall = child_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True)
    wall, cpu = time.perf_counter() - wall, child_cpu() - cpu
    with pa.memory_map(out) as source:
        t = pa.ipc.open_file(source).read_all()
    return wall, cpu, t.column("vertex").to_numpy(), t.column("betweenness").to_numpy()


def time_networkx(args, graph: str, ids: np.ndarray, dense: dict, out: str) -> tuple[float, int, float]:
    """networkx's Brandes from a seeded sample of --networkx-sources
    sources (``betweenness_centrality_subset`` to every vertex, weighted,
    unnormalized: the contribution of those sources), checked against
    ``pathctl run --sources`` of the same sources; its wall time, the
    sources, and the largest relative difference."""
    import networkx as nx

    n = int(dense["n"])
    rng = np.random.default_rng(args.seed)
    picked = np.sort(rng.choice(n, size=min(args.networkx_sources, n), replace=False))
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(zip(dense["src"].tolist(), dense["dst"].tolist(), dense["w"].tolist()))
    wall = time.perf_counter()
    theirs = nx.betweenness_centrality_subset(G, picked.tolist(), list(range(n)), normalized=False, weight="weight")
    wall = time.perf_counter() - wall
    subprocess.run([args.pathctl, "run", graph, "--layout", "betweenness", "--normalized=false", "--engine", "cpu",
                    "--threads", str(args.threads), "--sources", ",".join(str(x) for x in ids[picked]), "-o", out,
                    "--quiet"], check=True)
    with pa.memory_map(out) as source:
        ours = pa.ipc.open_file(source).read_all().column("betweenness").to_numpy()
    want = np.array([theirs[v] for v in range(n)], dtype=np.float64)
    rel = np.abs(ours - want) / np.maximum(np.maximum(np.abs(ours), np.abs(want)), 1.0)
    return wall, len(picked), float(rel.max())


def networkit_reason(python: str) -> str | None:
    proc = subprocess.run([python, "-c", "import networkit"], capture_output=True, text=True)
    if proc.returncode == 0:
        return None
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return f"NetworKit skipped: {python} cannot import networkit ({last})"


def time_networkit(python: str, npz: str, threads: int, out: str) -> tuple[float, float, dict]:
    """Wall and CPU time of Betweenness.run() alone, as the worker measured them."""
    proc = subprocess.run([python, "-c", NETWORKIT_WORKER, npz, str(threads), out],
                          check=True, capture_output=True, text=True)
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return info["wall"], info["cpu"], info


def nx_version() -> str:
    import networkx as nx
    return nx.__version__


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f}–{max(xs):.2f})"


def main(argv=None) -> int:
    args = parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    python = args.networkit_python or (str(REPO / ".peers" / "bin" / "python")
                                       if (REPO / ".peers" / "bin" / "python").exists() else sys.executable)
    name = f"rmat{args.scale}-w{args.weights.replace(':', '-')}"
    graph = str(work / f"{name}.parquet")
    subprocess.run([args.pathctl, "gen", "rmat", "--scale", str(args.scale), "--edge-factor", str(args.edge_factor),
                    "--weights", args.weights, "--seed", str(args.seed), "-o", graph], check=True,
                   capture_output=True)
    ids, dense = dense_graph(graph)
    reason = networkit_reason(python)
    if reason:
        print(reason)
    rows = {"pathctl": {"wall": [], "cpu": []}, "NetworKit": {"wall": [], "cpu": []}}
    version = None
    worst = 0.0
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        npz = os.path.join(tmp, "graph.npz")
        np.savez(npz, **dense)
        for r in range(args.rounds):
            wall, cpu, vertex, ours = time_pathctl(args, graph, os.path.join(tmp, "b.arrow"))
            rows["pathctl"]["wall"].append(wall)
            rows["pathctl"]["cpu"].append(cpu)
            print(f"round {r + 1}: pathctl {wall:.2f} s (cpu {cpu:.2f} s)", flush=True)
            if not np.array_equal(vertex, ids):
                print("FAIL: pathctl's vertex order is not the ids' ascending order")
                return 1
            if reason:
                continue
            scores = os.path.join(tmp, "nk.npy")
            wall, cpu, info = time_networkit(python, npz, args.threads, scores)
            version = info["version"]
            rows["NetworKit"]["wall"].append(wall)
            rows["NetworKit"]["cpu"].append(cpu)
            print(f"round {r + 1}: NetworKit {wall:.2f} s (cpu {cpu:.2f} s)", flush=True)
            theirs = np.load(scores)
            rel = np.abs(ours - theirs) / np.maximum(np.maximum(np.abs(ours), np.abs(theirs)), 1.0)
            worst = max(worst, float(rel.max()))
            if worst > 1e-9:
                v = int(rel.argmax())
                print(f"FAIL: vertex {ids[v]}: pathctl {ours[v]!r}, NetworKit {theirs[v]!r}")
                return 1
        nx_row = None
        if args.networkx_sources > 0:
            nx_wall, nx_k, nx_worst = time_networkx(args, graph, ids, dense, os.path.join(tmp, "sampled.arrow"))
            if nx_worst > 1e-9:
                print(f"FAIL: networkx from {nx_k} sources differs from pathctl's by {nx_worst:.1e}")
                return 1
            total = nx_wall * dense["n"] / nx_k
            nx_row = (f"| networkx {nx_version()} (`betweenness_centrality_subset`, 1 thread), {nx_k} sources, "
                      f"extrapolated to {dense['n']} | {total:.1f} s ({nx_wall:.2f} s for the sample) | |")
            print(f"networkx: {nx_wall:.2f} s from {nx_k} sources, {total:.1f} s extrapolated; "
                  f"pathctl --sources equal within {nx_worst:.1e}", flush=True)
    lines = [
        "# Exact weighted betweenness, CPU: pathctl against NetworKit",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{os.cpu_count()} cores, {args.threads} threads each; R-MAT {args.scale} (edge factor "
        f"{args.edge_factor}, weights {args.weights}, seed {args.seed}): {dense['n']} vertices, "
        f"{len(dense['src'])} arcs; {args.rounds} interleaved rounds, median (lowest–highest).",
        f"Command: `{' '.join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:]))}`",
        "",
        "| tool | wall | CPU (all threads) |",
        "|---|---|---|",
        f"| pathctl (whole command) | {spread(rows['pathctl']['wall'])} | {spread(rows['pathctl']['cpu'])} |",
    ]
    if nx_row:
        lines.append(nx_row)
    if not reason:
        nk_wall, nk_cpu = rows["NetworKit"]["wall"], rows["NetworKit"]["cpu"]
        lines.append(f"| NetworKit {version} (Betweenness.run) | {spread(nk_wall)} | {spread(nk_cpu)} |")
        lines += ["", f"pathctl is {statistics.median(nk_wall) / statistics.median(rows['pathctl']['wall']):.2f}× "
                  f"NetworKit in wall time and {statistics.median(nk_cpu) / statistics.median(rows['pathctl']['cpu']):.2f}× "
                  f"in CPU time (medians); largest relative difference of the values {worst:.1e}."]
    else:
        lines += ["", reason]
    report = "\n".join(lines) + "\n"
    print(report)
    Path(args.out or work / "bench-betweenness.md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
