"""Checks of bench_dataset.py: the part and temporary names it counts, on
a crafted dataset, and a whole run of the script on a 30 × 30 grid with
the CPU engine (it needs the pathctl binary: $PATHCTL_BIN, else
bin/pathctl, which `make test-python` builds).

    PATHCTL_BIN=bin/pathctl .venv/bin/python -m pytest -q bench/test_bench_dataset.py
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_dataset as bd  # noqa: E402

BINARY = os.environ.get("PATHCTL_BIN") or os.path.join(HERE, os.pardir, "bin", "pathctl")


def test_parts_and_temporaries(tmp_path):
    """A part renamed into place counts; its hidden temporary does not, and
    is what temporaries() finds; files outside partitions are neither."""
    (tmp_path / "source_block=00000").mkdir()
    (tmp_path / "source_block=00000" / "part-0.parquet").write_bytes(b"x" * 10)
    (tmp_path / "source_block=00001").mkdir()
    tmp = tmp_path / "source_block=00001" / ".part-0.parquet.tmp-42-host-abc"
    tmp.write_bytes(b"y" * 5)
    (tmp_path / "_pathctl.partial.json").write_text("{}")
    assert bd.complete_parts(tmp_path) == 1
    assert bd.temporaries(tmp_path) == [str(tmp)]
    assert bd.tree_bytes(tmp_path) == (17, 3)
    assert bd.complete_parts(tmp_path / "missing") == 0


def test_small_run(tmp_path):
    graph = tmp_path / "grid.parquet"
    subprocess.run([BINARY, "gen", "grid", "--rows", "30", "--cols", "30", "-o", str(graph)],
                   check=True, capture_output=True)
    out = tmp_path / "report.md"
    code = bd.main(["--pathctl", BINARY, "--graph", str(graph), "--engine", "cpu", "--gib", "0.01",
                    "--dataset-block", "30", "--dir", str(tmp_path), "--out", str(out)])
    report = out.read_text()
    assert code == 0, report
    rows = {line.split(" | ")[0].lstrip("| "): line for line in report.splitlines() if line.startswith("| ")}
    for step in ("a. sequential write (os.write 64 MiB, fsync)", "b. one file (-o one.parquet)",
                 "c. dataset (-o ds/)", "d1. dataset, SIGKILL at half", "d2. --resume to the end",
                 "d. kill + resume, total"):
        assert step in rows, report
    # 900 sources, every pair of the connected grid: 810,000 rows each time.
    for step in ("b. one file (-o one.parquet)", "c. dataset (-o ds/)", "d. kill + resume, total"):
        assert "| 810,000 |" in rows[step], rows[step]
    assert "30 parts" in rows["c. dataset (-o ds/)"]
    assert "rows = (b)" in rows["c. dataset (-o ds/)"]
    assert "rows = (b)" in rows["d. kill + resume, total"]
    assert "0 temporary files left" in rows["d. kill + resume, total"]
    # Killed at half: at least 15 parts renamed into place, of which the
    # partial manifest lists all but at most the parts written side by side
    # (Parquet: every core up to 8, at least 2; cmd/pathctl's
    # datasetWriters); the resume computes exactly the parts it does not
    # list.
    killed = re.search(r"(\d+) of 30 parts complete at the kill, (\d+) in the partial manifest",
                       rows["d1. dataset, SIGKILL at half"])
    kept, listed = int(killed.group(1)), int(killed.group(2))
    computed = int(re.search(r"(\d+) parts computed", rows["d2. --resume to the end"]).group(1))
    writers = max(2, min(os.cpu_count() or 1, 8))
    assert 15 <= kept < 30 and kept - writers <= listed <= kept, (kept, listed)
    assert listed + computed == 30, (listed, computed)
    # The run's folder is removed; only the graph and the report remain.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.parquet", "report.md"]
