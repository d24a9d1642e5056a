"""Queries narrower than all pairs: targets, cutoff and k, through the local
keywords and the Flight client, against scipy's distances."""

from __future__ import annotations

import gc
import math
import os
import re
import tempfile
import time

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from conftest import oracle, random_edges, wait_no_children, write_arrow
from test_flight import Server


def expected_pairs(dist, vertices, sources, targets=None, cutoff=None, k=None):
    index = {v: i for i, v in enumerate(vertices)}
    cols = list(targets) if targets is not None else list(vertices)
    rows = []
    for s in sources:
        row = []
        for t in cols:
            d = dist[index[s], index[t]]
            if math.isinf(d) or (cutoff is not None and d > cutoff) or (k and t == s):
                continue
            row.append((s, t, float(d)))
        if k:
            row.sort(key=lambda r: (r[2], index[r[1]]))
            row = [r + (i + 1,) for i, r in enumerate(row[:k])]
        rows.extend(row)
    return rows


def rows_of(table, rank=False):
    cols = [table.column(c).to_pylist() for c in ("source", "target", "distance")]
    if rank:
        cols.append(table.column("rank").to_pylist())
    return [tuple(float(x) if i == 2 else x for i, x in enumerate(r)) for r in zip(*cols)]


@pytest.fixture(scope="module")
def query_graph(tmp_path_factory):
    edges = random_edges(17, 30, 90)
    dist, vertices = oracle(edges)
    path = write_arrow(edges, tmp_path_factory.mktemp("queries") / "edges.arrow")
    return edges, path, dist, vertices


def test_targets_cutoff_k_local(query_graph):
    edges, path, dist, vertices = query_graph
    sources = vertices[:5]
    targets = [vertices[-1], vertices[0], vertices[7]]
    cutoff = float(np.median(dist[np.isfinite(dist)]))
    got = pathctl.apsp(path, sources=sources, targets=targets, engine="cpu")
    assert rows_of(got) == expected_pairs(dist, vertices, sources, targets)
    got = pathctl.apsp(edges, sources=sources, cutoff=cutoff, engine="cpu")
    assert rows_of(got) == expected_pairs(dist, vertices, sources, cutoff=cutoff)
    got = pathctl.apsp(path, sources=sources, k=3, cutoff=cutoff, engine="cpu")
    assert rows_of(got, rank=True) == expected_pairs(dist, vertices, sources, cutoff=cutoff, k=3)


def test_targets_matrix_local(query_graph):
    _, path, dist, vertices = query_graph
    sources = vertices[3:6]
    targets = [vertices[9], vertices[2]]
    matrix, ids = pathctl.distance_matrix(path, sources=sources, targets=targets, engine="cpu")
    assert list(ids) == targets
    index = {v: i for i, v in enumerate(vertices)}
    want = dist[np.ix_([index[s] for s in sources], [index[t] for t in targets])]
    got = np.ma.filled(matrix.astype(float), np.inf) if np.ma.isMaskedArray(matrix) else matrix
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kwargs", [{"targets": [123456]}, {"k": 0}, {"cutoff": -1.0}, {"targets": []}])
def test_query_keyword_errors_local(query_graph, kwargs):
    _, path, _, _ = query_graph
    with pytest.raises(pathctl.PathctlError):
        pathctl.apsp(path, engine="cpu", **kwargs)


def test_targets_cutoff_k_flight(query_graph, tmp_path):
    edges, _, dist, vertices = query_graph
    server = Server(tmp_path / "graphs")
    try:
        with pathctl.connect(server.uri) as client:
            client.upload("q", edges)
            sources = vertices[:4]
            targets = [vertices[5], vertices[1]]
            got = client.apsp("q", sources=sources, targets=targets, engine="cpu")
            assert rows_of(got) == expected_pairs(dist, vertices, sources, targets)
            got = client.apsp("q", sources=sources, k=2, cutoff=30, engine="cpu")
            assert rows_of(got, rank=True) == expected_pairs(dist, vertices, sources, cutoff=30, k=2)
            assert "rank" in client.schema("q", k=2).names
            got = client.apsp("q", sources=sources, reverse=True, engine="cpu")
            assert rows_of(got) == expected_pairs(dist.T, vertices, sources)
            for bad in ({"k": 0}, {"cutoff": -2.0}, {"targets": [99999]}):
                with pytest.raises(pathctl.PathctlError):
                    client.apsp("q", **bad)
    finally:
        server.stop()


