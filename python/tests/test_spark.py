"""pathctl.spark on local[2] against the CLI's result."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pathctl
import pathctl.spark
from conftest import assert_tables_equal, cli_result, random_edges, write_arrow
from test_flight import Server


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # stay on loopback
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("pathctl-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "1g")
               .config("spark.executorEnv.PATHCTL_BIN", os.environ["PATHCTL_BIN"])
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    d = tmp_path_factory.mktemp("spark")
    edges = random_edges(71, 50, 160)
    return edges, write_arrow(edges, d / "edges.arrow"), d


def to_arrow(df) -> pa.Table:
    return df.toArrow()


def test_spark_default_blocks_one_per_task_slot(spark, graph):
    """Without block_size, the sources go in one block per task slot
    (defaultParallelism, 2 here), and the result is still the CLI's."""
    edges, path, d = graph
    result = pathctl.spark.apsp(spark.createDataFrame(edges), layout="stats")
    assert result.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism == 2
    want = cli_result(path, d, "--layout", "stats").sort_by("source")
    got = to_arrow(result).sort_by("source")
    assert_tables_equal(got.cast(want.schema.remove_metadata()), want.replace_schema_metadata(None),
                        pairs=False)


@pytest.mark.parametrize("layout", ["pairs", "stats"])
def test_spark_apsp_equals_cli(spark, graph, layout):
    edges, path, d = graph
    df = spark.createDataFrame(edges)
    result = pathctl.spark.apsp(df, layout=layout, block_size=13)
    want = cli_result(path, d, "--layout", layout)
    got = to_arrow(result)
    if layout == "stats":
        got = got.sort_by("source")
        want = want.sort_by("source")
    assert_tables_equal(got.cast(want.schema.remove_metadata()), want.replace_schema_metadata(None),
                        pairs=layout == "pairs")
    # One task per block: the sources split into ceil(n / 13) blocks.
    n = len(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
    assert result.rdd.getNumPartitions() == -(-n // 13)


def test_spark_sources_undirected_predecessors(spark, graph):
    edges, path, d = graph
    df = spark.createDataFrame(edges)
    sources = sorted(set(edges.column("dst").to_pylist()))[:9]
    result = pathctl.spark.apsp(df, sources=sources, directed=False, with_predecessors=True, block_size=4)
    want = cli_result(path, d, "--undirected", "--with-predecessors",
                      "--sources", ",".join(map(str, sources)))
    assert_tables_equal(to_arrow(result).cast(want.schema.remove_metadata()),
                        want.replace_schema_metadata(None))


def test_spark_unweighted_string_ids(spark, tmp_path):
    edges = random_edges(72, 30, 90, weights="none", ids="string")
    path = write_arrow(edges, tmp_path / "edges.arrow")
    result = pathctl.spark.apsp(spark.createDataFrame(edges), block_size=64)  # one task
    want = cli_result(path, tmp_path)
    assert_tables_equal(to_arrow(result).cast(want.schema.remove_metadata()),
                        want.replace_schema_metadata(None))


def test_spark_endpoints(spark, graph, tmp_path):
    edges, path, d = graph
    df = spark.createDataFrame(edges)
    servers = [Server(tmp_path / "a"), Server(tmp_path / "b")]
    try:
        result = pathctl.spark.apsp(df, endpoints=[s.uri for s in servers], block_size=10)
        want = cli_result(path, d)
        assert_tables_equal(to_arrow(result).cast(want.schema.remove_metadata()),
                            want.replace_schema_metadata(None))
        # Both endpoints hold the graph and served blocks.
        for s in servers:
            with pathctl.connect(s.uri) as c:
                assert len(c.graphs()) == 1
    finally:
        for s in servers:
            s.stop()


def test_spark_refuses_matrix(spark, graph):
    edges, _, _ = graph
    df = spark.createDataFrame(edges)
    with pytest.raises(pathctl.UsageError, match="matrix"):
        pathctl.spark.apsp(df, layout="matrix")


def test_main_readme_spark_example_without_pyspark_python(tmp_path):
    """The main README's Spark example, as a user runs it: a driver in a
    virtual environment that is not activated, no PYSPARK_PYTHON, and a
    ``python3`` on PATH without pyarrow. Without the helper's fallback to
    the driver's interpreter the executors fail with
    ``No module named 'pyarrow'``."""
    from conftest import REPO
    from test_readme import BLOCK

    code = [b for b in BLOCK.findall((REPO / "README.md").read_text())
            if "pathctl.spark" in b and "SparkSession" in b][0]
    shims = tmp_path / "shims"
    shims.mkdir()
    # python3 on PATH: this Python without its site-packages, so no pyarrow.
    base = getattr(sys, "_base_executable", sys.executable)
    (shims / "python3").write_text(f"#!/bin/sh\nexec '{base}' -S \"$@\"\n")
    (shims / "python3").chmod(0o755)
    probe = subprocess.run([str(shims / "python3"), "-c", "import pyarrow"], capture_output=True)
    assert probe.returncode != 0, "the shim python3 must lack pyarrow for this test to mean anything"
    venv_bin = os.path.dirname(sys.executable)
    path = [str(shims)] + [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and d != venv_bin]
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    env.update(PATH=os.pathsep.join(path), SPARK_LOCAL_IP="127.0.0.1")
    script = tmp_path / "readme_spark.py"
    script.write_text(code + "\nprint('rows', stats.count())\nspark.stop()\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "harmonic" in proc.stdout
    sample = pq.read_table(REPO / "testdata" / "sample.parquet")
    n = len(set(sample.column("src").to_pylist()) | set(sample.column("dst").to_pylist()))
    assert f"rows {n}" in proc.stdout
