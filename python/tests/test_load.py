"""pathctl.load: a graph kept loaded in an engine process of its own
(issue 39, point 11). Its methods answer as the module functions and scipy
do, raise the same exception classes, and leave no process and no
directory behind: after close(), after the with block, and after the
engine process was killed (whose death the next call reports)."""

from __future__ import annotations

import glob
import math
import os
import signal
import tempfile
import time

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from conftest import assert_tables_equal, oracle, random_edges


def alive(pid: int) -> bool:
    """Whether pid is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def wait_unlocked(path: str, timeout: float = 10.0) -> bool:
    """Whether the flock of path comes free within timeout."""
    import fcntl
    deadline = time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        finally:
            os.close(fd)
        time.sleep(0.02)


@pytest.fixture
def edges() -> pa.Table:
    return random_edges(11, 40, 160)


@pytest.mark.parametrize("directed", [True, False])
def test_results_equal_module_functions_and_scipy(edges, directed):
    with pathctl.load(edges, directed=directed, engine="cpu") as g:
        assert g.num_vertices == len(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
        want = pathctl.apsp(edges, directed=directed, engine="cpu")
        assert_tables_equal(g.apsp(), want)
        for layout in ("pairs", "matrix", "stats"):
            # (pathctl.sssp with layout="matrix" passes the binary a flag
            # its sssp command refuses: apsp of one source is the oracle.)
            assert_tables_equal(g.sssp(10, layout=layout),
                                pathctl.apsp(edges, sources=[10], directed=directed, engine="cpu", layout=layout),
                                pairs=layout == "pairs")
        assert_tables_equal(g.bfs(10, with_predecessors=True),
                            pathctl.bfs(edges, 10, directed=directed, engine="cpu", with_predecessors=True))
        assert_tables_equal(g.apsp(sources=[3, 10], targets=[17, 24], cutoff=30),
                            pathctl.apsp(edges, sources=[3, 10], targets=[17, 24], cutoff=30,
                                         directed=directed, engine="cpu"))
        assert_tables_equal(g.apsp(sources=[3], k=4), pathctl.apsp(edges, sources=[3], k=4, directed=directed,
                                                                    engine="cpu"))
        assert g.path(3, 24) == pathctl.path(edges, 3, 24, directed=directed, engine="cpu")
        assert_tables_equal(pa.Table.from_batches(list(g.stream(sources=[3, 10]))),
                            pathctl.apsp(edges, sources=[3, 10], directed=directed, engine="cpu"))

        D, ids = g.distance_matrix(unreachable=-1)
        D2, ids2 = pathctl.distance_matrix(edges, directed=directed, engine="cpu", unreachable=-1)
        np.testing.assert_array_equal(ids, ids2)
        np.testing.assert_array_equal(D, D2)
        ref, vertices = oracle(edges, directed=directed)
        assert list(ids) == vertices
        np.testing.assert_array_equal(np.where(D < 0, np.inf, D), ref)
        out = np.empty_like(D2)
        got, _ = g.distance_matrix(out=out, unreachable=-1)
        assert got is out
        np.testing.assert_array_equal(out, D2)


def test_string_ids_and_vertex_order():
    edges = random_edges(5, 30, 90, ids="string", weights="float")
    with pathctl.load(edges) as g:
        D, ids = g.distance_matrix(sources=["v003", "v017"])
        D2, ids2 = pathctl.distance_matrix(edges, sources=["v003", "v017"])
        assert list(ids) == list(ids2)
        np.testing.assert_array_equal(D, D2)


def test_errors_are_the_module_functions_classes(edges):
    negative = random_edges(3, 20, 60, negative=True)
    with pathctl.load(edges, engine="cpu") as g, pathctl.load(negative, engine="cpu") as neg:
        cases = [
            (lambda: g.sssp(999999), lambda: pathctl.sssp(edges, 999999, engine="cpu"), pathctl.InvalidInputError),
            (lambda: g.apsp(algorithm="nope", sources=[3]),
             lambda: pathctl.apsp(edges, algorithm="nope", sources=[3]), pathctl.UsageError),
            (lambda: g.apsp(layout="grid"), lambda: pathctl.apsp(edges, layout="grid"), pathctl.UsageError),
            (lambda: g.apsp(sources=[3], k=0), lambda: pathctl.apsp(edges, sources=[3], k=0), pathctl.UsageError),
            (lambda: g.apsp(sources=3), lambda: pathctl.apsp(edges, sources=3), TypeError),
            (lambda: neg.sssp(3, algorithm="dijkstra"),
             lambda: pathctl.sssp(negative, 3, algorithm="dijkstra"), pathctl.NegativeWeightError),
        ]
        for ours, theirs, cls in cases:
            with pytest.raises(cls) as module_error:
                theirs()
            with pytest.raises(cls) as graph_error:
                ours()
            assert type(graph_error.value) is type(module_error.value), (graph_error.value, module_error.value)
        # The graph stays usable after refused queries.
        assert g.sssp(3).num_rows > 0
    with pytest.raises(pathctl.InvalidInputError):
        pathctl.load(edges, src_col="from")  # no such column
    with pytest.raises(pathctl.InputNotFoundError):
        pathctl.load("no-such-edges.parquet")


def engine_dirs():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "pathctl-graph-*")))


def test_close_leaves_no_process_and_no_directory(edges):
    before = engine_dirs()
    g = pathctl.load(edges)
    pid = g.pid
    assert alive(pid)
    assert len(engine_dirs() - before) == 1
    g.close()
    assert not alive(pid)
    assert engine_dirs() - before == set()
    g.close()  # twice is harmless
    with pytest.raises(pathctl.PathctlError, match="closed"):
        g.sssp(3)


def test_context_manager_and_garbage_collection(edges):
    before = engine_dirs()
    with pathctl.load(edges) as g:
        pid = g.pid
        assert g.sssp(3).num_rows > 0
    assert g.closed and not alive(pid)
    g = pathctl.load(edges)
    pid = g.pid
    del g  # collected: the finalizer stops the process
    assert wait_gone(pid)
    assert engine_dirs() - before == set()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_engine_is_a_clear_error_and_leaves_nothing(edges, sig):
    before = engine_dirs()
    g = pathctl.load(edges)
    pid = g.pid
    os.kill(pid, sig)
    assert wait_gone(pid) or True  # reaped by the next call
    with pytest.raises(pathctl.ServiceUnavailableError, match="engine process .* (killed by signal|exited).*load it again"):
        g.sssp(3)
    with pytest.raises(pathctl.ServiceUnavailableError, match="load it again"):
        g.apsp()  # every later call says so too
    assert not alive(pid)
    assert engine_dirs() - before == set()
    g.close()


def test_engine_stops_when_python_dies(edges, tmp_path):
    """A Python that dies by SIGKILL takes its engine process along (it
    stops when its stdin pipe closes), and the next load removes the
    directory it left."""
    import subprocess
    import sys

    script = tmp_path / "child.py"
    script.write_text(
        "import sys, pyarrow as pa, pathctl\n"
        "g = pathctl.load(pa.table({'src': [1, 2], 'dst': [2, 3]}))\n"
        "print(g.pid, g._engine.data_dir, flush=True)\n"
        "sys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=os.environ)
    try:
        pid, data_dir = child.stdout.readline().split()
        pid = int(pid)
        assert alive(pid)
        child.kill()
        child.wait()
        assert wait_gone(pid), "the engine process outlived its parent"
        assert os.path.isdir(data_dir)  # left by the SIGKILL ...
        # A Go process shows as a zombie once its main thread has exited,
        # while its other threads (and its lock) may still be going away.
        assert wait_unlocked(os.path.join(data_dir, "lock")), "the lock outlived the engine process"
        with pathctl.load(edges):
            assert not os.path.exists(data_dir)  # ... and removed by the next load
    finally:
        child.kill()
        child.wait()


def test_repeated_queries_reuse_one_process(edges):
    with pathctl.load(edges, directed=False) as g:
        pid = g.pid
        results = [g.sssp(s) for s in (3, 10, 17, 3)]
        assert g.pid == pid and alive(pid)
        assert results[0].equals(results[3])
        d, route = g.path(3, 10)
        assert math.isfinite(d) and route[0] == 3 and route[-1] == 10
