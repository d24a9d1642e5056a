"""distance_matrix: values, vertex ids, unreachable pairs, and no copy."""

from __future__ import annotations

import mmap

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from conftest import cli_result, oracle, random_edges, read_arrow, write_arrow


def base_chain(arr):
    out = []
    obj = arr
    while obj is not None:
        out.append(obj)
        obj = getattr(obj, "base", None) if not isinstance(obj, memoryview) else obj.obj
    return out


@pytest.mark.parametrize("weights", ["int", "float", "none"])
@pytest.mark.parametrize("directed", [True, False])
def test_matrix_matches_scipy(weights, directed):
    edges = random_edges(51, 50, 120, weights=weights)
    want, vertices = oracle(edges, directed=directed)
    D, ids = pathctl.distance_matrix(edges, directed=directed)
    assert ids.tolist() == vertices
    assert D.shape == (len(vertices), len(vertices))
    assert isinstance(D, np.ndarray) and not isinstance(D, np.ma.MaskedArray)
    if weights == "float":
        assert D.dtype == np.float64
        np.testing.assert_allclose(D, want, rtol=1e-12)
    else:
        # scipy's convention by default: inf where unreachable, float32
        # where every distance is exact in it (50 vertices, small weights).
        assert D.dtype == np.float32
        np.testing.assert_array_equal(D, want)
        # An integer dtype keeps the sentinel: the type's maximum, no mask,
        # no copy.
        I, _ = pathctl.distance_matrix(edges, directed=directed, dtype=np.int32)
        assert I.dtype == np.int32
        big = np.iinfo(np.int32).max
        np.testing.assert_array_equal(I, np.where(np.isfinite(want), want, big))
        M, _ = pathctl.distance_matrix(edges, directed=directed, dtype=np.int32, unreachable="mask")
        assert isinstance(M, np.ma.MaskedArray)
        np.testing.assert_array_equal(M.mask, ~np.isfinite(want))
        np.testing.assert_array_equal(M.filled(-1), np.where(np.isfinite(want), want, -1))
        assert M.fill_value == big
        S, _ = pathctl.distance_matrix(edges, directed=directed, dtype=np.int32, unreachable=-1)
        np.testing.assert_array_equal(S, np.where(np.isfinite(want), want, -1))


def test_matrix_equals_cli_file(tmp_path):
    edges = random_edges(52, 40, 100, ids="string")
    path = write_arrow(edges, tmp_path / "edges.arrow")
    want = cli_result(path, tmp_path, "--layout", "matrix", "--vertices-out", tmp_path / "v.arrow")
    want_ids = read_arrow(tmp_path / "v.arrow").column("vertex").to_pylist()
    D, ids = pathctl.distance_matrix(edges, unreachable="mask")
    assert ids.tolist() == want_ids
    rows = want.column("distance").to_pylist()
    assert D.tolist(fill_value=None) == rows  # nulls (unreachable) line up with the mask


def test_matrix_is_a_view_of_the_arrow_buffer():
    edges = random_edges(53, 60, 200, weights="float")
    D, _ = pathctl.distance_matrix(edges)
    assert not D.flags.owndata
    assert any(isinstance(b, (pa.Buffer, mmap.mmap)) for b in base_chain(D)), base_chain(D)

    # The same through matrix_from_table, where the test holds the table and
    # checks the memory itself.
    table = pathctl.apsp(edges, layout="matrix")
    assert table.column("distance").num_chunks == 1
    M = pathctl.matrix_from_table(table)
    values = table.column("distance").chunk(0).values
    arrow_view = np.frombuffer(values.buffers()[1], dtype=np.float64)
    assert np.shares_memory(M, arrow_view)
    assert M.__array_interface__["data"][0] == values.buffers()[1].address + values.offset * 8


def test_integer_matrix_views_and_sentinels():
    edges = random_edges(54, 60, 150)
    table = pathctl.apsp(edges, layout="matrix")
    values = table.column("distance").chunk(0).values
    assert values.null_count > 0  # the random graph has unreachable pairs
    null = values.is_null().to_numpy(zero_copy_only=False)
    M = pathctl.matrix_from_table(table, unreachable="mask")
    assert np.shares_memory(M.data, np.frombuffer(values.buffers()[1], dtype=np.int32))
    np.testing.assert_array_equal(M.mask.ravel(), null)
    # A sentinel goes under Arrow's nulls only: the table reads the same.
    before = table.column("distance").to_pylist()
    S = pathctl.matrix_from_table(table, unreachable=-7)
    assert (S.ravel()[null] == -7).all() and (S.ravel()[~null] >= 0).all()
    assert table.column("distance").to_pylist() == before
    with pytest.raises(pathctl.UsageError, match="int32"):
        pathctl.matrix_from_table(table, unreachable=np.inf)
    with pytest.raises(pathctl.UsageError, match="fit"):
        pathctl.matrix_from_table(table, unreachable=1 << 40)
    with pytest.raises(pathctl.UsageError, match="unreachable"):
        pathctl.matrix_from_table(table, unreachable="nan")


def test_float_sentinel_leaves_the_table_alone():
    edges = random_edges(57, 40, 60, weights="float")
    table = pathctl.apsp(edges, layout="matrix")
    inf = np.isinf(pathctl.matrix_from_table(table))
    assert inf.any()
    S = pathctl.matrix_from_table(table, unreachable=-1.0)
    assert (S[inf] == -1).all()
    assert np.isinf(pathctl.matrix_from_table(table)).sum() == inf.sum()
    D, _ = pathctl.distance_matrix(edges, unreachable=-1.0)
    np.testing.assert_array_equal(D, S)


def test_sources_pick_rows_in_order():
    edges = random_edges(55, 30, 90, weights="float")
    full, ids = pathctl.distance_matrix(edges)
    pick = [ids[7], ids[2], ids[20]]
    D, ids2 = pathctl.distance_matrix(edges, sources=pick)
    assert ids2.tolist() == ids.tolist()
    np.testing.assert_array_equal(D, full[[7, 2, 20]])


def test_several_batches_are_joined(monkeypatch):
    # A tiny memory budget makes the engine emit several blocks; through a
    # pipe they stay batches of their own (into a memfd the binary writes
    # one), and the matrix is still whole and right (joined with one copy).
    monkeypatch.setenv("PATHCTL_HANDOFF", "pipe")
    edges = random_edges(56, 40, 120)
    table = pathctl.apsp(edges, layout="matrix", mem=1 << 10)
    assert table.column("distance").num_chunks > 1
    want, _ = oracle(edges)
    M = pathctl.matrix_from_table(table, unreachable=-1)
    np.testing.assert_array_equal(M, np.where(np.isfinite(want), want, -1))


def test_empty_matrix_table():
    # A run with no sources: zero rows of a fixed-size list.
    empty = pa.table({"source": pa.array([], pa.int64()),
                      "distance": pa.array([], pa.list_(pa.float64(), 4))})
    M = pathctl.matrix_from_table(empty)
    assert M.shape == (0, 4)


def test_empty_graph():
    empty = pa.table({"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64())})
    D, ids = pathctl.distance_matrix(empty)
    assert D.shape == (0, 0)
    assert len(ids) == 0
