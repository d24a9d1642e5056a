"""scipy.sparse matrices and networkx graphs as edges: the answers are
scipy.sparse.csgraph's and networkx's for the same objects, on random
graphs of several shapes (each seed is printed, and named in the
assertion), with isolated vertices and zero weights."""

from __future__ import annotations

import math
import subprocess
import sys

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

import pathctl
from conftest import REPO


def as_inf(D) -> np.ndarray:
    """distance_matrix's answer (unreachable="mask") as floats with inf."""
    return np.ma.MaskedArray(D.data.astype(np.float64), mask=D.mask).filled(np.inf)


def random_sparse(seed: int, n: int, density: float, fmt: str, dtype: str) -> sp.spmatrix:
    """A random n-by-n matrix with explicit zeros among its stored values
    and a few indices that no entry names (isolated vertices)."""
    rng = np.random.default_rng(seed)
    m = max(1, int(n * n * density))
    rows = rng.integers(0, n, m)
    cols = rng.integers(0, n, m)
    lonely = rng.choice(n, size=max(1, n // 10), replace=False)
    keep = ~(np.isin(rows, lonely) | np.isin(cols, lonely))
    rows, cols = rows[keep], cols[keep]
    if dtype == "int":
        data = rng.integers(0, 20, len(rows)).astype(np.int64)
    else:
        data = np.round(rng.random(len(rows)) * 10, 2)
    data[rng.random(len(rows)) < 0.15] = 0  # explicit zeros: edges of weight 0
    coo = sp.coo_matrix((data, (rows, cols)), shape=(n, n))
    coo.sum_duplicates()  # csgraph and we would both add them; keep the zeros visible
    return coo.asformat(fmt)


SPARSE_SHAPES = [
    # seed, n, density, format, weights
    (1, 12, 0.15, "csr", "int"),
    (2, 40, 0.05, "csc", "float"),
    (3, 25, 0.3, "coo", "int"),
    (4, 60, 0.02, "lil", "float"),
    (5, 9, 0.5, "dok", "int"),
    (6, 33, 0.08, "csr", "float"),
]


@pytest.mark.parametrize("seed, n, density, fmt, weights", SPARSE_SHAPES)
@pytest.mark.parametrize("directed", [True, False])
def test_sparse_matrix_equals_csgraph(seed, n, density, fmt, weights, directed):
    print(f"seed={seed} n={n} density={density} format={fmt} weights={weights} directed={directed}")
    M = random_sparse(seed, n, density, fmt, weights)
    assert (M.tocoo().data == 0).any(), "the graph should hold explicit zeros"
    # csgraph takes csr, csc, lil and coo; we take every format (a dok
    # matrix is compared with csgraph's answer for the same entries as csr).
    want = csgraph.shortest_path(M.tocsr() if fmt == "dok" else M, directed=directed)
    D, ids = pathctl.distance_matrix(M, directed=directed, unreachable="mask", engine="cpu")
    assert ids.tolist() == list(range(n))  # every index, isolated ones too
    np.testing.assert_allclose(as_inf(D), want, err_msg=f"seed={seed}")

    # The pairs, the streamed pairs and one source's pairs: the same distances.
    pairs = pathctl.apsp(M, directed=directed, engine="cpu")
    got = np.full((n, n), np.inf)
    got[pairs.column("source").to_numpy(), pairs.column("target").to_numpy()] = \
        pairs.column("distance").to_numpy()
    np.testing.assert_allclose(got, want, err_msg=f"seed={seed}")
    streamed = pathctl.stream(M, directed=directed, engine="cpu").read_all()
    assert streamed.num_rows == pairs.num_rows
    s = int(np.random.default_rng(seed).integers(0, n))
    one = pathctl.sssp(M, s, directed=directed, engine="cpu")
    row = dict(zip(one.column("target").to_pylist(), one.column("distance").to_pylist()))
    reach = {j: want[s, j] for j in range(n) if np.isfinite(want[s, j])}
    assert row.keys() == reach.keys(), f"seed={seed}"
    assert all(math.isclose(row[j], reach[j]) for j in reach), f"seed={seed}"

    # Hop counts, as csgraph's unweighted=True.
    hops = csgraph.shortest_path(M.tocsr(), directed=directed, unweighted=True)
    H, _ = pathctl.distance_matrix(M, directed=directed, unweighted=True, unreachable="mask")
    np.testing.assert_array_equal(as_inf(H), hops, err_msg=f"seed={seed}")
    b = pathctl.bfs(M, s, directed=directed)
    assert dict(zip(b.column("target").to_pylist(), b.column("distance").to_pylist())) == \
        {j: int(hops[s, j]) for j in range(n) if np.isfinite(hops[s, j])}


def test_sparse_arrays_and_bool_matrices():
    """The newer sparse arrays (csr_array ...) are read as the matrices; a
    bool matrix has edges of weight 1, as csgraph reads it."""
    M = random_sparse(7, 20, 0.1, "csr", "int")
    want = csgraph.shortest_path(M)
    D, _ = pathctl.distance_matrix(sp.csr_array(M), unreachable="mask")
    np.testing.assert_allclose(as_inf(D), want)
    B = (M != 0).astype(bool)
    D, _ = pathctl.distance_matrix(B, unreachable="mask")
    np.testing.assert_allclose(as_inf(D), csgraph.shortest_path(B))


def test_sparse_duplicates_add_up_and_the_matrix_stays():
    """A COO matrix's duplicate entries add up, as csgraph (through
    tocsr) reads them; the caller's matrix is not changed."""
    M = sp.coo_matrix(([2, 3, 9], ([0, 0, 1], [1, 1, 2])), shape=(4, 4))
    before = M.data.copy()
    D, ids = pathctl.distance_matrix(M, unreachable="mask")
    np.testing.assert_allclose(as_inf(D), csgraph.shortest_path(M))
    assert as_inf(D)[0, 1] == 5 and ids.tolist() == [0, 1, 2, 3]
    assert M.data.tolist() == before.tolist() and M.nnz == 3


def test_empty_sparse_matrix_has_its_vertices():
    D, ids = pathctl.distance_matrix(sp.csr_matrix((5, 5)), unreachable="mask")
    np.testing.assert_array_equal(as_inf(D), csgraph.shortest_path(sp.csr_matrix((5, 5))))
    assert ids.tolist() == [0, 1, 2, 3, 4]


def test_sparse_path_and_predecessors():
    M = random_sparse(8, 30, 0.08, "csr", "int")
    dist, pred = csgraph.shortest_path(M, return_predecessors=True, indices=[0])
    t = int(np.flatnonzero(np.isfinite(dist[0]) & (np.arange(30) != 0))[-1])
    d, ids = pathctl.path(M, 0, t)
    assert d == dist[0, t] and ids[0] == 0 and ids[-1] == t
    assert sum(M[u, v] for u, v in zip(ids, ids[1:])) == d  # a walk along stored entries
    table = pathctl.apsp(M, sources=[0], with_predecessors=True)
    assert table.column("predecessor").type == pa.int64()


def random_nx(seed: int, kind: type, n: int, p: float, labels: str, weight: str) -> nx.Graph:
    """A random networkx graph of ``kind``: weights 0..9 in attribute
    ``weight`` (missing on some edges: 1, as networkx reads them), a few
    isolated nodes, and in multigraphs parallel edges."""
    rng = np.random.default_rng(seed)
    G = kind()
    name = (lambda i: f"v{i:03d}") if labels == "str" else (lambda i: i * 7 - 30)
    G.add_nodes_from(name(i) for i in range(n))
    for u in range(n - 3):  # the last three stay isolated
        for v in range(n - 3):
            if u != v and rng.random() < p:
                attrs = {} if rng.random() < 0.1 else {weight: int(rng.integers(0, 10))}
                G.add_edge(name(u), name(v), **attrs)
                if G.is_multigraph() and rng.random() < 0.3:
                    G.add_edge(name(u), name(v), **{weight: int(rng.integers(0, 10))})
    return G


NX_SHAPES = [
    # seed, kind, n, p, labels, weight attribute
    (11, nx.DiGraph, 20, 0.15, "int", "weight"),
    (12, nx.Graph, 30, 0.08, "str", "weight"),
    (13, nx.MultiDiGraph, 15, 0.2, "int", "cost"),
    (14, nx.MultiGraph, 25, 0.1, "str", "weight"),
    (15, nx.DiGraph, 40, 0.05, "str", "cost"),
]


@pytest.mark.parametrize("seed, kind, n, p, labels, attr", NX_SHAPES)
def test_networkx_equals_dijkstra(seed, kind, n, p, labels, attr):
    print(f"seed={seed} kind={kind.__name__} n={n} p={p} labels={labels} weight={attr!r}")
    G = random_nx(seed, kind, n, p, labels, attr)
    nodes = list(G.nodes)
    rng = np.random.default_rng(seed)
    for s in [nodes[i] for i in rng.choice(len(nodes), 4, replace=False)] + [nodes[-1]]:
        want = nx.single_source_dijkstra_path_length(G, s, weight=attr)
        got = pathctl.sssp(G, s, weight=attr, engine="cpu")
        assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == want, \
            f"seed={seed} source={s!r}"
        hops = nx.single_source_shortest_path_length(G, s)
        got = pathctl.sssp(G, s, weight=None)
        assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == hops, \
            f"seed={seed} source={s!r}"
    # Every node is a vertex, in id order; the matrix holds networkx's answer.
    D, ids = pathctl.distance_matrix(G, weight=attr, unreachable="mask")
    assert ids.tolist() == sorted(nodes)
    want = dict(nx.all_pairs_dijkstra_path_length(G, weight=attr))
    full = np.array([[want[u].get(v, np.inf) for v in ids] for u in ids], dtype=np.float64)
    np.testing.assert_array_equal(as_inf(D), full, err_msg=f"seed={seed}")
    u, v = nodes[0], max(want[nodes[0]], key=lambda x: (want[nodes[0]][x], str(x)))
    d, walk = pathctl.path(G, u, v, weight=attr)
    assert d == nx.dijkstra_path_length(G, u, v, weight=attr) and walk[0] == u and walk[-1] == v


def test_undirected_networkx_graph_is_undirected():
    """An nx.Graph is undirected whatever directed= says (its edges have no
    direction to follow); a DiGraph with directed=False is read both ways,
    parallel arcs keeping the smaller weight."""
    G = nx.Graph()
    G.add_weighted_edges_from([(3, 1, 2), (1, 2, 5)])
    for directed in (True, False):
        got = pathctl.sssp(G, 2, directed=directed)
        assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == \
            {2: 0, 1: 5, 3: 7}
    H = nx.DiGraph()
    H.add_weighted_edges_from([(1, 2, 5), (2, 1, 3), (2, 3, 1)])
    got = pathctl.sssp(H, 3, directed=False)
    U = nx.Graph()
    U.add_weighted_edges_from([(1, 2, 3), (2, 3, 1)])
    assert dict(zip(got.column("target").to_pylist(), got.column("distance").to_pylist())) == \
        nx.single_source_dijkstra_path_length(U, 3)
    assert pathctl.sssp(H, 3).num_rows == 1  # directed: 3 reaches only itself


def test_graph_objects_refuse_what_they_cannot_mean():
    G = nx.grid_2d_graph(2, 2)  # tuple labels
    with pytest.raises(pathctl.InvalidInputError, match="convert_node_labels_to_integers"):
        pathctl.apsp(G)
    M = sp.csr_matrix(np.ones((2, 3)))
    with pytest.raises(pathctl.InvalidInputError, match="square"):
        pathctl.apsp(M)
    with pytest.raises(pathctl.UsageError, match="src_col='a': a scipy.sparse matrix has no columns"):
        pathctl.apsp(sp.csr_matrix(np.eye(2)), src_col="a")
    with pytest.raises(pathctl.UsageError, match="vertices=: a networkx graph names its own"):
        pathctl.apsp(nx.path_graph(3), vertices=[7])
    with pytest.raises(pathctl.UsageError, match="weight='cost' names the weight attribute of a networkx"):
        pathctl.apsp(pa.table({"src": [1], "dst": [2], "cost": [3]}), weight="cost")
    with pytest.raises(pathctl.UsageError, match="stored values"):
        pathctl.apsp(sp.csr_matrix(np.eye(2)), weight=None)
    G = nx.DiGraph()
    G.add_edge(1, 2, weight=float("nan"))
    with pytest.raises(pathctl.InvalidInputError):
        pathctl.apsp(G)


def test_tables_import_neither_scipy_nor_networkx():
    """Telling a graph object from a table looks at the type's module
    name: a table or a path imports neither library."""
    code = (
        "import os, sys, pyarrow as pa, pandas as pd, pathctl\n"
        "pathctl.apsp(pa.table({'src': [1, 2], 'dst': [2, 3]}))\n"
        "pathctl.sssp(pd.DataFrame({'src': [1, 2], 'dst': [2, 3]}), 1)\n"
        "bad = [m for m in ('scipy', 'networkx') if m in sys.modules]\n"
        "print('imported:', bad, flush=True)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(REPO / "python"))
    assert proc.returncode == 0, proc.stderr
