"""Checks of bench_devices.py: the table and its ratio, the checks on
crafted stats files, and a whole run of the script on a tiny R-MAT graph
with the CPU engine (it needs the pathctl binary: $PATHCTL_BIN, else
bin/pathctl, which `make test-python` builds).

    PATHCTL_BIN=bin/pathctl .venv/bin/python -m pytest -q bench/test_bench_devices.py
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
from scipy.sparse.csgraph import dijkstra

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_cpu as bc  # noqa: E402
import bench_devices as bd  # noqa: E402

BINARY = os.environ.get("PATHCTL_BIN") or os.path.join(HERE, os.pardir, "bin", "pathctl")


class TableTest(unittest.TestCase):
    def test_ratio_is_of_medians(self):
        v = bd.Variant("", every=[1.0, 1.2, 5.0], one=[2.0, 2.4, 2.2])
        self.assertAlmostEqual(v.ratio(), 2.2 / 1.2)
        self.assertIsNone(bd.Variant("x", every=[1.0]).ratio())

    def test_table(self):
        table = bd.format_table([bd.Variant("", every=[1.0], one=[1.9]),
                                 bd.Variant("hubseeds=0", every=[1.5], problems=["boom"])], "all", "0")
        lines = table.splitlines()
        self.assertEqual(lines[0], "| setting | devices all (s) | devices 0 (s) | ratio | checks |")
        self.assertEqual(lines[2], "| default | 1.000 | 1.900 | 1.90 × | ok |")
        self.assertEqual(lines[3], "| `hubseeds=0` | 1.500 | — | — | 1 failed |")


class CheckTest(unittest.TestCase):
    def setUp(self):
        # A path 0-1-2 (weights 1, 2) and a lone arc 3-4 (weight 5), both ways.
        src, dst, w = [0, 1, 3], [1, 2, 4], [1, 2, 5]
        self.g = bc.canonical_graph(src + dst, dst + src, w + w)
        self.check = np.array([0, 3])
        self.want = dijkstra(self.g.csr(), directed=True, indices=self.check)
        self.dir = tempfile.mkdtemp()

    def stats_file(self, name, sums):
        rows = [bc.stats_of_row(self.want[k], int(s)) for k, s in enumerate(self.check)]
        path = os.path.join(self.dir, name)
        feather.write_feather(pa.table({
            "source": pa.array(self.g.ids[self.check], pa.int64()),
            "reachable": pa.array([r["reachable"] for r in rows], pa.int64()),
            "sum": pa.array(sums, pa.int64()),
            "eccentricity": pa.array([r["eccentricity"] for r in rows], pa.float64()),
            "closeness": pa.array([r["closeness"] for r in rows], pa.float64()),
            "harmonic": pa.array([r["harmonic"] for r in rows], pa.float64()),
        }), path, compression="uncompressed")  # an Arrow IPC file, as pathctl writes
        return path

    def test_stats_checked_against_scipy(self):
        good = self.stats_file("good.arrow", [4, 5])
        self.assertEqual(bc.check_stats(self.g, self.check, self.want, good, 0.0), [])
        bad = self.stats_file("bad.arrow", [4, 6])
        problems = bc.check_stats(self.g, self.check, self.want, bad, 0.0)
        self.assertEqual(len(problems), 1)
        self.assertIn("source 3: sum 6, expected 5", problems[0])

    def test_same_rows(self):
        a, b = self.stats_file("a.arrow", [4, 5]), self.stats_file("b.arrow", [4, 5])
        c = self.stats_file("c.arrow", [4, 6])
        self.assertTrue(bd.same_rows(a, b))
        self.assertFalse(bd.same_rows(a, c))


TRACE_TWO = """\
pathctl trace     100.0 ms pipeline: preparing the engine
pathctl trace     101.0 ms gpu 0: prepare
pathctl trace     110.0 ms gpu 0: hub rows: 64
pathctl trace     112.0 ms gpu 1: hub rows: 64
pathctl trace     112.5 ms gpu 0: hub phase 0: 32 rows
pathctl trace     113.0 ms gpu 1: hub phase 0: 32 rows
pathctl trace     150.5 ms gpu 0: hub phase 0 computed
pathctl trace     153.0 ms gpu 1: hub phase 0 computed
pathctl trace     160.0 ms gpu 0: hub phase 1: 32 rows
pathctl trace     160.0 ms gpu 1: hub phase 1: 32 rows
pathctl trace     180.0 ms gpu 0: hub phase 1 computed
pathctl trace     185.0 ms gpu 1: hub phase 1 computed
pathctl trace     180.0 ms gpu 0: hub rows ready
pathctl trace     185.0 ms gpu 1: hub rows ready
pathctl: a line that is not a trace
pathctl trace     200.0 ms gpu 0: stats of 96 sources done
pathctl trace     230.0 ms gpu 0: stats of 50 sources done
pathctl trace     210.0 ms gpu 1: stats of 96 sources done
"""

TRACE_ONE = """\
pathctl trace      50.0 ms pipeline: preparing the engine
pathctl trace      60.0 ms gpu 0: hub rows: 64
pathctl trace     300.0 ms gpu 0: hub rows ready
pathctl trace     340.0 ms gpu 0: stats of 96 sources done
"""


class BreakdownTest(unittest.TestCase):
    def test_two_devices(self):
        b0, b1 = bd.parse_trace(TRACE_TWO)
        self.assertEqual((b0.device, b1.device), (0, 1))
        self.assertAlmostEqual(b0.to_hubs, 10.0)
        self.assertAlmostEqual(b1.to_hubs, 12.0)
        self.assertAlmostEqual(b0.hubs, 70.0)
        self.assertAlmostEqual(b0.kernels, 38.0 + 20.0)
        self.assertAlmostEqual(b1.kernels, 40.0 + 25.0)
        self.assertEqual(b0.phases, 2)
        self.assertAlmostEqual(b0.after, 50.0)  # to its last stats done
        self.assertAlmostEqual(b1.after, 25.0)

    def test_one_device_and_table(self):
        (b,) = bd.parse_trace(TRACE_ONE)
        self.assertEqual((b.to_hubs, b.hubs, b.kernels, b.phases, b.after), (10.0, 240.0, None, 0, 40.0))
        table = bd.format_breakdowns([("", "0", [b]), ("hubseeds=0", "all", bd.parse_trace(TRACE_TWO))])
        lines = table.splitlines()
        self.assertEqual(len(lines), 2 + 1 + 2)
        self.assertEqual(lines[2], "| default | 0 | 0 | 10.0 | 240.0 | — | — | 40.0 |")
        self.assertEqual(lines[3], "| `hubseeds=0` | all | 0 | 10.0 | 70.0 | 58.0 (2 phases) | 12.0 | 50.0 |")

    def test_no_trace(self):
        self.assertEqual(bd.parse_trace("pathctl: 10 sources in 0.1s\n"), [])


class CommandTest(unittest.TestCase):
    def run_with(self, setting):
        args = SimpleNamespace(pathctl="pathctl", engine="gpu", limit=10)
        done = subprocess.CompletedProcess([], 0, stdout=None, stderr="")
        with mock.patch.object(bd.subprocess, "run", return_value=done) as run:
            bd.stats_run(args, "g.parquet", "s.arrow", "all", setting, io.StringIO())
        return run.call_args.args[0], run.call_args.kwargs["env"]

    def test_variant_is_passed_as_tune(self):
        # The setting reaches the binary as --tune, never as the
        # environment the library once read.
        cmd, env = self.run_with("hubseeds=0,hubpack=0")
        self.assertEqual(cmd[-2:], ["--tune", "hubseeds=0,hubpack=0"])
        self.assertNotIn("PATHCTL_BATCHED", env)
        cmd, env = self.run_with("")
        self.assertNotIn("--tune", cmd)
        self.assertNotIn("PATHCTL_BATCHED", env)


@unittest.skipUnless(os.path.exists(BINARY), "no pathctl binary (make build)")
class WholeRunTest(unittest.TestCase):
    def test_cpu_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.md")
            proc = subprocess.run(
                [sys.executable, os.path.join(HERE, "bench_devices.py"), "--pathctl", BINARY, "--engine", "cpu",
                 "--scale", "8", "--repeat", "2", "--variant", "", "--variant", "hubseeds=0", "--dir", tmp,
                 "--out", out, "--breakdown"], capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
            report = open(out).read()
            self.assertIn("stats of every source", report)
            rows = [line for line in report.splitlines() if line.startswith("| default") or line.startswith("| `")]
            self.assertEqual(len(rows), 2, report)
            for row in rows:
                cells = [c.strip() for c in row.strip("|").split("|")]
                self.assertEqual(len(cells[1].split(", ")), 2, row)
                self.assertEqual(len(cells[2].split(", ")), 2, row)
                self.assertTrue(cells[3].endswith("×"), row)
                self.assertEqual(cells[4], "ok", row)
            self.assertNotIn("Failed", report)
            # The CPU engine traces no device: the breakdown's table has
            # its header alone.
            self.assertIn("Where the time went", report)


if __name__ == "__main__":
    unittest.main()
