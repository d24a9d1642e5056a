"""distance_matrix's dtype: inf for unreachable pairs by default, float32
where every distance is exact in it, else float64, as
scipy.sparse.csgraph.shortest_path answers; an integer dtype keeps the
sentinel. Random graphs of several components, isolated vertices, zero
weights and float weights, through the module function (scipy.sparse and
DataFrame inputs) and a resident Graph."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

import pathctl


def random_graph(seed: int, kind: str, n: int = 40):
    """A scipy COO matrix of n vertices cut into random components (some
    vertices isolated), parallel entries summed away by the caller, with
    weights of ``kind``: "int" (0..9, zeros included), "heavy" (integers
    up to 10^6: (n-1)·max is past 2^24), "float64" and "float32" (zeros
    included)."""
    rng = np.random.default_rng(seed)
    comp = rng.integers(0, 4, n)
    comp[rng.choice(n, 3, replace=False)] = -1  # isolated
    src, dst = [], []
    for c in range(4):
        members = np.flatnonzero(comp == c)
        if len(members) < 2:
            continue
        m = 3 * len(members)
        src += list(rng.choice(members, m))
        dst += list(rng.choice(members, m))
    src, dst = np.array(src), np.array(dst)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # One entry per (src, dst): scipy.sparse would add parallel entries up.
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    src, dst = pairs[:, 0], pairs[:, 1]
    m = len(src)
    if kind == "int":
        w = rng.integers(0, 10, m).astype(np.int64)
    elif kind == "heavy":
        w = rng.integers(1, 10**6, m).astype(np.int64)
        w[0] = 10**6 - 1
    elif kind == "float64":
        w = rng.uniform(0, 10, m)
        w[rng.random(m) < 0.1] = 0.0
    else:
        w = rng.uniform(0, 10, m).astype(np.float32)
        w[rng.random(m) < 0.1] = 0.0
    return coo_matrix((w, (src, dst)), shape=(n, n)).tocsr()


def frame_of(M) -> pd.DataFrame:
    coo = M.tocoo()
    return pd.DataFrame({"src": coo.row.astype(np.int64), "dst": coo.col.astype(np.int64), "weight": coo.data})


def expected_dtype(kind: str):
    return {"int": np.float32, "heavy": np.float64, "float64": np.float64, "float32": np.float32}[kind]


def assert_scipy(D, want, kind):
    if kind == "float32":  # the engine sums in float32, scipy in float64
        np.testing.assert_allclose(D, want, rtol=1e-5)
    elif kind == "float64":
        np.testing.assert_allclose(D, want, rtol=1e-12)
    else:
        np.testing.assert_array_equal(D, want)
    np.testing.assert_array_equal(np.isinf(D), np.isinf(want))


@pytest.mark.parametrize("kind", ["int", "heavy", "float64", "float32"])
@pytest.mark.parametrize("directed", [True, False])
def test_default_dtype_is_scipys(kind, directed):
    M = random_graph(11 + len(kind), kind)
    want = shortest_path(M, directed=directed)
    assert np.isinf(want).any() and (M.data == 0).any() or kind == "heavy"
    D, ids = pathctl.distance_matrix(M, directed=directed, engine="cpu")
    assert D.dtype == expected_dtype(kind)
    assert ids.tolist() == list(range(M.shape[0]))
    assert_scipy(D, want, kind)
    # The same edges as a table, the vertex set given.
    T, _ = pathctl.distance_matrix(frame_of(M), directed=directed, vertices=range(M.shape[0]), engine="cpu")
    assert T.dtype == D.dtype
    np.testing.assert_array_equal(T, D)
    # float64 asked for: the same values, wider.
    F, _ = pathctl.distance_matrix(M, directed=directed, dtype=np.float64, engine="cpu")
    assert F.dtype == np.float64
    assert_scipy(F, want, kind)


@pytest.mark.parametrize("kind", ["int", "heavy"])
def test_integer_dtype_keeps_the_sentinel(kind):
    M = random_graph(23, kind)
    want = shortest_path(M)
    for dtype in (np.int32, np.int64):
        D, _ = pathctl.distance_matrix(M, dtype=dtype, engine="cpu")
        assert D.dtype == dtype
        np.testing.assert_array_equal(D, with_sentinel(want, dtype, np.iinfo(dtype).max))
        S, _ = pathctl.distance_matrix(M, dtype=dtype, unreachable=-1, engine="cpu")
        np.testing.assert_array_equal(S, with_sentinel(want, dtype, -1))


def with_sentinel(want, dtype, sentinel):
    """scipy's answer as integers of dtype, sentinel where it is inf."""
    out = np.full(want.shape, sentinel, dtype=dtype)
    finite = np.isfinite(want)
    out[finite] = want[finite].astype(dtype)
    return out


