#!/usr/bin/env python3
"""GPU benchmark: pathctl's GPU engine (auto and every seed algorithm), the
CPU engine and scipy's Dijkstra on the same generated graphs, in one run on
one machine. Run on the GPU machine after `make build`:

    python3 bench/bench_gpu.py --out bench/results/bench-gpu.md

The GPU runs compute every source (all-pairs) in the stats layout, which
still copies every distance block to host memory and reduces it there. The
CPU engine and scipy run a sample of sources and are extrapolated (marked).
Before timing, `pathctl verify` checks each GPU algorithm against the
serial oracle on sampled sources; a mismatch fails the run.
"""
import argparse
import datetime
import multiprocessing as mp
import os
import platform
import re
import subprocess
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

BIN = os.environ.get("PATHCTL_BIN", "bin/pathctl")
ALGOS = ["auto", "dijkstra", "delta", "edge", "bfs", "bfs-level", "bellman-ford"]
GRAPHS = {
    "rmat14": ["rmat", "--scale", "14", "--edge-factor", "16"],
    "rmat16": ["rmat", "--scale", "16", "--edge-factor", "16"],
    "grid256": ["grid", "--rows", "256", "--cols", "256"],
}


def sh(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def engine_seconds(stderr):
    """The engine's own time from pathctl's summary line ("pairs in 1.234s")."""
    m = re.search(r"pairs in ([0-9.]+)(ms|s|m)", stderr)
    if not m:
        raise SystemExit(f"no summary in: {stderr}")
    v = float(m.group(1))
    return v / 1000 if m.group(2) == "ms" else v * 60 if m.group(2) == "m" else v


def load_csr(path):
    t = pq.read_table(path)
    src = t.column("src").to_numpy()
    dst = t.column("dst").to_numpy()
    w = t.column("weight").to_numpy().astype(np.float64)
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    m = len(src)
    s, d = inv[:m], inv[m:]
    keep = s != d
    s, d, w = s[keep], d[keep], w[keep]
    # undirected: both directions, duplicates keep the smallest weight
    s, d, w = np.concatenate([s, d]), np.concatenate([d, s]), np.concatenate([w, w])
    order = np.lexsort((w, d, s))
    s, d, w = s[order], d[order], w[order]
    first = np.ones(len(s), bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    n = len(ids)
    return sp.csr_matrix((w[first], (s[first], d[first])), shape=(n, n)), ids


_G = None


def _scipy_block(idx):
    dijkstra(_G, directed=True, indices=idx)
    return len(idx)


def scipy_time(g, sources, procs):
    global _G
    _G = g
    blocks = np.array_split(sources, max(1, procs * 4))
    t = time.perf_counter()
    if procs == 1:
        for b in blocks:
            _scipy_block(b)
    else:
        with mp.get_context("fork").Pool(procs) as pool:
            pool.map(_scipy_block, blocks)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default=",".join(GRAPHS))
    ap.add_argument("--algos", default=",".join(ALGOS))
    ap.add_argument("--sample", type=int, default=512, help="sources for the CPU engine and scipy")
    ap.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the CPU engine and scipy (--no-peers: the GPU runs only)")
    ap.add_argument("--work", default="bench/results")
    ap.add_argument("--out", default="bench/results/bench-gpu.md")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cores = os.cpu_count()
    info = sh([BIN, "info"]).stdout.strip()
    rows = []
    for name in args.graphs.split(","):
        path = os.path.join(args.work, name + ".parquet")
        sh([BIN, "gen", *GRAPHS[name], "--seed", "1", "-o", path])
        g, ids = load_csr(path)
        n, m = g.shape[0], g.nnz
        print(f"{name}: {n} vertices, {m} arcs", flush=True)
        for algo in args.algos.split(","):
            v = sh([BIN, "verify", path, "--undirected", "--engine", "gpu", "--algo", algo, "--samples", "4"])
            out = os.path.join(args.work, "stats.arrow")
            r = sh([BIN, "run", path, "--undirected", "--engine", "gpu", "--algo", algo, "--layout", "stats", "-o", out])
            secs = engine_seconds(r.stderr)
            chosen = re.search(r"algorithm (.*?);", r.stderr).group(1)
            rows.append((name, n, m, f"pathctl gpu {algo}", secs, n, False, chosen))
            print(f"  gpu {algo}: {secs:.2f} s ({chosen}); {v.stdout.strip()}", flush=True)
        if not args.peers:
            continue
        rng = np.random.default_rng(1)
        sample = rng.choice(n, size=min(args.sample, n), replace=False)
        with open(os.path.join(args.work, "sources.txt"), "w") as f:
            f.write("\n".join(str(ids[i]) for i in sample))
        r = sh([BIN, "run", path, "--undirected", "--engine", "cpu", "--layout", "stats",
                "--sources-file", os.path.join(args.work, "sources.txt"), "-o", os.path.join(args.work, "cpu.arrow")])
        secs = engine_seconds(r.stderr) * n / len(sample)
        rows.append((name, n, m, f"pathctl cpu auto ({cores} cores)", secs, n, True, ""))
        print(f"  cpu: {secs:.1f} s extrapolated", flush=True)
        for procs in (1, cores):
            secs = scipy_time(g, sample, procs) * n / len(sample)
            rows.append((name, n, m, f"scipy dijkstra ({procs} proc)", secs, n, True, ""))
            print(f"  scipy {procs}: {secs:.1f} s extrapolated", flush=True)
    lines = [
        f"Machine: {platform.node()}, {cores} CPU cores; {info.splitlines()[2].strip() if len(info.splitlines()) > 2 else info}",
        f"Date: {datetime.date.today()}; command: `python3 bench/bench_gpu.py` (graphs undirected, integer weights 1..100, seed 1)",
        "",
        "| graph | n | arcs | run | seconds | pairs/s | relaxations/s (arcs × sources / s) | vs scipy all cores | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ref = {r[0]: r[4] for r in rows if r[3].startswith("scipy") and not r[3].endswith("(1 proc)")}
    for name, n, m, run, secs, sources, extrap, chosen in rows:
        pairs = n * sources
        note = ("extrapolated from a sample" if extrap else "all sources") + (f"; {chosen}" if chosen and run.endswith("auto") else "")
        vs = f"{ref[name] / secs:.1f}×" if name in ref else "n/a"
        lines.append(f"| {name} | {n} | {m} | {run} | {secs:.2f} | {pairs / secs:.3g} | {m * sources / secs:.3g} | {vs} | {note} |")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
