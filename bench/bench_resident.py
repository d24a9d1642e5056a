#!/usr/bin/env python3
"""A graph that stays loaded (issue 39, point 11): the time of a repeated
``g.sssp(s)`` on a ``g = pathctl.load(...)`` graph, against the module
function ``pathctl.sssp`` (which starts the binary and reads the edges on
every call) and scipy's Dijkstra from one source.

    make bench-resident                       # or:
    PATHCTL_BIN=bin/pathctl .venv/bin/python bench/bench_resident.py

The graph is a --rows × --cols grid (default 150 × 200 = 30,000 vertices),
4 neighbours, integer weights 1..100 drawn from --seed, undirected, as a
pyarrow Table. --calls sources drawn at random are queried in turn
(pairs layout, every vertex's distance) after --warmup calls; the figure
is the median per call, with the 90th percentile and the mean beside it.
Every --check-th result is compared with scipy's distances (a mismatch
exits 1). The goal is a median ≤ 5 ms on the 2-core development machine,
CPU engine.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np
import pyarrow as pa


def grid(rows: int, cols: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    idx = np.arange(rows * cols).reshape(rows, cols)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    weight = rng.integers(1, 101, len(src))
    return pa.table({"src": src.astype(np.int64), "dst": dst.astype(np.int64),
                     "weight": weight.astype(np.int64)})


def scipy_matrix(table: pa.Table, n: int):
    from scipy.sparse import csr_matrix

    src = table.column("src").to_numpy()
    dst = table.column("dst").to_numpy()
    w = table.column("weight").to_numpy().astype(float)
    return csr_matrix((w, (src, dst)), shape=(n, n))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=150)
    ap.add_argument("--cols", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--check", type=int, default=50, help="compare every CHECK-th result with scipy")
    ap.add_argument("--module-calls", type=int, default=5, help="calls of pathctl.sssp for comparison")
    ap.add_argument("--engine", default="cpu")
    args = ap.parse_args(argv)

    import pathctl
    from scipy.sparse.csgraph import dijkstra

    n = args.rows * args.cols
    table = grid(args.rows, args.cols, args.seed)
    A = scipy_matrix(table, n)
    rng = np.random.default_rng(args.seed + 1)
    sources = [int(s) for s in rng.integers(0, n, args.warmup + args.calls)]

    t0 = time.perf_counter()
    g = pathctl.load(table, directed=False, engine=args.engine)
    load_s = time.perf_counter() - t0
    times = []
    bad = 0
    try:
        for i, s in enumerate(sources):
            t0 = time.perf_counter()
            result = g.sssp(s)
            dt = time.perf_counter() - t0
            if i >= args.warmup:
                times.append(dt)
            if args.check and i % args.check == 0:
                want = dijkstra(A, directed=False, indices=s)
                got = np.full(n, np.inf)
                got[result.column("target").to_numpy()] = result.column("distance").to_numpy()
                if not np.array_equal(got, want):
                    bad += 1
                    print(f"mismatch with scipy from source {s}", file=sys.stderr)
    finally:
        g.close()

    module = []
    for s in sources[:args.module_calls]:
        t0 = time.perf_counter()
        pathctl.sssp(table, s, directed=False, engine=args.engine)
        module.append(time.perf_counter() - t0)
    peer = []
    for s in sources[:20]:
        t0 = time.perf_counter()
        dijkstra(A, directed=False, indices=s)
        peer.append(time.perf_counter() - t0)

    ms = sorted(t * 1000 for t in times)
    median = statistics.median(ms)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    mean = statistics.fmean(ms)
    print(f"grid {args.rows}x{args.cols} ({n} vertices, {table.num_rows} edges, undirected), "
          f"engine {args.engine}, {len(ms)} calls after {args.warmup} warm-up")
    print(f"load: {load_s * 1000:.1f} ms")
    print(f"g.sssp(s): median {median:.2f} ms, p90 {p90:.2f} ms, mean {mean:.2f} ms")
    print(f"pathctl.sssp(table, s): median {statistics.median(module) * 1000:.1f} ms")
    print(f"scipy dijkstra(indices=s): median {statistics.median(peer) * 1000:.2f} ms")
    print(f"checked against scipy: {'ok' if not bad else f'{bad} mismatches'}")
    print(f"| 39 | repeated `g.sssp(s)` on a 30,000-vertex grid ≤ 5 ms a call (CPU engine) | "
          f"{median:.2f} ms median (p90 {p90:.2f} ms; `pathctl.sssp` {statistics.median(module) * 1000:.0f} ms, "
          f"scipy {statistics.median(peer) * 1000:.2f} ms) | {os.cpu_count()}-core {platform.machine()} machine, "
          f"{datetime.date.today().isoformat()} (`make bench-resident`) | {'met' if median <= 5 else 'not met'} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
