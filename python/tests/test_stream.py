"""pathctl.stream: incremental reading, errors on the way, reaping."""

from __future__ import annotations

import gc
import os
import re
import signal
import sys
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


class CtrlC(BaseException):
    """Stands for KeyboardInterrupt (a BaseException too), raised by a timer
    in the middle of a call, without risking a real one reaching pytest."""


@pytest.fixture
def interrupt_after():
    """interrupt_after(seconds): raise CtrlC in this thread that much later,
    wherever it then is (SIGALRM, as SIGINT raises KeyboardInterrupt)."""
    def on_alarm(signum, frame):
        raise CtrlC()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def assert_reaped(pid: int, timeout: float = 5.0) -> None:
    """The process is gone and reaped (no zombie either)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} is still there")


def fake_binary(tmp_path, body: str) -> str:
    """An executable standing for pathctl that records its pid (exec keeps
    it) and then runs body."""
    path = tmp_path / "pathctl"
    path.write_text(f"#!/bin/sh\necho $$ > '{tmp_path / 'pid'}'\n{body}\n")
    path.chmod(0o755)
    return str(path)


def recorded_pid(tmp_path) -> int:
    return int((tmp_path / "pid").read_text())


@pytest.mark.parametrize("call", ["stream", "apsp-pipe", "apsp-memfd"])
def test_interrupt_while_waiting_for_the_first_block(tmp_path, monkeypatch, interrupt_after, call):
    """Ctrl-C while the binary computes its first block (before stream()
    returns a reader) kills and reaps it: no reader was handed on, so
    nothing else would, and it would wait on a full pipe until the
    interpreter exits."""
    binary = fake_binary(tmp_path, "exec sleep 60")  # never writes a result
    monkeypatch.setenv("PATHCTL_HANDOFF", "auto" if call == "apsp-memfd" else "pipe")
    edges = random_edges(45, 10, 20)
    interrupt_after(0.5)
    started = time.monotonic()
    with pytest.raises(CtrlC):
        if call == "stream":
            pathctl.stream(edges, binary=binary)
        else:
            pathctl.apsp(edges, binary=binary)
    assert time.monotonic() - started < 10
    assert_reaped(recorded_pid(tmp_path))


def test_interrupt_while_reading_a_batch(tmp_path, interrupt_after):
    """Ctrl-C inside a read of the stream (the binary has sent a batch and
    is still computing the next) kills and reaps the binary."""
    script = tmp_path / "one_batch.py"
    script.write_text(
        "import sys, time\n"
        "import pyarrow as pa\n"
        "batch = pa.record_batch({'source': pa.array([1], pa.int64()), 'target': pa.array([1], pa.int64()),\n"
        "                         'distance': pa.array([0], pa.int32())})\n"
        "writer = pa.ipc.new_stream(sys.stdout.buffer, batch.schema)\n"
        "writer.write_batch(batch)\n"
        "sys.stdout.buffer.flush()\n"
        "time.sleep(60)\n")
    binary = fake_binary(tmp_path, f"exec '{sys.executable}' '{script}'")
    reader = pathctl.stream(random_edges(46, 10, 20), binary=binary)
    assert reader.read_next_batch().num_rows == 1
    interrupt_after(0.5)
    with pytest.raises(CtrlC):
        reader.read_next_batch()
    assert_reaped(recorded_pid(tmp_path))


def test_exception_in_the_loop_body_stops_the_binary():
    """An exception raised in the body of `for batch in pathctl.stream(...)`
    (a result far larger than a pipe, so the binary blocks writing it)
    takes the reader with the loop: the binary is killed and reaped."""
    edges = random_edges(47, 1500, 6000)
    before = set(child_pids())
    with pytest.raises(ZeroDivisionError):
        for batch in pathctl.stream(edges, mem=1 << 16):
            (pid,) = set(child_pids()) - before
            1 / 0
    assert_reaped(pid)
    wait_no_children()


def test_interrupt_in_the_loop_body_of_a_held_reader():
    """A reader held in a variable outlives an exception in the loop's body
    (it can still be read); dropping it stops the binary."""
    edges = random_edges(48, 1500, 6000)
    before = set(child_pids())
    reader = pathctl.stream(edges, mem=1 << 16)
    with pytest.raises(KeyError):
        for batch in reader:
            (pid,) = set(child_pids()) - before
            raise KeyError("stop")
    assert reader.read_next_batch().num_rows > 0  # still readable
    del reader
    assert_reaped(pid)
