"""apsp(..., out="dir/"): the result as a partitioned Parquet dataset,
returned as a pyarrow.dataset.Dataset, against the one-file result; a
killed run's partial dataset read by pyarrow.dataset, and resume=True."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

import pathctl
from conftest import cli, write_arrow

EDGES = pa.table({"src": [1, 2, 3, 1, 4, 5, 7], "dst": [2, 3, 1, 4, 5, 6, 6],
                  "weight": [1.5, 2.25, 1.0, 7.0, 1.0, 0.5, 2.0]})
STRING_EDGES = pa.table({"src": ["a/b", "x=y", "50%", "q?", "a/b"], "dst": ["x=y", "50%", "q?", "a/b", "ü"],
                         "weight": [1, 2, 3, 4, 5]})


def same_table(got: pa.Table, want: pa.Table) -> None:
    assert got.schema.equals(want.schema, check_metadata=False), (got.schema, want.schema)
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("layout", ["pairs", "matrix", "stats"])
@pytest.mark.parametrize("partition_by", [None, "source"])
@pytest.mark.parametrize("edges", [EDGES, STRING_EDGES], ids=["int", "string"])
def test_dataset_equals_the_table(tmp_path, edges, layout, partition_by):
    want = pathctl.apsp(edges, layout=layout, engine="cpu")
    got = pathctl.apsp(edges, layout=layout, engine="cpu", out=tmp_path / "ds", partition_by=partition_by,
                       dataset_block=None if partition_by else 2)
    assert isinstance(got, ds.Dataset)
    same_table(got.to_table(), want)
    files = sorted(os.path.relpath(f, tmp_path / "ds") for f in got.files)
    prefix = "source=" if partition_by else "source_block="
    assert files and all(f.startswith(prefix) and f.endswith("/part-0.parquet") for f in files), files
    if layout == "matrix":
        assert (tmp_path / "ds" / "_vertices.parquet").exists()


def test_source_partitions_filter_by_source(tmp_path):
    want = pathctl.apsp(STRING_EDGES, engine="cpu")
    got = pathctl.apsp(STRING_EDGES, engine="cpu", out=str(tmp_path / "ds") + "/", partition_by="source")
    flt = ds.field("source") == "x=y"
    # The partition's value, escaped in the path, decodes to the id: the
    # filter keeps one file.
    assert [os.path.basename(os.path.dirname(f.path)) for f in got.get_fragments(filter=flt)] == ["source=x%3Dy"]
    same_table(got.to_table(filter=flt), want.filter(pc.equal(want["source"], "x=y")))


def test_killed_run_reads_and_resumes(tmp_path):
    edges = write_arrow(EDGES, tmp_path / "edges.arrow")
    want = pathctl.apsp(edges, engine="cpu")
    out = tmp_path / "ds"
    # The binary kills itself in the middle of block 2 (of 4), as SIGKILL
    # from outside would end it (the crash tests' hidden flag).
    proc = cli(["run", "--engine", "cpu", "--algo", "auto", "--dataset-block", "2", "--dataset-fault", "kill:part:2",
                "-o", str(out) + "/", edges], check=False)
    assert proc.returncode == -9, proc.stderr
    # What pyarrow.dataset discovers reads whole: the blocks complete, no
    # temporary file, no row twice.
    partial = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    assert 0 < partial.num_rows < want.num_rows
    assert partial["source_block"].unique().to_pylist() == [0, 1]
    rows = [tuple(r.values()) for r in partial.drop_columns(["source_block"]).to_pylist()]
    assert len(set(rows)) == len(rows) and set(rows) <= {tuple(r.values()) for r in want.to_pylist()}
    got = pathctl.apsp(edges, engine="cpu", out=out, resume=True, dataset_block=2)
    same_table(got.to_table(), want)
    assert not [f for _, _, names in os.walk(out) for f in names if ".tmp-" in f or f == "_pathctl.partial.json"]
    # Resuming the complete dataset does nothing and returns it.
    same_table(pathctl.apsp(edges, engine="cpu", out=out, resume=True).to_table(), want)


def test_resume_refuses_another_query(tmp_path):
    out = tmp_path / "ds"
    pathctl.apsp(EDGES, engine="cpu", out=out)
    with pytest.raises(pathctl.UsageError, match=r'query\.layout is "pairs" there, "stats" here'):
        pathctl.apsp(EDGES, engine="cpu", layout="stats", out=out, resume=True)


def test_non_empty_directory_needs_overwrite(tmp_path):
    out = tmp_path / "ds"
    pathctl.apsp(EDGES, engine="cpu", out=out)
    with pytest.raises(pathctl.UsageError, match="not empty.*--overwrite"):
        pathctl.apsp(EDGES, engine="cpu", layout="stats", out=out)
    got = pathctl.apsp(EDGES, engine="cpu", layout="stats", out=out, overwrite=True)
    same_table(got.to_table(), pathctl.apsp(EDGES, engine="cpu", layout="stats"))


def test_dataset_keywords(tmp_path):
    with pytest.raises(pathctl.UsageError, match=r'resume=\.\.\. is an option of a dataset result: give out="dir/"'):
        pathctl.apsp(EDGES, resume=True)
    with pytest.raises(pathctl.UsageError, match="partition_by="):
        pathctl.apsp(EDGES, partition_by="source")
    with pytest.raises(TypeError, match="resume='yes'"):
        pathctl.apsp(EDGES, out=tmp_path / "a", resume="yes")
    with pytest.raises(pathctl.UsageError, match="partition_by='target'"):
        pathctl.apsp(EDGES, out=tmp_path / "b", partition_by="target")
    with pytest.raises(pathctl.UsageError, match="give one"):
        pathctl.apsp(EDGES, out=tmp_path / "c", resume=True, overwrite=True)
    with pytest.raises(pathctl.UsageError, match="dataset_block=2.5"):
        pathctl.apsp(EDGES, out=tmp_path / "d", dataset_block=2.5)
    assert not any((tmp_path / name).exists() for name in "abcd")
