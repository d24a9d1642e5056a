"""progress=True: the binary's progress lines shown as a tqdm bar where
tqdm is installed (here a fake tqdm module on sys.path), logged at INFO
otherwise; nothing of them in error messages; the result unchanged."""

from __future__ import annotations

import logging
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pathctl
from pathctl import _progress

SAMPLE = str(Path(__file__).resolve().parents[2] / "testdata" / "sample.parquet")  # 2000 vertices

# A budget of a few sources per block: many blocks, a line after each.
SMALL_MEM = 200_000

FAKE_TQDM = '''
bars = []


class tqdm:
    def __init__(self, total=None, desc=None, unit=None, **kwargs):
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.shown, self.closed = [], False
        bars.append(self)

    def refresh(self):
        assert not self.closed
        self.shown.append((self.n, self.total))

    def close(self):
        self.closed = True
'''


@pytest.fixture
def no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(_progress, "LOG_EVERY", "1ns")


@pytest.fixture
def fake_tqdm(tmp_path, monkeypatch):
    package = tmp_path / "fake" / "tqdm"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "auto.py").write_text(textwrap.dedent(FAKE_TQDM))
    for name in ("tqdm", "tqdm.auto"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "fake"))
    monkeypatch.setattr(_progress, "BAR_EVERY", "1ns")
    import tqdm.auto

    yield tqdm.auto.bars
    for name in ("tqdm", "tqdm.auto"):
        sys.modules.pop(name, None)


def test_log_lines_without_tqdm(no_tqdm, caplog):
    quiet = pathctl.apsp(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM)
    with caplog.at_level(logging.INFO, logger="pathctl"):
        table = pathctl.apsp(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM, progress=True)
    assert table.equals(quiet)
    lines = [r.getMessage() for r in caplog.records if re.match(r"pathctl: \d+ of 2000 sources", r.getMessage())]
    assert len(lines) >= 5, [r.getMessage() for r in caplog.records]
    done = [int(m.split()[1]) for m in lines]
    assert done == sorted(done) and done[-1] <= 2000
    assert all(" elapsed, " in m and m.endswith(" left") for m in lines)
    # The binary's own line is shown once, in this form, not logged raw too.
    assert not any("pathctl: progress" in r.getMessage() for r in caplog.records)


def test_no_progress_by_default(no_tqdm, caplog):
    with caplog.at_level(logging.INFO, logger="pathctl"):
        pathctl.apsp(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM)
    assert not any(" of 2000 sources" in r.getMessage() for r in caplog.records)


def test_a_bar_with_tqdm(fake_tqdm):
    quiet = pathctl.apsp(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM)
    table = pathctl.apsp(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM, progress=True)
    assert table.equals(quiet)
    (bar,) = fake_tqdm
    assert (bar.desc, bar.unit, bar.closed) == ("pathctl.apsp", "sources", True)
    assert len(bar.shown) >= 5
    assert [n for n, _ in bar.shown] == sorted(n for n, _ in bar.shown)
    assert bar.shown[-1] == (2000, 2000) and bar.total == 2000  # complete once the run is


def test_a_bar_of_a_stream_and_a_matrix(fake_tqdm):
    rows = sum(b.num_rows for b in pathctl.stream(SAMPLE, layout="stats", engine="cpu", mem=SMALL_MEM, progress=True))
    assert rows == 2000
    D, _ = pathctl.distance_matrix(SAMPLE, engine="cpu", mem=SMALL_MEM, progress=True)
    want, _ = pathctl.distance_matrix(SAMPLE, engine="cpu")
    np.testing.assert_array_equal(D, want)
    assert [b.desc for b in fake_tqdm] == ["pathctl.stream", "pathctl.distance_matrix"]
    assert all(b.closed and b.shown[-1] == (2000, 2000) for b in fake_tqdm)


def test_a_failed_run_closes_its_bar(fake_tqdm):
    with pytest.raises(pathctl.InvalidInputError, match='source "nowhere"') as info:
        pathctl.apsp(SAMPLE, sources=["nowhere"], progress=True)
    assert "progress" not in str(info.value)
    (bar,) = fake_tqdm
    assert bar.closed and (not bar.shown or bar.shown[-1][0] < 2000)
    with pytest.raises(TypeError, match="progress='yes': progress is True or False"):
        pathctl.apsp(SAMPLE, progress="yes")
    assert len(fake_tqdm) == 1  # refused before a bar is made
