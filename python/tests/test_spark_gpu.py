"""pathctl.spark's GPU pinning: each task's run gets --devices with the GPU
addresses Spark assigned it, found by the committed discovery script. Tested
on local Spark with a fake nvidia-smi (two GPUs) and the CPU engine, so that
it runs without a GPU; the binary is wrapped to record its arguments."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import pathctl.spark
from conftest import REPO, assert_tables_equal, cli_result, random_edges, write_arrow

DISCOVERY = REPO / "python" / "tools" / "spark-gpu-discovery.sh"


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def _fake_nvidia_smi(d: Path, lines: str, status: int = 0) -> Path:
    """A directory whose nvidia-smi prints lines (its GPU indices)."""
    d.mkdir(parents=True, exist_ok=True)
    _script(d / "nvidia-smi", f"printf '{lines}'\nexit {status}\n")
    return d


@pytest.mark.parametrize("lines,status,want", [
    ("0\\n1\\n", 0, ["0", "1"]),
    ("3\\n", 0, ["3"]),
    ("", 9, []),  # nvidia-smi fails: no GPU
])
def test_discovery_script(tmp_path, lines, status, want):
    fake = _fake_nvidia_smi(tmp_path / "bin", lines, status)
    out = subprocess.run(["sh", str(DISCOVERY)], capture_output=True, text=True, check=True,
                         env={"PATH": f"{fake}:/usr/bin:/bin"})
    assert json.loads(out.stdout) == {"name": "gpu", "addresses": want}


def test_gpu_options():
    assert pathctl.spark._gpu_options([]) == {}
    assert pathctl.spark._gpu_options(["1"]) == {"devices": "1", "env": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}}
    assert pathctl.spark._gpu_options(["0", "2"])["devices"] == "0,2"


@pytest.fixture(scope="module")
def gpu_spark(tmp_path_factory):
    d = tmp_path_factory.mktemp("spark-gpu")
    fake = _fake_nvidia_smi(d / "bin", "0\\n1\\n")
    discovery = _script(d / "discover.sh", f'PATH="{fake}:$PATH" exec sh "{DISCOVERY}"\n')
    log = d / "runs.log"
    wrapper = _script(d / "pathctl", f'echo "$*" >> "{log}"\nexec "{os.environ["PATHCTL_BIN"]}" "$@"\n')
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    # local-cluster: a worker and an executor of their own (local mode
    # offers tasks no resources, and would wait for a GPU forever).
    session = (SparkSession.builder.master("local-cluster[1,2,1024]").appName("pathctl-gpu-tests")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "1g")
               .config("spark.worker.resource.gpu.amount", "2")
               .config("spark.worker.resource.gpu.discoveryScript", discovery)
               .config("spark.executor.resource.gpu.amount", "2")
               .config("spark.executor.resource.gpu.discoveryScript", discovery)
               .config("spark.task.resource.gpu.amount", "1")
               .config("spark.executorEnv.PATHCTL_BIN", wrapper)
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session, log, d, wrapper
    session.stop()


def test_spark_tasks_pinned_to_their_gpu(gpu_spark):
    spark, log, d, wrapper = gpu_spark
    edges = random_edges(19, 40, 120)
    path = write_arrow(edges, d / "edges.arrow")
    result = pathctl.spark.apsp(spark.createDataFrame(edges), engine="cpu", block_size=7, binary=wrapper)
    got = result.toArrow()
    want = cli_result(path, d, "--engine", "cpu")
    assert_tables_equal(got.cast(want.schema.remove_metadata()), want.replace_schema_metadata(None))
    runs = [line.split() for line in log.read_text().splitlines()]
    assert len(runs) >= result.rdd.getNumPartitions()
    for args in runs:
        assert args.count("--devices") == 1, args
        assert args[args.index("--devices") + 1] in ("0", "1"), args
