"""The executor side of pathctl.spark.apsp, outside Spark: the per-partition
function hands the binary's record batches to Spark without a copy."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import List

import pyarrow as pa
import pytest

import pathctl
import pathctl._api
import pathctl.spark
from pathctl.spark import _BlockTask, _ipc_bytes, cast_batch, spark_arrow_schema
from conftest import random_edges


def buffer_addresses(batch: pa.RecordBatch) -> List[int]:
    return [buf.address for col in batch.columns for buf in col.buffers() if buf is not None]


def run_task(monkeypatch, edges: pa.Table, sources, block_rows):
    """Run _BlockTask on block rows as mapInArrow would hand them, and
    return (batches the reader produced, batches the task yielded, target)."""
    produced: List[pa.RecordBatch] = []
    real_stream = pathctl._api.stream

    def recording_stream(*args, **kwargs):
        reader = real_stream(*args, **kwargs)

        def batches():
            for b in reader:
                produced.append(b)
                yield b

        return pa.RecordBatchReader.from_batches(reader.schema, batches())

    monkeypatch.setattr(pathctl._api, "stream", recording_stream)
    run = {"algorithm": "auto", "layout": "pairs", "with_predecessors": False, "engine": "cpu"}
    local_opts = {"directed": True, "src_col": "src", "dst_col": "dst", "weight_col": "weight",
                  "binary": None}
    schema = real_stream(edges, sources=sources[:1], **run, **local_opts).schema
    target = spark_arrow_schema(schema)
    task = _BlockTask(bcast=SimpleNamespace(value=_ipc_bytes(edges)), run=run,
                      local_opts=local_opts, target=target, endpoints=None, graph=None,
                      token=None, tls_root_certs=None)
    rows = pa.record_batch({"block": pa.array([r[0] for r in block_rows], pa.int32()),
                            "sources": pa.array([json.dumps(r[1]) for r in block_rows])})
    yielded = list(task(iter([rows])))
    return produced, yielded, target


@pytest.mark.parametrize("ids", ["int64", "uint64"])
def test_block_task_yields_the_readers_buffers(monkeypatch, ids):
    edges = random_edges(5, 40, 120)
    if ids == "uint64":
        edges = edges.cast(pa.schema([("src", pa.uint64()), ("dst", pa.uint64()),
                                      ("weight", edges.schema.field("weight").type)]))
    sources = sorted(set(edges.column("src").to_pylist()))
    blocks = [(0, sources[:7]), (1, sources[7:15])]
    produced, yielded, target = run_task(monkeypatch, edges, sources, blocks)
    assert produced and len(yielded) == len(produced)
    for got, read in zip(yielded, produced):
        # The schema Spark was promised (uint64 ids become int64) ...
        assert got.schema.equals(target, check_metadata=False)
        # ... over the very buffers the reader filled: no copy in between.
        assert buffer_addresses(got) == buffer_addresses(read)
        assert got.to_pydict() == read.cast(target).to_pydict()
    # Every source of both blocks came back, once per reachable target at least.
    got_sources = {s for b in yielded for s in b.column("source").to_pylist()}
    assert got_sources == set(sources[:15])


def test_cast_batch_views_only_where_the_type_allows():
    ids = pa.array([1, 5, None, 2**63 - 1], pa.uint64())
    batch = pa.record_batch([ids, pa.array([1, 2, 3, 4], pa.int32())],
                            schema=pa.schema([pa.field("source", pa.uint64(), nullable=False),
                                              pa.field("distance", pa.int32(), nullable=False)]))
    target = spark_arrow_schema(batch.schema)
    out = cast_batch(batch, target)
    assert out.schema.equals(target)
    assert buffer_addresses(out) == buffer_addresses(batch)
    assert out.column(0).to_pylist() == [1, 5, None, 2**63 - 1]
    # An id above the largest Spark long is refused, not wrapped.
    big = pa.record_batch([pa.array([2**63], pa.uint64())], names=["source"])
    with pytest.raises(pathctl.InvalidInputError, match="above the largest Spark long"):
        cast_batch(big, spark_arrow_schema(big.schema))
    # A widening cast (uint32 ids) has to copy, and does so correctly.
    narrow = pa.record_batch([pa.array([0, 2**32 - 1], pa.uint32())], names=["source"])
    widened = cast_batch(narrow, spark_arrow_schema(narrow.schema))
    assert widened.column(0).type == pa.int64()
    assert widened.column(0).to_pylist() == [0, 2**32 - 1]
