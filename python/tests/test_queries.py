"""Queries narrower than all pairs: targets, cutoff and k, through the local
keywords and the Flight client, against scipy's distances."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pathctl
from conftest import oracle, random_edges, write_arrow
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
