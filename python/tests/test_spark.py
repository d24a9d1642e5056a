"""pathctl.spark on local[2] against the CLI's result."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pathctl
import pathctl.spark
from conftest import assert_tables_equal, cli_result, oracle, random_edges, write_arrow
from test_flight import Server
from test_queries import check_paths, expected_pairs, rows_of


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


# --- narrower questions (issue 17) against scipy ------------------------------

def sorted_rows(table, rank=False):
    return sorted(rows_of(table, rank=rank))


def test_spark_targets_cutoff_k(spark, graph):
    """targets, cutoff and k reach every task (three blocks) and give
    scipy's distances in issue 17's shapes: targets keep a source's own row
    when it is a target; a cutoff keeps each source's own row at 0; the k
    nearest leave the source out and rank from 1."""
    edges, _, _ = graph
    dist, vertices = oracle(edges)
    df = spark.createDataFrame(edges)
    sources = vertices[2:12]
    targets = [vertices[-1], vertices[0], sources[1], vertices[20]]
    cutoff = float(np.percentile(dist[np.isfinite(dist)], 30))

    got = to_arrow(pathctl.spark.apsp(df, sources=sources, targets=targets, block_size=4))
    assert sorted_rows(got) == sorted(expected_pairs(dist, vertices, sources, targets))
    assert (sources[1], sources[1], 0.0) in rows_of(got)

    got = to_arrow(pathctl.spark.apsp(df, sources=sources, cutoff=cutoff, block_size=4))
    want = expected_pairs(dist, vertices, sources, cutoff=cutoff)
    assert sorted_rows(got) == sorted(want)
    assert len(want) < len(expected_pairs(dist, vertices, sources))  # the cutoff cut something
    assert all((s, s, 0.0) in want for s in sources)

    got = to_arrow(pathctl.spark.apsp(df, sources=sources, k=3, cutoff=cutoff, block_size=4))
    assert got.column_names == ["source", "target", "distance", "rank"]
    assert sorted_rows(got, rank=True) == sorted(expected_pairs(dist, vertices, sources, cutoff=cutoff, k=3))
    got = to_arrow(pathctl.spark.apsp(df, sources=sources, k=2, targets=targets, block_size=4))
    rows = rows_of(got, rank=True)
    assert sorted(rows) == sorted(expected_pairs(dist, vertices, sources, targets, k=2))
    assert all(s != t for s, t, _, _ in rows)
    assert (sources[1], sources[1]) not in {(s, t) for s, t, _, _ in rows}  # a target, but the source
    for s in sources:
        mine = sorted((r, d) for source, _, d, r in rows if source == s)
        assert [r for r, _ in mine] == list(range(1, len(mine) + 1))  # ranks 1, 2, ...
        assert [d for _, d in mine] == sorted(d for _, d in mine)  # nearest first


def test_spark_reverse(spark, graph):
    """reverse=True: rows (source s, target v, d(v → s)) for each chosen s,
    over blocks, and with k."""
    edges, _, _ = graph
    dist, vertices = oracle(edges)
    df = spark.createDataFrame(edges)
    sources = vertices[5:11]
    want = expected_pairs(dist.T, vertices, sources)
    assert want != expected_pairs(dist, vertices, sources)  # directed: the direction shows
    got = to_arrow(pathctl.spark.apsp(df, sources=sources, reverse=True, block_size=2))
    assert sorted_rows(got) == sorted(want)
    got = to_arrow(pathctl.spark.apsp(df, sources=sources, reverse=True, k=3, block_size=2))
    assert sorted_rows(got, rank=True) == sorted(expected_pairs(dist.T, vertices, sources, k=3))


def arc_weights(edges):
    arcs = {}
    for s, d, w in zip(*(edges.column(c).to_pylist() for c in ("src", "dst", "weight"))):
        if s != d:
            arcs[(s, d)] = min(arcs.get((s, d), math.inf), w)
    return arcs


def test_spark_with_paths(spark, graph):
    """with_paths=True: a path column from the source to the target whose
    arcs exist and whose weights sum to scipy's distance; with reverse=True
    the path still starts at the chosen vertex s and its arcs run backwards,
    from v to s."""
    edges, _, _ = graph
    dist, vertices = oracle(edges)
    df = spark.createDataFrame(edges)
    sources = vertices[:6]
    cutoff = float(np.percentile(dist[np.isfinite(dist)], 50))
    result = pathctl.spark.apsp(df, sources=sources, cutoff=cutoff, with_paths=True, block_size=2)
    assert result.schema["path"].dataType.simpleString() == "array<bigint>"
    got = to_arrow(result)
    assert sorted_rows(got) == sorted(expected_pairs(dist, vertices, sources, cutoff=cutoff))
    check_paths(got, edges, dist, vertices)
    assert max(len(p) for p in got.column("path").to_pylist()) > 2  # some path has a middle

    targets = vertices[10:30]
    got = to_arrow(pathctl.spark.apsp(df, sources=sources, targets=targets, reverse=True, with_paths=True,
                                      block_size=3))
    assert sorted_rows(got) == sorted(expected_pairs(dist.T, vertices, sources, targets))
    arcs = arc_weights(edges)
    index = {v: i for i, v in enumerate(vertices)}
    for s, v, d, p in zip(*(got.column(c).to_pylist() for c in ("source", "target", "distance", "path"))):
        assert p[0] == s and p[-1] == v
        assert sum(arcs[(b, a)] for a, b in zip(p, p[1:])) == d == dist[index[v], index[s]]


def test_spark_narrowing_through_endpoints(spark, graph, tmp_path):
    """The same keys reach `pathctl serve` endpoints: k with a cutoff, and
    reverse with targets, against scipy; a bad value is the client's error."""
    edges, _, _ = graph
    dist, vertices = oracle(edges)
    df = spark.createDataFrame(edges)
    sources = vertices[:8]
    cutoff = float(np.percentile(dist[np.isfinite(dist)], 40))
    server = Server(tmp_path / "graphs")
    try:
        got = to_arrow(pathctl.spark.apsp(df, endpoints=[server.uri], sources=sources, k=4, cutoff=cutoff,
                                          block_size=3))
        assert sorted_rows(got, rank=True) == sorted(expected_pairs(dist, vertices, sources, cutoff=cutoff, k=4))
        targets = [vertices[9], sources[2], vertices[30]]
        got = to_arrow(pathctl.spark.apsp(df, endpoints=[server.uri], sources=sources, targets=targets,
                                          reverse=True, block_size=3))
        assert sorted_rows(got) == sorted(expected_pairs(dist.T, vertices, sources, targets))
        with pytest.raises(pathctl.InvalidInputError, match=r'\bk=0\b'):
            pathctl.spark.apsp(df, endpoints=[server.uri], k=0)
    finally:
        server.stop()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"k": 0}, pathctl.UsageError, r"^k=0: "),
    ({"cutoff": float("nan")}, pathctl.UsageError, r"^cutoff=nan: "),
    ({"cutoff": -3}, pathctl.UsageError, r"^cutoff=-3: "),
    ({"targets": [999999]}, pathctl.InvalidInputError, r'^target "999999" is not a vertex of the graph'),
], ids=["k-zero", "cutoff-nan", "cutoff-negative", "unknown-target"])
def test_spark_bad_query(spark, graph, kwargs, error, message):
    """A bad value is the package's own exception, raised by the call (the
    schema probe meets it first), not a Java stack trace around it."""
    edges, _, _ = graph
    with pytest.raises(error) as info:
        pathctl.spark.apsp(spark.createDataFrame(edges), **kwargs)
    assert type(info.value) is error
    assert info.value.exit_code == 2
    assert re.search(message, info.value.message), info.value.message


