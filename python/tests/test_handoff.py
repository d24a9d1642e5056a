"""The handoff between the binary and Python: memfds mapped without a copy,
released with the last view, nothing left behind when the binary is
killed, and the pipe fallback giving the same answers."""

from __future__ import annotations

import gc
import mmap
import os
import signal
import stat
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from pathctl import _local
from conftest import _binary, cli, oracle, random_edges, read_arrow, write_arrow

memfd_only = pytest.mark.skipif(_local.handoff_mode() != "memfd", reason="no memfds on this platform")


def memfd_mappings():
    """(start, end) of each mapping of a pathctl memfd in this process."""
    spans = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "/memfd:pathctl" in line:
                lo, hi = line.split()[0].split("-")
                spans.append((int(lo, 16), int(hi, 16)))
    return spans


def memfd_descriptors(pid="self"):
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
        if target.startswith("/memfd:pathctl"):
            found.append((int(fd), target))
    return found


def inside(address, spans):
    return any(lo <= address < hi for lo, hi in spans)


def shm_names():
    """Names in /dev/shm that this package could have made (other processes
    of the machine may add theirs meanwhile)."""
    if not os.path.isdir("/dev/shm"):
        return set()
    return {n for n in os.listdir("/dev/shm") if "pathctl" in n or "memfd" in n}


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temporary directory of this test's own for the package's temporary
    files (others' tests share /tmp), empty at the start."""
    import tempfile

    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    return root


@pytest.fixture
def no_peer(monkeypatch):
    """The matrix in the memfd, as where the binary may not write into
    this process (the fallback of the result peer)."""
    monkeypatch.setenv(_local.RESULT_PEER_ENV, "off")


def anonymous_mapping_of(address):
    """(start, end) of the anonymous mapping of this process holding
    address, or None (not mapped, or a file's mapping)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if lo <= address < hi:
                return (lo, hi) if len(fields) < 6 else None
    return None


def bytes_at(address, size):
    """size bytes of this process's memory at address, read through
    /proc/self/mem (an unmapped address gives b"", not a fault)."""
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        try:
            mem.seek(address)
            return mem.read(size)
        except OSError:
            return b""


peer_only = pytest.mark.skipif(not _local._result_peer_wanted() or _local.handoff_mode() != "memfd",
                               reason="results are not written into this process here")


@peer_only
@pytest.mark.parametrize("weights", ["int", "float"])
def test_matrix_is_written_into_this_process(weights):
    """The binary writes the matrix into an anonymous mapping of this
    process (process_vm_writev): no memfd holds it, the array is a
    writable view on a page boundary, and it equals the oracle's."""
    edges = random_edges(61, 80, 300, weights=weights)
    want, _ = oracle(edges)
    D, _ = pathctl.distance_matrix(edges, unreachable=-1)
    start = D.__array_interface__["data"][0]
    span = anonymous_mapping_of(start)
    assert span is not None and span[1] >= start + D.nbytes, (hex(start), span)
    assert not inside(start, memfd_mappings())
    assert start % mmap.PAGESIZE == 0 and D.flags.writeable and not D.flags.owndata
    np.testing.assert_allclose(D, np.where(np.isfinite(want), want, -1), rtol=1e-12)
    sentinel = b"pathctl!"
    D.reshape(-1).view(np.uint8)[:len(sentinel)] = np.frombuffer(sentinel, dtype=np.uint8)
    assert bytes_at(start, len(sentinel)) == sentinel
    del D
    gc.collect()
    # Released with the array: the range is gone, or, where a later mapping
    # of the same size took its place (another allocation of this process),
    # it no longer holds what the array held.
    assert anonymous_mapping_of(start) != span or bytes_at(start, len(sentinel)) != sentinel


@peer_only
def test_binary_killed_while_writing_into_this_process(monkeypatch):
    """SIGKILL of the binary once this process has given it memory: a
    clear error, and nothing of the run kept."""
    granted = threading.Event()
    grant = _local._ResultPeer._grant

    def noting(self, *args):
        reply = grant(self, *args)
        granted.set()
        return reply

    monkeypatch.setattr(_local._ResultPeer, "_grant", noting)
    caught = {}

    def run():
        try:
            pathctl.distance_matrix(random_edges(68, 1500, 6000), threads=1, mem=1 << 16)
        except BaseException as exc:  # noqa: BLE001 - examined below
            caught["exc"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    assert granted.wait(60), "the binary never asked for memory"
    for pid in child_pids():
        os.kill(pid, signal.SIGKILL)
    worker.join(60)
    exc = caught.get("exc")
    assert isinstance(exc, pathctl.CancelledError), exc
    assert "killed by signal 9" in exc.message


@memfd_only
@pytest.mark.parametrize("weights", ["int", "float"])
def test_matrix_is_the_mapped_memfd(weights, no_peer):
    edges = random_edges(61, 80, 300, weights=weights)
    D, _ = pathctl.distance_matrix(edges)
    spans = memfd_mappings()
    start = D.__array_interface__["data"][0]
    assert inside(start, spans) and inside(start + D.nbytes - 1, spans), (hex(start), spans)
    assert not D.flags.owndata
    # A sentinel is written in place, in the mapping: still no copy.
    S, _ = pathctl.distance_matrix(edges, unreachable=-1)
    assert inside(S.__array_interface__["data"][0], memfd_mappings())
    assert (S >= -1).all() and (S == -1).any()


@memfd_only
def test_tables_are_views_of_the_mapping():
    table = pathctl.apsp(random_edges(62, 50, 200), layout="pairs")
    spans = memfd_mappings()
    for column in table.columns:
        for chunk in column.chunks:
            data = chunk.buffers()[1]
            assert inside(data.address, spans), (column, hex(data.address), spans)
    values = table.column("distance").chunk(0)
    assert np.shares_memory(values.to_numpy(), np.frombuffer(values.buffers()[1], dtype=np.int32))


@memfd_only
def test_memory_is_released_with_the_last_view(private_tmp, no_peer):
    gc.collect()
    assert memfd_mappings() == [] and memfd_descriptors() == []
    shm_before = shm_names()
    D, ids = pathctl.distance_matrix(random_edges(63, 60, 200), sources=[3, 5], vertices=list(range(70)))
    row = D[1]  # a view keeps the whole mapping
    del D
    gc.collect()
    assert len(memfd_mappings()) == 1
    assert row.shape == (len(ids),) and len(ids) >= 70
    del row
    gc.collect()
    assert memfd_mappings() == []
    assert memfd_descriptors() == []  # the mapping's own descriptor is gone too
    table = pathctl.apsp(random_edges(64, 40, 100))
    assert memfd_mappings() != []
    del table
    gc.collect()
    assert memfd_mappings() == [] and memfd_descriptors() == []
    assert shm_names() == shm_before
    assert list(private_tmp.iterdir()) == []


@memfd_only
def test_edges_and_side_files_go_through_memfds(tmp_path):
    seen = tmp_path / "args"
    wrapper = tmp_path / "pathctl"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{seen}"\nexec "{_binary()}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    edges = random_edges(65, 30, 90)
    D, ids = pathctl.distance_matrix(edges, sources=[ids_of(edges)[0]], binary=str(wrapper))
    args = seen.read_text().splitlines()
    assert args[-1].startswith("/dev/fd/")  # the edges
    assert args[args.index("-o") + 1].startswith("/dev/fd/")
    assert args[args.index("--sources-file") + 1].startswith("/dev/fd/")
    assert args[args.index("--vertices-out") + 1].startswith("/dev/fd/")
    assert args[args.index("--input-format") + 1] == "arrow"
    assert args[args.index("--format") + 1] == "arrow"
    want, vertices = oracle(edges)
    assert ids.tolist() == vertices
    assert args[args.index("--matrix-type") + 1] == "float"
    np.testing.assert_array_equal(D[0], want[0])  # inf where unreachable


def ids_of(edges):
    return sorted(set(edges.column("src").to_pylist()) | set(edges.column("dst").to_pylist()))


@memfd_only
def test_bad_edges_are_called_edges_not_a_descriptor():
    bad = pa.table({"src": [1, None], "dst": [2, 3]})
    with pytest.raises(pathctl.InvalidInputError) as info:
        pathctl.apsp(bad)
    assert "/dev/fd" not in info.value.message and "edges" in info.value.message


@pytest.mark.parametrize("weights", ["int", "float", "none"])
def test_pipe_and_memfd_agree_with_scipy(weights, monkeypatch):
    edges = random_edges(66, 70, 200, weights=weights)
    want, vertices = oracle(edges, directed=False)
    got = {}
    for mode, peer in (("pipe", "off"), ("auto", "off"), ("auto", "on")):
        monkeypatch.setenv(_local.HANDOFF_ENV, mode)
        monkeypatch.setenv(_local.RESULT_PEER_ENV, peer)
        D, ids = pathctl.distance_matrix(edges, directed=False, unreachable=-1)
        assert ids.tolist() == vertices
        np.testing.assert_allclose(D, np.where(np.isfinite(want), want, -1), rtol=1e-12)
        got[mode, peer] = pathctl.apsp(edges, directed=False, layout="matrix")
    assert got["pipe", "off"].combine_chunks().equals(got["auto", "off"])
    assert got["auto", "on"].equals(got["auto", "off"])


def test_unknown_handoff_setting(monkeypatch):
    monkeypatch.setenv(_local.HANDOFF_ENV, "carrier-pigeon")
    with pytest.raises(pathctl.UsageError, match="PATHCTL_HANDOFF"):
        pathctl.apsp(random_edges(67, 5, 5))


def child_pids():
    return child_pids_of(os.getpid())


def child_pids_of(parent):
    me = str(parent)
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            pids.append(int(entry))
    return pids


@memfd_only
def test_binary_killed_mid_result(private_tmp, no_peer):
    """SIGKILL of the binary while it writes the result: a clear error, no
    mapping, descriptor, temporary directory or /dev/shm file left."""
    gc.collect()
    shm_before = shm_names()
    # Many small blocks on one thread: the result grows for a while.
    edges = random_edges(68, 1500, 6000)
    caught = {}

    def run():
        try:
            pathctl.distance_matrix(edges, threads=1, mem=1 << 16)
        except BaseException as exc:  # noqa: BLE001 - examined below
            caught["exc"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    killed = False
    deadline = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < deadline and not killed:
        for pid in child_pids():
            for fd, target in memfd_descriptors(pid):
                if "pathctl-result" not in target:
                    continue
                try:
                    size = os.stat(f"/proc/{pid}/fd/{fd}").st_size
                except OSError:
                    continue
                if size > 0:  # part of the result is written
                    os.kill(pid, signal.SIGKILL)
                    killed = True
        time.sleep(0.002)
    worker.join(60)
    assert killed, "the binary finished before it could be killed; make the graph larger"
    exc = caught.get("exc")
    assert isinstance(exc, pathctl.PathctlError), exc
    assert isinstance(exc, pathctl.CancelledError)
    assert "killed by signal 9" in exc.message
    gc.collect()
    assert memfd_mappings() == [] and memfd_descriptors() == []
    assert shm_names() == shm_before
    assert list(private_tmp.iterdir()) == []


def test_stream_hands_over_batches_without_copying():
    """stream() reads each block once, into a buffer the batch views; a
    reduction block by block equals the whole matrix's."""
    edges = random_edges(69, 120, 400, weights="float")
    D, _ = pathctl.distance_matrix(edges)
    reader = pathctl.stream(edges, layout="matrix", mem=1 << 14)
    batches = 0
    row_max = []
    for batch in reader:
        batches += 1
        values = batch.column("distance").values
        block = values.to_numpy().reshape(batch.num_rows, -1)
        assert np.shares_memory(block, np.frombuffer(values.buffers()[1], dtype=np.float64))
        assert not block.flags.owndata
        finite = np.where(np.isinf(block), -np.inf, block)
        row_max.append(finite.max(axis=1))
    assert batches > 1
    want = np.where(np.isinf(D), -np.inf, D).max(axis=1)
    np.testing.assert_array_equal(np.concatenate(row_max), want)


@memfd_only
def test_several_blocks_arrive_as_one_mapped_batch(no_peer):
    """A result computed in many blocks (a tiny memory budget) is written
    by the binary as one record batch into the memfd: the matrix is a view
    of the mapping, no join, its values on a page boundary; sentinels and
    masks come from the one validity bitmap, and the mapping goes with the
    last view."""
    edges = random_edges(70, 300, 900)
    want, _ = oracle(edges)
    gc.collect()
    table = pathctl.apsp(edges, layout="matrix", mem=1 << 16)
    column = table.column("distance")
    assert column.num_chunks == 1 and column.chunk(0).values.null_count > 0
    del table, column
    D, _ = pathctl.distance_matrix(edges, mem=1 << 16, unreachable=-1)
    start = D.__array_interface__["data"][0]
    spans = memfd_mappings()
    assert inside(start, spans) and inside(start + D.nbytes - 1, spans), (hex(start), spans)
    assert start % mmap.PAGESIZE == 0
    np.testing.assert_array_equal(D, np.where(np.isfinite(want), want, -1))
    M, _ = pathctl.distance_matrix(edges, mem=1 << 16, unreachable="mask")
    np.testing.assert_array_equal(M.mask, ~np.isfinite(want))
    assert np.shares_memory(M.data, D) is False  # each call has a result of its own
    del D, M
    gc.collect()
    assert memfd_mappings() == []


def test_several_batches_through_a_pipe_are_joined(monkeypatch):
    """Through pipes the result stays a stream of one batch per block,
    joined with one copy; the values under each block's nulls are the same
    after the join."""
    monkeypatch.setenv(_local.HANDOFF_ENV, "pipe")
    edges = random_edges(70, 300, 900)
    want, _ = oracle(edges)
    assert pathctl.apsp(edges, layout="matrix", mem=1 << 16).column("distance").num_chunks > 1
    D, _ = pathctl.distance_matrix(edges, mem=1 << 16, unreachable=-1)
    np.testing.assert_array_equal(D, np.where(np.isfinite(want), want, -1))
    M, _ = pathctl.distance_matrix(edges, mem=1 << 16, unreachable="mask")
    np.testing.assert_array_equal(M.mask, ~np.isfinite(want))


def _on_tmpfs(path) -> bool:
    try:
        with open("/proc/self/mounts") as mounts:
            points = [line.split()[1:3] for line in mounts]
    except OSError:
        return False
    best = max((p for p in points if str(path).startswith(p[0].rstrip("/") + "/")), key=lambda p: len(p[0]), default=None)
    return best is not None and best[1] == "tmpfs"


@pytest.mark.skipif(not _on_tmpfs("/dev/shm/x"), reason="no tmpfs at /dev/shm")
@pytest.mark.parametrize("dist_type", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("ids", ["int64", "string"])
def test_one_batch_file_equals_the_streamed_one(tmp_path, dist_type, ids):
    """The CLI writes a matrix on tmpfs as one record batch (in place,
    through a mapping) and elsewhere as a batch per block: pyarrow reads
    both, and they hold the same table."""
    edges = write_arrow(random_edges(71, 90, 260, ids=ids), tmp_path / "edges.arrow")
    shm = f"/dev/shm/pathctl-test-{os.getpid()}-{dist_type}-{ids}.arrow"
    flags = ["run", "--layout", "matrix", "--engine", "cpu", "--dist-type", dist_type, "--max-block", "7"]
    try:
        cli([*flags, "-o", shm, "--vertices-out", str(tmp_path / "v.arrow"), edges])
        one = read_arrow(shm)
    finally:
        if os.path.exists(shm):
            os.remove(shm)
    cli([*flags, "-o", str(tmp_path / "m.arrow"), "--vertices-out", str(tmp_path / "v.arrow"), edges])
    streamed = read_arrow(tmp_path / "m.arrow")
    assert one.column("distance").num_chunks == 1
    if not _on_tmpfs(tmp_path / "m.arrow"):
        assert streamed.column("distance").num_chunks > 1
    assert one.schema.equals(streamed.schema, check_metadata=True)
    assert one.combine_chunks().equals(streamed.combine_chunks())


@memfd_only
def test_join_gives_the_copied_pages_back():
    from pathctl._api import _join

    page = mmap.PAGESIZE
    fd = os.memfd_create("pathctl-join-test", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, 8 * page)
        mapping = mmap.mmap(fd, 8 * page)
        whole = np.frombuffer(mapping, dtype=np.int32)
        whole[:] = np.arange(len(whole))
        blocks_before = os.fstat(fd).st_blocks
        per_page = page // 4
        views = [whole[10:3 * per_page + 5], whole[3 * per_page + 5:]]
        out = _join(views, np.dtype(np.int32), mapping)
        np.testing.assert_array_equal(out, np.arange(10, len(whole)))
        # Pages 1..2 and 4..7 lie wholly inside a view: given back. Pages 0
        # and 3 hold bytes outside (or across) the views: kept.
        assert os.fstat(fd).st_blocks < blocks_before
        assert whole[0] == 0 and whole[3 * per_page] == 3 * per_page
        assert whole[per_page] == 0  # a removed page reads as zeros
        del whole, views
        mapping.close()
    finally:
        os.close(fd)


@memfd_only
def test_python_killed_mid_run_leaves_nothing(private_tmp):
    """SIGKILL of the Python process while the binary runs: the binary
    ends on its own, and no file is left in /dev/shm or the temporary
    directory (the memfds vanish with the last process holding them)."""
    import subprocess
    import sys

    from conftest import REPO

    shm_before = shm_names()
    script = (
        "import sys, pathctl\n"
        f"sys.path.insert(0, {str(REPO / 'python' / 'tests')!r})\n"
        "from conftest import random_edges\n"
        "print('started', flush=True)\n"
        "pathctl.distance_matrix(random_edges(71, 1500, 6000), threads=1, mem=1 << 16)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(REPO / "python"), "TMPDIR": str(private_tmp)})
    try:
        assert child.stdout.readline().strip() == b"started"
        binary = None
        deadline = time.monotonic() + 30
        while binary is None and time.monotonic() < deadline:
            for pid in child_pids_of(child.pid):
                if any("pathctl-result" in t for _, t in memfd_descriptors(pid)):
                    binary = pid
            time.sleep(0.005)
        assert binary is not None, "the binary did not start"
        child.kill()
        child.wait(10)
        deadline = time.monotonic() + 60
        while os.path.exists(f"/proc/{binary}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{binary}"), "the binary outlived its caller by a minute"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert shm_names() == shm_before
    assert list(private_tmp.iterdir()) == []


def test_threaded_join_equals_serial(monkeypatch):
    from pathctl import _api

    rng = np.random.default_rng(72)
    views = [rng.integers(0, 100, size=n).astype(np.int64) for n in (1000, 37, 4096, 1, 999)]
    serial = _api._join(views, np.dtype(np.int64), None)
    monkeypatch.setattr(_api, "_JOIN_THREADED_BYTES", 0)
    threaded = _api._join(views, np.dtype(np.int64), None)
    np.testing.assert_array_equal(serial, np.concatenate(views))
    np.testing.assert_array_equal(threaded, serial)


@memfd_only
def test_one_batch_rows_follow_the_sources():
    """The binary sizes the one-batch matrix from the sources before the
    run: repeated sources (one row each, at their first place) and a single
    source still fill it exactly."""
    edges = random_edges(72, 40, 160)
    full, ids = pathctl.distance_matrix(edges)
    picked = [ids[5], ids[1], ids[5], ids[9], ids[1]]
    D, _ = pathctl.distance_matrix(edges, sources=picked)
    np.testing.assert_array_equal(D, full[[5, 1, 9]])
    one = pathctl.apsp(edges, layout="matrix", sources=[ids[3]])
    assert one.num_rows == 1 and one.column("distance").num_chunks == 1


def test_result_peer_settings(monkeypatch):
    monkeypatch.setenv(_local.RESULT_PEER_ENV, "sometimes")
    with pytest.raises(pathctl.UsageError, match="PATHCTL_RESULT_PEER"):
        pathctl.distance_matrix(random_edges(73, 5, 5))
    monkeypatch.setenv(_local.RESULT_PEER_ENV, "on")
    monkeypatch.setenv(_local.POPULATE_ENV, "many")
    with pytest.raises(pathctl.UsageError, match="PATHCTL_PEER_POPULATE"):
        pathctl.distance_matrix(random_edges(73, 5, 5))


@pytest.mark.skipif(not hasattr(mmap, "MAP_ANONYMOUS"), reason="no anonymous mappings")
def test_populate_gives_pages_and_stops():
    """The populating threads fault every page of a mapping in (without
    changing its bytes) and stop when asked, before the mapping goes."""
    import ctypes

    size = 3 * _local._POPULATE_CHUNK + 5 * mmap.PAGESIZE + 123
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m[size // 2] = 7
    view = ctypes.c_char.from_buffer(m)
    base = ctypes.addressof(view)
    del view

    def resident_kib():
        with open("/proc/self/smaps") as smaps:
            found = False
            for line in smaps:
                if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
                    found = int(line.split("-")[0], 16) == base
                elif found and line.startswith("Rss:"):
                    return int(line.split()[1])
        return None

    before = resident_kib()
    _local._populate(base, size, 3)()  # start, then stop and wait: may stop early
    stop = _local._populate(base, size, 2)
    deadline = time.monotonic() + 30
    while resident_kib() < (size // mmap.PAGESIZE) * mmap.PAGESIZE // 1024 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop()
    after = resident_kib()
    assert before is not None and before < size // 1024 // 2
    assert after >= size // 1024 - 4, f"{after} KiB resident of {size // 1024}"
    assert m[size // 2] == 7 and m[0] == 0 and m[size - 1] == 0
    m.close()


@pytest.mark.parametrize("peer", ["on", "off"])
@pytest.mark.parametrize("weights", ["int", "float"])
def test_distance_matrix_into_out(monkeypatch, peer, weights):
    """out=: the distances land in the caller's array, which is returned
    (written by the binary straight into it where the result peer works,
    copied in elsewhere); sentinels and masks as without out; an array of
    another shape raises ValueError and is left as it was."""
    monkeypatch.setenv(_local.RESULT_PEER_ENV, peer)
    seen = []
    result = _local._ResultPeer.result

    def noting(self):
        got = result(self)
        seen.append(self.values_in_out)
        return got

    monkeypatch.setattr(_local._ResultPeer, "result", noting)
    edges = random_edges(74, 70, 160, weights=weights)
    want, vertices = oracle(edges)
    D0, _ = pathctl.distance_matrix(edges, unreachable=-1)
    out = np.full(D0.shape, 7, dtype=D0.dtype)
    seen.clear()
    D, ids = pathctl.distance_matrix(edges, unreachable=-1, out=out)
    assert D is out and ids.tolist() == vertices
    np.testing.assert_allclose(out, np.where(np.isfinite(want), want, -1), rtol=1e-12)
    direct = peer == "on" and _local._result_peer_wanted() and _local.handoff_mode() == "memfd"
    assert seen == ([True] if direct else [])
    M, _ = pathctl.distance_matrix(edges, unreachable="mask", out=out)
    assert np.shares_memory(M.data, out) and (M.mask == ~np.isfinite(want)).all()
    transposed = np.zeros(D0.shape[::-1], dtype=D0.dtype).T  # not C-contiguous: copied in
    assert pathctl.distance_matrix(edges, unreachable=-1, out=transposed)[0] is transposed
    np.testing.assert_array_equal(transposed, D0)
    wrong = np.full((3, D0.shape[1]), 9, dtype=D0.dtype)
    with pytest.raises(ValueError, match="out is"):
        pathctl.distance_matrix(edges, out=wrong)
    assert (wrong == 9).all()
    with pytest.raises(ValueError, match="writable 2-D"):
        pathctl.distance_matrix(edges, out=np.zeros(5))


def test_distance_matrix_into_out_through_a_pipe(monkeypatch):
    monkeypatch.setenv(_local.HANDOFF_ENV, "pipe")
    edges = random_edges(75, 40, 90)
    want, _ = oracle(edges)
    out = np.empty((len(want), len(want)), dtype=np.int32)
    assert pathctl.distance_matrix(edges, dtype=np.int32, unreachable=-1, out=out)[0] is out
    np.testing.assert_array_equal(out, np.where(np.isfinite(want), want, -1))


@memfd_only
def test_result_read_before_the_exit(tmp_path):
    """A run that says it is done (its last stderr line, before the exit
    where a device is torn down) hands its result over at once: a binary
    whose exit takes seconds does not hold the call; one that fails is
    still waited for and its error raised."""
    wrapper = tmp_path / "pathctl"
    wrapper.write_text(f'#!/bin/sh\n"{_binary()}" "$@"\ncode=$?\nsleep 4\nexit $code\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    edges = random_edges(76, 40, 100)
    want, _ = oracle(edges)
    for call in (lambda: pathctl.distance_matrix(edges, unreachable=-1, binary=str(wrapper))[0],
                 lambda: pathctl.apsp(edges, layout="stats", binary=str(wrapper))):
        t0 = time.monotonic()
        got = call()
        assert time.monotonic() - t0 < 3, "the call waited for the exit"
        assert got is not None
    np.testing.assert_array_equal(pathctl.distance_matrix(edges, unreachable=-1, binary=str(wrapper))[0],
                                  np.where(np.isfinite(want), want, -1))
    t0 = time.monotonic()
    with pytest.raises(pathctl.PathctlError):
        pathctl.apsp(edges, algorithm="no-such-algorithm", binary=str(wrapper))
    assert time.monotonic() - t0 >= 3  # no done line: the exit status decides


@peer_only
@pytest.mark.parametrize("answer", ["refused", "unmapped"])
def test_matrix_falls_back_to_the_memfd(monkeypatch, answer):
    """Where this process refuses memory, or names memory the binary cannot
    write (here: a page below the lowest address anything maps), the
    binary says so and writes the memfd: the same matrix, from a memfd
    mapping."""
    reply = "no\n" if answer == "refused" else f"addr {os.getpid()} 1000\n"
    monkeypatch.setattr(_local._ResultPeer, "_grant", lambda self, *args: reply)
    edges = random_edges(77, 50, 130)
    want, _ = oracle(edges)
    D, _ = pathctl.distance_matrix(edges, unreachable=-1)
    np.testing.assert_array_equal(D, np.where(np.isfinite(want), want, -1))
    assert inside(D.__array_interface__["data"][0], memfd_mappings())


def categorical_chunks(categories_each: int) -> pa.Table:
    """Two categorical DataFrames joined by pa.concat_tables: each chunk of
    src and dst carries its own dictionary (pandas codes them in int8, so
    with 100 categories each the union needs wider indices)."""
    import pandas as pd

    frames = []
    for part in ("p", "q"):
        names = [f"{part}{i}" for i in range(categories_each)]
        frames.append(pa.Table.from_pandas(pd.DataFrame({
            "src": pd.Categorical(names),
            "dst": pd.Categorical(names[1:] + ["p0" if part == "q" else "q0"]),
            "weight": np.arange(1, categories_each + 1, dtype=np.int32),
        }), preserve_index=False))
    table = pa.concat_tables(frames)
    assert not table.column("src").chunk(0).dictionary.equals(table.column("src").chunk(1).dictionary)
    return table


@pytest.mark.parametrize("categories_each", [3, 100])
def test_chunks_with_their_own_dictionaries(monkeypatch, categories_each):
    """Every handoff takes a table whose chunks carry different dictionaries:
    the memfd's IPC file holds one dictionary per column, so the package
    unifies them (the pipe's stream takes each as it comes); the answers
    are the same, and the same as for the plain strings."""
    table = categorical_chunks(categories_each)
    plain = table.cast(pa.schema([pa.field("src", pa.string()), pa.field("dst", pa.string()),
                                  pa.field("weight", pa.int32())]))
    want, vertices = oracle(plain)
    got = {}
    for mode in ("auto", "pipe"):
        monkeypatch.setenv(_local.HANDOFF_ENV, mode)
        D, ids = pathctl.distance_matrix(table, unreachable=-1)
        assert ids.tolist() == vertices
        np.testing.assert_array_equal(D, np.where(np.isfinite(want), want, -1))
        got[mode] = pathctl.apsp(table).sort_by([("source", "ascending"), ("target", "ascending")])
    assert got["auto"].num_rows == len(vertices) ** 2  # one cycle through every vertex
    assert got["auto"].equals(got["pipe"])