def test_reverse_local(query_graph):
    _, path, dist, vertices = query_graph
    sources = vertices[:3]
    got = pathctl.apsp(path, sources=sources, reverse=True, engine="cpu")
    want = expected_pairs(dist.T, vertices, sources)
    assert rows_of(got) == want


def expected_nearest(dist, vertices, sources):
    index = {v: i for i, v in enumerate(vertices)}
    rows = []
    for v in vertices:
        best = min(((dist[index[s], index[v]], index[s], s) for s in sources), default=None)
        if best is not None and not math.isinf(best[0]):
            rows.append((v, float(best[0]), best[2]))
    return rows


def test_nearest_local_and_flight(query_graph, tmp_path):
    edges, path, dist, vertices = query_graph
    sources = [vertices[4], vertices[0], vertices[11]]
    got = pathctl.apsp(path, sources=sources, layout="nearest")
    assert got.column_names == ["vertex", "distance", "source"]
    rows = list(zip(got.column("vertex").to_pylist(), map(float, got.column("distance").to_pylist()),
                    got.column("source").to_pylist()))
    assert rows == expected_nearest(dist, vertices, sources)
    with pytest.raises(pathctl.PathctlError):
        pathctl.apsp(path, layout="nearest")
    server = Server(tmp_path / "graphs")
    try:
        with pathctl.connect(server.uri) as client:
            client.upload("n", edges)
            assert client.apsp("n", sources=sources, layout="nearest").equals(got)
            with pytest.raises(pathctl.PathctlError):
                client.apsp("n", layout="nearest")
    finally:
        server.stop()


def check_paths(table, edges, dist, vertices):
    index = {v: i for i, v in enumerate(vertices)}
    arcs = {}
    for s, d, w in zip(edges.column("src").to_pylist(), edges.column("dst").to_pylist(),
                       edges.column("weight").to_pylist()):
        if s != d:
            arcs[(s, d)] = min(arcs.get((s, d), math.inf), w)
    assert table.num_rows > 0
    for s, t, d, p in zip(*(table.column(c).to_pylist() for c in ("source", "target", "distance", "path"))):
        assert p[0] == s and p[-1] == t
        assert sum(arcs[(a, b)] for a, b in zip(p, p[1:])) == d == dist[index[s], index[t]]


def test_with_paths_and_path(query_graph, tmp_path):
    edges, path, dist, vertices = query_graph
    sources = vertices[:4]
    table = pathctl.apsp(path, sources=sources, with_paths=True, k=5)
    check_paths(table, edges, dist, vertices)
    s, t = table.column("source")[1].as_py(), table.column("target")[1].as_py()
    d, ids = pathctl.path(edges, s, t)
    assert d == table.column("distance")[1].as_py() and ids[0] == s and ids[-1] == t
    index = {v: i for i, v in enumerate(vertices)}
    far = [v for v in vertices if math.isinf(dist[index[s], index[v]])]
    if far:
        assert pathctl.path(path, s, far[0]) == (math.inf, [])
    server = Server(tmp_path / "graphs")
    try:
        with pathctl.connect(server.uri) as client:
            client.upload("p", edges)
            check_paths(client.apsp("p", sources=sources, with_paths=True, cutoff=25), edges, dist, vertices)
    finally:
        server.stop()


# --- bad input (issue 17, "Bad input") ----------------------------------------

# Paths for every pair of this many vertices (4.1 GiB) are above the bound
# on their estimated output (pipeline.DefaultMaxOutput, 1 GiB).
BIG_VERTICES = 10_050


@pytest.fixture(scope="module")
def big_ring():
    """A directed ring of BIG_VERTICES vertices: every pair is reachable."""
    ids = np.arange(BIG_VERTICES, dtype=np.int64)
    return pa.table({"src": pa.array(ids), "dst": pa.array((ids + 1) % BIG_VERTICES)})


