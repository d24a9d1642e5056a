"""Shared fixtures: the binary, the CLI as an oracle, graphs, and scipy
oracles."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary() -> str:
    path = os.environ.get("PATHCTL_BIN") or str(REPO / "bin" / "pathctl")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(
            f"no pathctl binary at {path}: build it with `CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl` "
            "and set PATHCTL_BIN")
    return os.path.abspath(path)


@pytest.fixture(scope="session", autouse=True)
def pathctl_bin() -> str:
    """The binary under test; PATHCTL_BIN is set for the package too."""
    path = _binary()
    os.environ["PATHCTL_BIN"] = path
    return path


def cli(args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([_binary(), *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"pathctl {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}")
    return proc


def read_arrow(path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def cli_result(edges_path, out_dir, *extra: str, command: str = "run") -> pa.Table:
    """What `pathctl run EDGES -o file.arrow` writes: the oracle every
    function is compared with."""
    out = Path(out_dir) / f"cli-{abs(hash((str(edges_path), command) + tuple(extra)))}.arrow"
    cli([command, *extra, "-o", out, edges_path])  # flags before EDGES
    return read_arrow(out)


def write_arrow(table: pa.Table, path) -> str:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return str(path)


def sort_pairs(table: pa.Table) -> pa.Table:
    keys = [(c, "ascending") for c in ("source", "target") if c in table.column_names]
    return table.sort_by(keys).combine_chunks()


def assert_tables_equal(got: pa.Table, want: pa.Table, pairs: bool = True) -> None:
    got_s = sort_pairs(got) if pairs else got.combine_chunks()
    want_s = sort_pairs(want) if pairs else want.combine_chunks()
    assert got_s.schema.remove_metadata().equals(want_s.schema.remove_metadata()), (got_s.schema, want_s.schema)
    assert got_s.num_rows == want_s.num_rows
    for name in want_s.column_names:
        g, w = got_s.column(name), want_s.column(name)
        assert g.equals(w), f"column {name} differs"


# --- graphs ------------------------------------------------------------------

def random_edges(seed: int, n: int, m: int, *, weights: str = "int", negative: bool = False,
                 ids: str = "int64") -> pa.Table:
    """A seeded random edge table: duplicates and self-loops included on
    purpose (the engine must drop loops and keep the lightest duplicate)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    columns: Dict[str, pa.Array] = {}
    # External ids are sparse (multiples of 7 plus 3) so that dense ids and
    # external ids differ.
    if ids == "string":
        columns["src"] = pa.array([f"v{int(s):03d}" for s in src])
        columns["dst"] = pa.array([f"v{int(d):03d}" for d in dst])
    else:
        columns["src"] = pa.array(src * 7 + 3, type=pa.from_numpy_dtype(np.dtype(ids)))
        columns["dst"] = pa.array(dst * 7 + 3, type=pa.from_numpy_dtype(np.dtype(ids)))
    if weights == "int":
        low = -3 if negative else 1
        columns["weight"] = pa.array(rng.integers(low, 20, m), type=pa.int32())
    elif weights == "float":
        columns["weight"] = pa.array(rng.uniform(0.5, 10.0, m), type=pa.float64())
    return pa.table(columns)


def oracle(table: pa.Table, *, directed: bool = True, src_col: str = "src", dst_col: str = "dst",
           weight_col: Optional[str] = "weight"):
    """scipy's all-pairs shortest paths of an edge table: (distance matrix
    with inf for unreachable, sorted vertex ids)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    src = table.column(src_col).to_pylist()
    dst = table.column(dst_col).to_pylist()
    vertices = sorted(set(src) | set(dst))
    index = {v: i for i, v in enumerate(vertices)}
    n = len(vertices)
    if weight_col and weight_col in table.column_names:
        w = table.column(weight_col).to_pylist()
    else:
        w = [1] * len(src)
    best: Dict[tuple, float] = {}
    for s, d, x in zip(src, dst, w):
        if s == d:
            continue
        key = (index[s], index[d])
        best[key] = min(best.get(key, float("inf")), x)
    if not best:
        dist = np.full((n, n), np.inf)
        np.fill_diagonal(dist, 0)
        return dist, vertices
    rows, cols = zip(*best.keys())
    # csgraph treats explicit zeros as absent edges: nudge zero weights to a
    # tiny value and round afterwards (test graphs use integer weights or
    # weights far from zero).
    data = np.array([v if v != 0 else 1e-300 for v in best.values()], dtype=float)
    graph = csr_matrix((data, (rows, cols)), shape=(n, n))
    dist = shortest_path(graph, method="auto" if min(best.values()) >= 0 else "BF", directed=directed)
    return dist, vertices


def dense_from_pairs(pairs: pa.Table, vertices: List) -> np.ndarray:
    index = {v: i for i, v in enumerate(vertices)}
    n = len(vertices)
    dist = np.full((n, n), np.inf)
    for s, t, d in zip(pairs.column("source").to_pylist(), pairs.column("target").to_pylist(),
                       pairs.column("distance").to_pylist()):
        dist[index[s], index[t]] = d
    return dist


def child_pids() -> List[int]:
    """Children of this process that are pathctl binaries, or zombies (a
    child nobody reaped), from Linux /proc. Other children (Spark's JVM, a
    notebook kernel) are not ours to judge."""
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0].decode(errors="replace")
        except OSError:
            continue
        if int(fields[1]) != me:
            continue
        if fields[0] == "Z" or "pathctl" in os.path.basename(argv0):
            out.append(int(entry))
    return out


def wait_no_children(timeout: float = 10.0) -> None:
    """Assert that no pathctl child is left. A call returns as soon as the
    binary says it is done and reaps it in the background, so a child may
    still be tearing its device down for a moment after the call."""
    deadline = time.monotonic() + timeout
    while child_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child_pids() == []


@pytest.fixture
def small_edges() -> pa.Table:
    """A 6-vertex directed graph: 10 reaches every vertex, 60 reaches none,
    and the direct edge 10 -> 30 is longer than the detour through 20."""
    return pa.table({
        "src": pa.array([10, 10, 20, 30, 20, 40, 50], type=pa.int64()),
        "dst": pa.array([20, 30, 30, 40, 40, 50, 60], type=pa.int64()),
        "weight": pa.array([1, 5, 2, 1, 7, 3, 1], type=pa.int32()),
    })
