"""What the package hands the binary and takes from it besides data: which
binary it runs, the vertex set (``vertices=`` → ``--vertices FILE``), and the
binary's notes and warnings (→ UserWarning).
"""

from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pyarrow as pa
import pytest

import pathctl
from pathctl import _discovery, _local
from conftest import _binary


def wrapper(tmp_path, body: str) -> str:
    """An executable ``pathctl`` in tmp_path that runs ``body`` (sh) and then
    the real binary ($REAL) with the arguments left in "$@"."""
    path = tmp_path / "pathctl"
    real = _binary()
    path.write_text(f"#!/bin/sh\nREAL='{real}'\n{body}\nexec \"$REAL\" \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def small():
    return pa.table({"src": pa.array([1, 2], pa.int64()), "dst": pa.array([2, 3], pa.int64())})


# --- which binary ------------------------------------------------------------

def test_bundled_binary_comes_first(monkeypatch, tmp_path):
    bundled = wrapper(tmp_path, "")
    other = tmp_path / "other"
    other.mkdir()
    explicit = wrapper(other, "")
    monkeypatch.setattr(_discovery, "bundled_binary", lambda: bundled)
    # A PATHCTL_BIN left over from a checkout does not shadow the bundled one...
    monkeypatch.setenv("PATHCTL_BIN", str(tmp_path / "stale-pathctl"))
    assert pathctl.find_binary() == bundled
    # ...but binary= is the caller's explicit choice.
    assert pathctl.find_binary(explicit) == explicit


def test_no_bundled_binary_in_a_source_install():
    # The test environment installs the package editable, from source: no
    # wheel, so nothing is bundled and PATHCTL_BIN is the binary.
    assert _local.bundled_binary() is None
    assert pathctl.find_binary() == _binary()


# --- vertices= -----------------------------------------------------------------

RECORDER = """#!{python}
# Records the arguments and the --vertices file, then runs the real binary
# without --vertices (which it may not know yet).
import os, shutil, sys
args = sys.argv[1:]
with open({seen!r} + "/args", "w") as f:
    f.write("\\n".join(args))
if "--vertices" in args:
    i = args.index("--vertices")
    shutil.copy(args[i + 1], {seen!r} + "/vertices.arrow")
    del args[i:i + 2]
os.execv({real!r}, [{real!r}] + args)
"""


def test_vertices_keyword_writes_one_id_column(tmp_path):
    import sys

    seen = tmp_path / "seen"
    seen.mkdir()
    binary = tmp_path / "pathctl"
    binary.write_text(RECORDER.format(python=sys.executable, seen=str(seen), real=_binary()))
    binary.chmod(0o755)
    binary = str(binary)
    int32_edges = small().cast(pa.schema([("src", pa.int32()), ("dst", pa.int32())]))
    for edges, given, want in [
            (small(), [4, 1, 2], pa.array([4, 1, 2], pa.int64())),
            (small(), np.array([7, 8], dtype=np.int32), pa.array([7, 8], pa.int64())),  # the edges' type
            (int32_edges, [7, 8], pa.array([7, 8], pa.int32())),
            (small(), pa.array(["a", "b"]), pa.array(["a", "b"])),  # not ids of this type: as given
            (small(), range(3), pa.array([0, 1, 2], pa.int64()))]:
        pathctl.apsp(edges, vertices=given, binary=binary)
        args = (seen / "args").read_text().splitlines()
        assert "--vertices" in args
        with pa.memory_map(str(seen / "vertices.arrow")) as src:
            table = pa.ipc.open_file(src).read_all()
        assert table.column_names == ["vertex"]
        assert table.column("vertex").combine_chunks().equals(want)
    # One id is not a list of them (TypeError, as for sources and targets).
    with pytest.raises(TypeError, match=r"vertices='abc': vertices is a list of ids"):
        pathctl.apsp(small(), vertices="abc", binary=binary)


def test_isolated_vertices_appear_unreachable():
    edges = small()
    D, ids = pathctl.distance_matrix(edges, vertices=[1, 2, 3, 4, 5])
    assert ids.tolist() == [1, 2, 3, 4, 5]
    assert D.shape == (5, 5)
    D = np.ma.masked_invalid(D)  # unreachable: inf
    assert D.mask[3].sum() == 4 and D.mask[4].sum() == 4  # 4 and 5 reach only themselves
    assert D.mask[:, 3].sum() == 4
    stats = pathctl.apsp(edges, layout="stats", vertices=pa.array([1, 2, 3, 4, 5], pa.int64()))
    assert stats.num_rows == 5
    assert stats.column("reachable").to_pylist()[3:] == [0, 0]
    pairs = pathctl.apsp(edges, sources=[5], vertices=[1, 2, 3, 4, 5])
    assert pairs.to_pydict() == {"source": [5], "target": [5], "distance": [0]}


# --- notes and warnings --------------------------------------------------------

NOTE = ('pathctl: note: took column "minutes" as the edge weight (no column is named "weight"); '
        '--weight-col NAME chooses the weight, --unweighted counts edges')


def test_binary_warnings_become_user_warnings(tmp_path):
    binary = wrapper(tmp_path, f"echo '{NOTE}' >&2\necho 'pathctl: warning: a second line' >&2")
    with pytest.warns(UserWarning) as record:
        table = pathctl.apsp(small(), binary=binary)
    assert table.num_rows > 0
    messages = [str(w.message) for w in record]
    assert messages == ['took column "minutes" as the edge weight (no column is named "weight"); '
                        'weight_col=NAME chooses the weight, unweighted=True counts edges', "a second line"]
    # Attributed to the caller's line, not to pathctl's internals.
    assert record[0].filename == __file__
    # A stream warns too, once.
    with pytest.warns(UserWarning) as record:
        reader = pathctl.stream(small(), binary=binary)
        reader.read_all()
    assert len(record) == 2


def test_no_warning_without_a_note(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pathctl.apsp(small())


def test_unused_weight_column_warns():
    """A table with src, dst, minutes: the binary takes the lone numeric
    column as the weight and says so in a note, which arrives as a
    UserWarning naming the column, in Python's words."""
    edges = pa.table({"src": [1, 2], "dst": [2, 3], "minutes": [5, 7]})
    with pytest.warns(UserWarning, match="minutes") as record:
        pathctl.apsp(edges)
    text = str(record[0].message)
    assert "--" not in text and "weight_col" in text, text  # weight_col=..., not --weight-col
    # ...and the distances are weighted by it: 1 -> 2 -> 3 weighs 5 + 7.
    with pytest.warns(UserWarning, match="minutes"):
        table = pathctl.sssp(edges, 1)
    assert dict(zip(table.column("target").to_pylist(), table.column("distance").to_pylist()))[3] == 12


# --- one version ----------------------------------------------------------------

def test_package_and_binary_share_the_version_file():
    from conftest import REPO

    want = (REPO / "VERSION").read_text().strip()
    assert pathctl.__version__ == want
    got = pathctl.info()["version"]
    assert got == want, f"the binary says {got}: build it with `make build`, which links VERSION in"