def test_hop_counts_and_a_chain():
    M = random_graph(5, "int")
    D, _ = pathctl.distance_matrix(M, unweighted=True, engine="cpu")
    assert D.dtype == np.float32
    np.testing.assert_array_equal(D, shortest_path(M, unweighted=True))
    # The issue's chain: the mean of a matrix with unreachable pairs is inf,
    # not 715827882.8 of int32 sentinels.
    chain = pd.DataFrame({"src": [0, 1], "dst": [1, 2], "weight": [1, 1]})
    C, _ = pathctl.distance_matrix(chain)
    assert C.mean() == np.inf
    assert np.isfinite(C[np.triu_indices(3)]).all()


def test_dtypes_that_cannot_hold_the_distances_are_refused():
    heavy = random_graph(3, "heavy")
    with pytest.raises(pathctl.UsageError, match=r'dtype="float32": .*2\^24.*use float64'):
        pathctl.distance_matrix(heavy, dtype=np.float32)
    floats = random_graph(3, "float64")
    with pytest.raises(pathctl.UsageError, match=r'dtype="int32": .*use float32 or float64'):
        pathctl.distance_matrix(floats, dtype="int32")
    with pytest.raises(pathctl.UsageError, match=r'dtype="float32": .*round'):
        pathctl.distance_matrix(floats, dtype=np.float32)
    with pytest.raises(pathctl.UsageError, match=r"dtype=.*want np.float32"):
        pathctl.distance_matrix(floats, dtype=np.float16)
    # A cutoff bounds the distances: float32 holds them again.
    D, _ = pathctl.distance_matrix(heavy, dtype=np.float32, cutoff=1000)
    want = shortest_path(heavy)
    np.testing.assert_array_equal(D, np.where(want <= 1000, want, np.inf))


@pytest.mark.parametrize("kind", ["int", "heavy", "float64"])
def test_resident_graph_has_the_same_dtype(kind):
    M = random_graph(31, kind)
    edges = frame_of(M)
    want = shortest_path(M, directed=False)
    with pathctl.load(edges, directed=False, engine="cpu") as g:
        ids = g.vertex_ids().astype(int)
        sub = want[np.ix_(ids, ids)]  # the vertices that have edges
        D, got_ids = g.distance_matrix()
        assert D.dtype == expected_dtype(kind)
        assert got_ids.tolist() == ids.tolist()
        assert_scipy(D, sub, kind)
        F, _ = g.distance_matrix(dtype=np.float64)
        assert F.dtype == np.float64
        assert_scipy(F, sub, kind)
        if kind == "float64":
            with pytest.raises(pathctl.UsageError, match=r'dtype="int32": '):
                g.distance_matrix(dtype=np.int32)
        else:
            I, _ = g.distance_matrix(dtype=np.int32, unreachable=-7)
            assert I.dtype == np.int32
            np.testing.assert_array_equal(I, with_sentinel(sub, np.int32, -7))


@pytest.mark.parametrize("handoff", [{"PATHCTL_RESULT_PEER": "off"}, {"PATHCTL_HANDOFF": "pipe"}, {}],
                         ids=["memfd", "pipe", "peer"])
def test_every_handoff_and_narrowing_converts(handoff, monkeypatch):
    """The matrix written into a memfd, streamed through a pipe (several
    blocks: a small mem), or written into this process, and narrowed to
    sources × targets: float32 with inf, equal to scipy's."""
    for key, value in handoff.items():
        monkeypatch.setenv(key, value)
    M = random_graph(47, "int", n=300)
    want = shortest_path(M)
    D, _ = pathctl.distance_matrix(M, engine="cpu", mem=1 << 18)
    assert D.dtype == np.float32
    np.testing.assert_array_equal(D, want)
    rows, cols = [5, 0, 299, 17], [3, 299, 1]
    N, _ = pathctl.distance_matrix(M, sources=rows, targets=cols, engine="cpu")
    assert N.dtype == np.float32
    np.testing.assert_array_equal(N, want[np.ix_(rows, cols)])
    out = np.empty_like(D)
    assert pathctl.distance_matrix(M, engine="cpu", out=out)[0] is out
    np.testing.assert_array_equal(out, want)