# Each bad query: its keywords, whether it runs on the big ring, the
# exception the package documents for a local run (python/README, "Errors":
# a bad value is a UsageError, an unknown id an InvalidInputError), and what
# the message must say locally and over Flight: the keyword and the value.
BAD_QUERIES = [
    pytest.param({"k": 0}, False, pathctl.UsageError, r"^k=0: k is 1 or more", r"\bk=0: k is 1 or more", id="k-zero"),
    pytest.param({"k": -2}, False, pathctl.UsageError, r"^k=-2: ", r"\bk=-2: ", id="k-negative"),
    pytest.param({"cutoff": math.nan}, False, pathctl.UsageError, r"^cutoff=nan: ", r"^cutoff=nan: ",
                 id="cutoff-nan"),
    pytest.param({"cutoff": -1.5}, False, pathctl.UsageError, r"^cutoff=-1\.5: ", r"\bcutoff=-1\.5: ",
                 id="cutoff-negative"),
    pytest.param({"targets": [3, 123456]}, False, pathctl.InvalidInputError,
                 r'^target "123456" is not a vertex of the graph', r'\btarget "123456" is not a vertex of the graph', id="unknown-target"),
    pytest.param({"layout": "nearest"}, False, pathctl.UsageError, r"\bnearest\b.*\bneeds sources\b",
                 r"\bnearest\b.*\bneeds sources\b", id="nearest-without-sources"),
    # Every source's paths (sources=None: 4.1 GiB); one source's pass.
    pytest.param({"with_paths": True, "sources": None}, True, pathctl.UsageError,
                 rf"^with_paths=True: paths .* × {BIG_VERTICES} vertices: .* [MG]iB of output",
                 rf'"with_paths": .*\bpaths .* × {BIG_VERTICES} vertices: .* [MG]iB of output', id="with-paths-too-large"),
]


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def settled_fds():
    """open_fds() once earlier calls have let go of theirs: their children
    gone and the threads that hold their runs done (a run's pipes close
    when its last thread ends, which can fall inside the next call)."""
    wait_no_children()
    fds, deadline = open_fds(), time.monotonic() + 5
    while time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
        now = open_fds()
        if now == fds:
            break
        fds = now
    return fds


