"""Every kind of edges input gives the CLI's answer."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import pathctl
from conftest import assert_tables_equal, cli_result, random_edges, write_arrow


class CStreamOnly:
    """An object that offers nothing but the Arrow PyCapsule stream protocol."""

    def __init__(self, table: pa.Table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


@pytest.fixture(scope="module")
def edges() -> pa.Table:
    return random_edges(31, 40, 130)


@pytest.fixture(scope="module")
def want(edges, tmp_path_factory) -> pa.Table:
    d = tmp_path_factory.mktemp("want")
    return cli_result(write_arrow(edges, d / "edges.arrow"), d)


def _stream_file(table: pa.Table, path) -> str:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return str(path)


def make_input(kind: str, edges: pa.Table, tmp_path):
    if kind == "table":
        return edges
    if kind == "batches":
        return pa.Table.from_batches(edges.to_batches(max_chunksize=17))
    if kind == "record_batch":
        return edges.combine_chunks().to_batches()[0]
    if kind == "reader":
        return pa.RecordBatchReader.from_batches(edges.schema, edges.to_batches(max_chunksize=9))
    if kind == "pandas":
        return edges.to_pandas()
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(edges)
    if kind == "polars_lazy":
        import polars as pl

        return pl.from_arrow(edges).lazy()
    if kind == "c_stream":
        return CStreamOnly(edges)
    if kind == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.register("e", edges)
        return con.sql("select src, dst, weight from e")
    if kind == "parquet":
        pq.write_table(edges, tmp_path / "edges.parquet")
        return str(tmp_path / "edges.parquet")
    if kind == "arrow":
        write_arrow(edges, tmp_path / "edges.arrow")
        return tmp_path / "edges.arrow"  # an os.PathLike, not a str
    if kind == "arrows":
        return _stream_file(edges, tmp_path / "edges.arrows")
    if kind == "csv":
        pcsv.write_csv(edges, tmp_path / "edges.csv")
        return str(tmp_path / "edges.csv")
    raise AssertionError(kind)


KINDS = ["table", "batches", "record_batch", "reader", "pandas", "polars", "polars_lazy",
         "c_stream", "duckdb", "parquet", "arrow", "arrows", "csv"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_input_kind(kind, edges, want, tmp_path):
    got = pathctl.apsp(make_input(kind, edges, tmp_path))
    # CSV ids and weights are inferred back as int64: compare values.
    if kind == "csv":
        got = got.cast(want.schema)
    assert_tables_equal(got, want)


def test_large_input_through_pipes_does_not_deadlock():
    # Enough rows that stdin and stdout both overflow a pipe buffer (64 KiB)
    # many times: the feeder thread must keep writing while we read.
    edges = random_edges(32, 2000, 60000)
    table = pathctl.apsp(edges, sources=[3, 10, 17], layout="pairs")
    assert table.num_rows > 0
    assert set(table.column("source").to_pylist()) <= {3, 10, 17}


def test_bad_edges_type():
    with pytest.raises(TypeError, match="edges must be"):
        pathctl.apsp(42)


@pytest.mark.parametrize("id_type", ["string", "large_string", "string_view", "dictionary"])
def test_string_id_encodings(id_type, tmp_path):
    edges = random_edges(33, 30, 90, ids="string")
    want = cli_result(write_arrow(edges, tmp_path / "edges.arrow"), tmp_path)
    if id_type == "dictionary":
        cast = pa.table({"src": edges.column("src").dictionary_encode(),
                         "dst": edges.column("dst").dictionary_encode(),
                         "weight": edges.column("weight")})
    else:
        t = getattr(pa, id_type)()
        cast = edges.cast(pa.schema([("src", t), ("dst", t), ("weight", pa.int32())]))
    got = pathctl.apsp(cast)
    assert pa.types.is_string(got.schema.field("source").type) or \
        pa.types.is_large_string(got.schema.field("source").type)
    assert_tables_equal(got.cast(want.schema), want)


@pytest.fixture
def spaced_ids() -> pa.Table:
    """String ids that differ only by spaces, or have no characters: " a"
    and "a" are two vertices, "" is a third (as every edge reader keeps
    them)."""
    return pa.table({"src": [" a", "a", "", "x\ry"], "dst": ["b", "b", " a", "b"],
                     "weight": pa.array([1, 5, 2, 4], pa.int32())})


def rows(table: pa.Table) -> set:
    return set(zip(*(table.column(c).to_pylist() for c in ("source", "target", "distance"))))


@pytest.mark.parametrize("handoff", ["auto", "pipe"])
def test_ids_reach_the_binary_verbatim(spaced_ids, monkeypatch, handoff):
    """sources and targets cross to the binary one id per line, exactly as
    given: " a" is not "a" and "" is a vertex like any other (the sources
    file is a memfd or, with pipes, a temporary file)."""
    monkeypatch.setenv("PATHCTL_HANDOFF", handoff)
    assert rows(pathctl.apsp(spaced_ids, sources=[" a"])) == {(" a", " a", 0), (" a", "b", 1)}
    assert rows(pathctl.apsp(spaced_ids, sources=[""])) == {("", "", 0), ("", " a", 2), ("", "b", 3)}
    assert rows(pathctl.apsp(spaced_ids, sources=["a", ""], targets=[" a"])) == {("", " a", 2)}
    assert rows(pathctl.apsp(spaced_ids, sources=["x\ry"])) == {("x\ry", "x\ry", 0), ("x\ry", "b", 4)}
    assert rows(pathctl.sssp(spaced_ids, " a")) == {(" a", " a", 0), (" a", "b", 1)}
    D, ids = pathctl.distance_matrix(spaced_ids, sources=["", " a"], unreachable=-1)
    assert ids.tolist() == ["", " a", "a", "b", "x\ry"]
    assert D.tolist() == [[0, 2, -1, 3, -1], [-1, 0, -1, 1, -1]]
    with pytest.raises(pathctl.InvalidInputError, match='"a "'):
        pathctl.apsp(spaced_ids, sources=["a "])  # not trimmed into "a"


@pytest.mark.parametrize("bad", ["a\nb", "a\r", "\n", "z" * 5000 + "\n"])
def test_id_with_a_line_break_is_refused(spaced_ids, bad):
    """An id that cannot be one line of the id file is refused by name (cut
    short), before any process starts, rather than becoming two ids."""
    for call in (lambda: pathctl.apsp(spaced_ids, sources=[" a", bad]),
                 lambda: pathctl.apsp(spaced_ids, targets=[bad])):
        with pytest.raises(ValueError, match="line break") as info:
            call()
        assert isinstance(info.value, pathctl.InvalidInputError)
        assert repr(bad)[:20] in info.value.message
        assert len(info.value.message) < 200
