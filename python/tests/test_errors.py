"""Bad input, bad options and a missing binary become pathctl exceptions
with the engine's message."""

from __future__ import annotations

import glob
import os
import tempfile

import pyarrow as pa
import pytest

import pathctl
from conftest import child_pids


@pytest.fixture(autouse=True)
def no_leftovers():
    """No test leaves a process or a temporary directory behind."""
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "pathctl-*")))
    yield
    after = set(glob.glob(os.path.join(tempfile.gettempdir(), "pathctl-*")))
    assert after <= before, f"temporary files left: {sorted(after - before)}"
    assert child_pids() == []


def edges(**columns):
    base = {"src": pa.array([1, 2, 3], pa.int64()), "dst": pa.array([2, 3, 1], pa.int64()),
            "weight": pa.array([1, 2, 3], pa.int32())}
    base.update(columns)
    return pa.table({k: v for k, v in base.items() if v is not None})


def test_missing_binary_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATHCTL_BIN", str(tmp_path / "no-such-pathctl"))
    with pytest.raises(pathctl.BinaryNotFoundError, match="PATHCTL_BIN") as info:
        pathctl.apsp(edges())
    assert "go build" in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    monkeypatch.delenv("PATHCTL_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pathctl.BinaryNotFoundError, match="not found on PATH"):
        pathctl.sssp(edges(), 1)
    with pytest.raises(pathctl.BinaryNotFoundError):
        pathctl.apsp(edges(), binary=str(tmp_path / "nope"))


def test_missing_column():
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(dst=None))
    assert info.value.exit_code == 3
    assert "dst" in info.value.message
    with pytest.raises(pathctl.InvalidInputError, match="nope"):
        pathctl.apsp(edges(), src_col="nope")


def test_null_id_and_nan_weight():
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(src=pa.array([1, None, 3], pa.int64())))
    assert "src" in info.value.message
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(edges(weight=pa.array([1.0, float("nan"), 2.0])))
    assert "weight" in info.value.message


def test_negative_weight_names_bellman_ford():
    bad = edges(weight=pa.array([1, -2, 3], pa.int32()))
    with pytest.raises(pathctl.NegativeWeightError, match="bellman-ford") as info:
        pathctl.apsp(bad, algorithm="dijkstra")
    assert info.value.exit_code == 5
    assert not isinstance(info.value, pathctl.NegativeCycleError)


def test_negative_cycle():
    # 1 -> 2 -> 3 -> 1 weighs 1 - 5 + 3 = -1.
    bad = edges(weight=pa.array([1, -5, 3], pa.int32()))
    with pytest.raises(pathctl.NegativeCycleError) as info:
        pathctl.apsp(bad, algorithm="bellman-ford")
    assert info.value.exit_code == 5
    assert "cycle" in info.value.message


def test_negative_weights_without_cycle_under_bellman_ford():
    ok = edges(weight=pa.array([1, -2, 3], pa.int32()))
    table = pathctl.sssp(ok, 1, algorithm="bellman-ford")
    got = dict(zip(table.column("target").to_pylist(), table.column("distance").to_pylist()))
    assert got == {1: 0, 2: 1, 3: -1}


def test_usage_errors():
    with pytest.raises(pathctl.UsageError) as info:
        pathctl.apsp(edges(), algorithm="quantum")
    assert info.value.exit_code == 2
    assert "quantum" in info.value.message
    assert isinstance(info.value, pathctl.InvalidInputError)
    with pytest.raises(pathctl.UsageError, match="layout"):
        pathctl.apsp(edges(), layout="cube")
    with pytest.raises(TypeError, match="colour"):
        pathctl.apsp(edges(), colour="red")


def test_empty_sources():
    with pytest.raises(pathctl.UsageError, match="sources=None"):
        pathctl.apsp(edges(), sources=[])


def test_unknown_source():
    with pytest.raises(pathctl.InvalidInputError, match="99"):
        pathctl.apsp(edges(), sources=[1, 99])
    with pytest.raises(pathctl.InvalidInputError, match="99"):
        pathctl.sssp(edges(), 99)


def test_gpu_engine_where_there_is_none():
    if pathctl.gpu_available():
        table = pathctl.apsp(edges(), engine="gpu")
        assert table.num_rows == 9
        return
    with pytest.raises(pathctl.EngineUnavailableError) as info:
        pathctl.apsp(edges(), engine="gpu")
    assert info.value.exit_code == 4
    assert info.value.message


def test_bad_files(tmp_path):
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(str(tmp_path / "missing.parquet"))
    assert "missing.parquet" in info.value.message
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet at all")
    with pytest.raises(pathctl.InvalidInputError, match="corrupt.parquet"):
        pathctl.apsp(str(corrupt))


def test_failing_reader_is_the_reported_cause():
    schema = edges().schema

    def batches():
        yield edges().to_batches()[0]
        raise RuntimeError("upstream source went away")

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(pathctl.InvalidInputError, match="upstream source went away"):
        pathctl.apsp(reader)


def test_error_carries_stderr():
    with pytest.raises(pathctl.PathctlError) as info:
        pathctl.apsp(edges(dst=None))
    assert "pathctl: " in info.value.stderr