def assert_nothing_left(tmp_dir, fds_before):
    """No temporary file (the ids files of a pipe handoff, a vertex table)
    left in the run's temporary directory, no descriptor (a memfd) left
    open, no pathctl child left running."""
    assert list(tmp_dir.iterdir()) == []
    wait_no_children()
    deadline = time.monotonic() + 5
    while open_fds() != fds_before and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert open_fds() == fds_before


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory, for this test alone, to look into afterwards."""
    tmp_dir = tmp_path / "tmp"
    tmp_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_dir))
    monkeypatch.setenv("TMPDIR", str(tmp_dir))
    return tmp_dir


@pytest.mark.parametrize("handoff", ["memfd", "pipe"])
@pytest.mark.parametrize("kwargs, big, error, local_message, flight_message", BAD_QUERIES)
def test_bad_query_local(query_graph, big_ring, private_tmp, monkeypatch, handoff, kwargs, big, error,
                         local_message, flight_message):
    """Each bad value of issue 17 is the documented exception, exit status 2,
    one line naming the keyword and the value, and nothing left behind:
    through apsp (a result in memory) and stream (a pipe), with every handoff."""
    edges, _, _, vertices = query_graph
    monkeypatch.setenv("PATHCTL_HANDOFF", handoff)
    graph = big_ring if big else edges  # data, so that the edges cross too
    # The vertex table goes through a temporary file, and so do the ids of
    # sources and targets with pipes: each must be gone after the error.
    kwargs = {"vertices": big_ring.column("src") if big else vertices, **kwargs}
    if "layout" not in kwargs and "sources" not in kwargs:
        kwargs["sources"] = [0, 1] if big else vertices[:2]
    fds = settled_fds()
    for call in (pathctl.apsp, pathctl.stream):
        with pytest.raises(error) as info:
            call(graph, engine="cpu", **kwargs)
        assert type(info.value) is error, info.value
        assert info.value.exit_code == 2
        assert re.search(local_message, info.value.message), info.value.message
        assert "\n" not in info.value.message and str(info.value) == info.value.message
        assert_nothing_left(private_tmp, fds)


def test_bad_query_path_local(query_graph, private_tmp):
    """pathctl.path names the end that is not in the graph."""
    _, path, _, vertices = query_graph
    fds = settled_fds()
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.path(path, vertices[0], 123456)
    assert type(info.value) is pathctl.InvalidInputError
    assert re.search(r'^target "123456" is not a vertex of the graph', info.value.message), info.value.message
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.path(path, 123456, vertices[0])
    assert type(info.value) is pathctl.InvalidInputError
    assert re.search(r'\bsource "123456"', info.value.message), info.value.message
    assert_nothing_left(private_tmp, fds)


@pytest.fixture(scope="module")
def bad_query_server(query_graph, big_ring, tmp_path_factory):
    edges, _, _, _ = query_graph
    data = tmp_path_factory.mktemp("bad-queries") / "graphs"
    server = Server(data)
    try:
        with pathctl.connect(server.uri) as client:
            client.upload("small", edges)
            client.upload("ring", big_ring)
            settle_hierarchies(client)
        yield server, data
    finally:
        server.stop()


def settle_hierarchies(client, timeout=60.0):
    """Waits until no stored graph's hierarchy is queued or being built in
    the background: a build writes in the data directory, which the tests
    of bad queries compare before and after."""
    deadline = time.monotonic() + timeout
    while any(g.get("hierarchy") in ("queued", "building") for g in client.graphs()):
        assert time.monotonic() < deadline, client.graphs()
        time.sleep(0.05)


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("kwargs, big, error, local_message, flight_message", BAD_QUERIES)
def test_bad_query_flight(bad_query_server, kwargs, big, error, local_message, flight_message):
    """The same bad values over Flight: InvalidInputError (INVALID_ARGUMENT)
    from apsp, stream and schema, naming the value, and nothing written on
    the server."""
    server, data = bad_query_server
    before = tree(data)
    with pathctl.connect(server.uri) as client:
        for call in (client.apsp, client.stream, client.schema):
            with pytest.raises(pathctl.InvalidInputError) as info:
                call("ring" if big else "small", engine="cpu", **kwargs)
            assert info.value.exit_code is None
            assert re.search(flight_message, info.value.message), info.value.message
            assert "\n" not in info.value.message
    assert tree(data) == before


@pytest.mark.parametrize("kwargs", [{"k": True}, {"k": 2.5}, {"k": "3"}, {"cutoff": "5"}, {"cutoff": False}],
                         ids=["k-bool", "k-float", "k-str", "cutoff-str", "cutoff-bool"])
def test_query_keyword_types(query_graph, bad_query_server, tmp_path, kwargs):
    """A k that is not a whole number, or a cutoff that is not a number, is
    refused by the package itself, locally and over Flight alike (a ticket
    would otherwise carry k=True as 1 and k=2.5 as 2), before any process
    starts."""
    edges, _, _, _ = query_graph
    server, _ = bad_query_server
    (name, value), = kwargs.items()
    want = rf"^{name}={re.escape(repr(value))}: "
    ran = tmp_path / "ran"
    binary = tmp_path / "pathctl"
    binary.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec '{os.environ['PATHCTL_BIN']}' \"$@\"\n")
    binary.chmod(0o755)
    with pytest.raises(pathctl.UsageError, match=want):
        pathctl.apsp(edges, engine="cpu", binary=str(binary), **kwargs)
    assert not ran.exists()
    pathctl.apsp(edges, engine="cpu", binary=str(binary), sources=[edges.column("src")[0].as_py()])
    assert ran.exists()  # the wrapper does tell
    with pathctl.connect(server.uri) as client:
        for call in (client.apsp, client.schema):
            with pytest.raises(pathctl.UsageError, match=want):
                call("small", engine="cpu", **kwargs)


def test_infinite_cutoff_is_no_cutoff(query_graph, bad_query_server):
    """cutoff=inf keeps every distance: locally (the CLI takes --cutoff +Inf)
    and over Flight, whose JSON ticket cannot carry infinity (the client
    leaves the key out)."""
    edges, _, dist, vertices = query_graph
    server, _ = bad_query_server
    sources = vertices[:4]
    want = expected_pairs(dist, vertices, sources)
    assert rows_of(pathctl.apsp(edges, sources=sources, cutoff=math.inf, engine="cpu")) == want
    with pathctl.connect(server.uri) as client:
        assert rows_of(client.apsp("small", sources=sources, cutoff=math.inf, engine="cpu")) == want
        assert rows_of(client.apsp("small", sources=sources, cutoff=np.float64("inf"), engine="cpu")) == want
