"""pathctl.stream: incremental reading, errors on the way, reaping."""

from __future__ import annotations

import gc
import os
import re
import signal
import time

import pyarrow as pa
import pytest

import pathctl
from conftest import assert_tables_equal, child_pids, cli_result, random_edges, wait_no_children, write_arrow


@pytest.mark.parametrize("layout", ["pairs", "stats"])
def test_stream_equals_cli(tmp_path, layout):
    edges = random_edges(41, 60, 200)
    want = cli_result(write_arrow(edges, tmp_path / "edges.arrow"), tmp_path, "--layout", layout)
    reader = pathctl.stream(edges, layout=layout, mem=1 << 12)  # several blocks
    assert isinstance(reader, pa.RecordBatchReader)
    batches = list(reader)
    assert len(batches) > 1
    assert_tables_equal(pa.Table.from_batches(batches, reader.schema), want, pairs=layout == "pairs")
    wait_no_children()


def test_stream_reads_incrementally_and_reaps_when_closed_early():
    # A result far larger than one batch: read one batch, then drop the rest.
    edges = random_edges(42, 1500, 6000)
    reader = pathctl.stream(edges, layout="pairs", mem=1 << 16)
    first = reader.read_next_batch()
    assert first.num_rows > 0
    assert child_pids(), "the binary should still be running with the rest of the result"
    del reader  # dropping the reader kills and reaps the binary
    wait_no_children()


def test_stream_dropped_unread_is_reaped():
    reader = pathctl.stream(random_edges(43, 800, 3000))
    del reader
    gc.collect()
    wait_no_children()


def test_stream_error_before_schema_raises_at_call():
    bad = pa.table({"src": [1, 2], "dst": [2, 1], "weight": [1, -1]})
    with pytest.raises(pathctl.NegativeWeightError):
        reader = pathctl.stream(bad, algorithm="dijkstra")
        reader.read_all()
    wait_no_children()


def test_stream_error_part_way_surfaces_when_reading_past_it():
    # The binary dies after it has sent part of the result: the batches read
    # so far are good, and the read that reaches the break raises.
    edges = random_edges(44, 1500, 6000)
    want = {}
    reader = pathctl.stream(edges, mem=1 << 16)
    first = reader.read_next_batch()
    assert first.num_rows > 0
    (pid,) = child_pids()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(pathctl.CancelledError, match="signal 9"):
        while True:
            reader.read_next_batch()
    wait_no_children()
    # What arrived before the break is correct.
    sources = sorted(set(first.column("source").to_pylist()))
    full = pathctl.apsp(edges, sources=sources)
    for s, t, d in zip(*(full.column(c).to_pylist() for c in ("source", "target", "distance"))):
        want[(s, t)] = d
    for s, t, d in zip(*(first.column(c).to_pylist() for c in ("source", "target", "distance"))):
        assert want[(s, t)] == d


def test_negative_cycle_in_a_later_block():
    # Sources 1 and 2 never reach the negative cycle 10 -> 11 -> 10; source
    # 9 does. However the engine orders its checks, the stream ends in
    # NegativeCycleError (at the call or on a read) and never with a
    # silently short result.
    src = [1, 2, 9, 10, 11]
    dst = [2, 3, 10, 11, 10]
    weight = [1, 1, 1, 1, -3]
    table = pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64()),
                      "weight": pa.array(weight, pa.int32())})
    # Ask the engine what one source costs, and give it just that.
    with pytest.raises(pathctl.UsageError) as info:
        pathctl.apsp(table, algorithm="bellman-ford", mem=1)
    one_source = int(re.search(r"(\d+) bytes one source needs", info.value.message).group(1))
    got = []
    with pytest.raises(pathctl.NegativeCycleError, match="10|11"):
        reader = pathctl.stream(table, algorithm="bellman-ford", sources=[1, 2, 9], mem=one_source)
        for batch in reader:
            got.append(batch)
    for batch in got:
        for s, t, d in zip(*(batch.column(c).to_pylist() for c in ("source", "target", "distance"))):
            assert d == {(1, 1): 0, (1, 2): 1, (1, 3): 2, (2, 2): 0, (2, 3): 1}[(s, t)]
    wait_no_children()
