"""pathctl.spark's out=: the block writer and the manifest of the driver,
run here without Spark, as the tasks and the driver run them; a retried
block is in the dataset once."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pathctl
from pathctl import _spark_dataset as sd

EDGES = pa.table({"src": [1, 2, 3, 1, 4, 5, 7], "dst": [2, 3, 1, 4, 5, 6, 6],
                  "weight": [1.5, 2.25, 1.0, 7.0, 1.0, 0.5, 2.0]})
BLOCKS = [[1, 2, 3], [4, 5, 6], [7]]
OPTIONS = {"layout": "pairs", "engine": "cpu", "algorithm": "auto", "with_predecessors": False}


def write(directory, block, width=5):
    return sd.write_block(directory, block, 3 * block, width, BLOCKS[block], EDGES, OPTIONS)


def test_blocks_written_once_and_the_manifest_last(tmp_path):
    directory = sd.dataset_dir(tmp_path / "ds", False)
    width = sd.block_width(len(BLOCKS))
    # A failed attempt of block 1 left its hidden directory, and one that
    # renamed its file but then failed left the file: the retry replaces it.
    os.makedirs(os.path.join(directory, ".spark-block-00001-dead", "source_block=00000"))
    os.makedirs(os.path.join(directory, "source_block=00001"))
    pq.write_table(pa.table({"source": [9], "target": [9], "distance": [9.0]}),
                           os.path.join(directory, "source_block=00001", "part-0.parquet"))
    manifests = [write(directory, b, width) for b in range(len(BLOCKS))]
    manifests[1] = write(directory, 1, width)  # a speculative second attempt: replaces, not adds
    assert not os.path.exists(os.path.join(directory, sd.MANIFEST))  # the driver's, written last
    m = sd.write_manifest(directory, manifests, None, 3, 7)
    want = pathctl.apsp(EDGES, engine="cpu")
    got = ds.dataset(directory, format="parquet", partitioning="hive").to_table()
    assert got.drop_columns(["source_block"]).to_pylist() == want.to_pylist()
    assert sorted(os.listdir(directory)) == [sd.MANIFEST, "source_block=00000", "source_block=00001",
                                             "source_block=00002"]
    with open(os.path.join(directory, sd.MANIFEST)) as f:
        on_disk = json.load(f)
    assert on_disk == json.loads(json.dumps(m))
    assert on_disk["complete"] and on_disk["writer"] == "pathctl.spark" and on_disk["blocks"] == 3
    assert on_disk["query"]["sources"] == 7 and on_disk["query"]["block_size"] == 3
    assert on_disk["query"]["sources_hash"] == "all" and on_disk["rows"] == want.num_rows
    assert [f["first_source"] for f in on_disk["files"]] == [0, 3, 6]
    # The manifest is the CLI's: pathctl.apsp reads the dataset back.
    from pathctl._dataset import open_dataset
    assert open_dataset(directory).to_table().to_pylist() == want.to_pylist()


def test_manifest_refuses_a_missing_or_repeated_block(tmp_path):
    directory = sd.dataset_dir(tmp_path / "ds", False)
    first, second = write(directory, 0), write(directory, 1)
    with pytest.raises(pathctl.PathctlError, match=r"blocks \[0, 0\] came back"):
        sd.write_manifest(directory, [first, first], None, 3, 7)
    with pytest.raises(pathctl.PathctlError, match=r"blocks \[1\] came back"):
        sd.write_manifest(directory, [second], None, 3, 7)
    assert not os.path.exists(os.path.join(directory, sd.MANIFEST))


def test_directory_rules(tmp_path):
    out = tmp_path / "ds"
    directory = sd.dataset_dir(out, False)
    sd.write_manifest(directory, [write(directory, b) for b in range(3)], None, 3, 7)
    with pytest.raises(pathctl.UsageError, match="not empty; give overwrite=True"):
        sd.dataset_dir(out, False)
    assert sd.dataset_dir(out, True) == directory and os.listdir(directory) == []
    (out / "notes.txt").write_text("mine")
    with pytest.raises(pathctl.UsageError, match="notes.txt, which is not part of a pathctl dataset"):
        sd.dataset_dir(out, True)
    assert (out / "notes.txt").exists()