@pytest.mark.parametrize("unknown", [999999, "x"], ids=["int", "wrong-type"])
def test_spark_unknown_source_in_a_later_block(spark, graph, unknown):
    """A source that is not a vertex is refused by the call, in
    pathctl.apsp's words, even where it lies in a later block than the one
    the schema probe runs (not a task's Java stack trace when the result is
    used); the same call without it runs."""
    edges, _, _ = graph
    df = spark.createDataFrame(edges)
    vertices = sorted(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))
    sources = vertices[:5] + [unknown]
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.spark.apsp(df, sources=sources, block_size=2)
    assert type(info.value) is pathctl.InvalidInputError
    assert info.value.message == f'source "{unknown}" is not a vertex of the graph'
    assert info.value.exit_code == 2
    got = to_arrow(pathctl.spark.apsp(df, sources=vertices[:5], block_size=2, layout="stats"))
    assert sorted(got.column("source").to_pylist()) == vertices[:5]


def test_spark_writes_a_dataset(spark, graph, tmp_path):
    """out=: every task writes its block into one Parquet dataset, the
    manifest last; the files hold the CLI's rows, each once, and the
    returned DataFrame reads them."""
    from pathctl._dataset import open_dataset

    edges, path, d = graph
    out = tmp_path / "ds"
    df = pathctl.spark.apsp(spark.createDataFrame(edges), block_size=20, engine="cpu", out=str(out))
    want = cli_result(path, d, "--engine", "cpu")
    got = open_dataset(out).to_table()
    assert got.schema.equals(want.schema, check_metadata=False)
    assert got.to_pylist() == want.to_pylist()  # the sources' order, block after block
    assert df.count() == want.num_rows and "source_block" in df.columns
    manifest = pq_manifest(out)
    assert manifest["complete"] and manifest["writer"] == "pathctl.spark"
    assert manifest["blocks"] == math.ceil(len(set(want.column("source").to_pylist())) / 20)
    assert not [n for n in os.listdir(out) if n.startswith(".")]
    with pytest.raises(pathctl.UsageError, match="not empty"):
        pathctl.spark.apsp(spark.createDataFrame(edges), block_size=20, engine="cpu", out=str(out))


def pq_manifest(out):
    import json

    with open(os.path.join(out, "_pathctl.json")) as f:
        return json.load(f)
