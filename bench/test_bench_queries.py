"""Checks of the narrow queries' benchmark (bench_queries.py): its parsing,
its graph and its scipy checks on crafted results, and one whole run on tiny
graphs with the CPU engine, which needs the pathctl binary ($PATHCTL_BIN, else
bin/pathctl; `make test-python` builds it).

    PATHCTL_BIN=bin/pathctl .venv/bin/python -m pytest -q bench/test_bench_queries.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import pyarrow as pa
from scipy.sparse.csgraph import dijkstra

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_queries as bq  # noqa: E402

PATHCTL = os.environ.get("PATHCTL_BIN", os.path.join(HERE, os.pardir, "bin", "pathctl"))


def write_arrow(path, table):
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)


class ParseTest(unittest.TestCase):
    def test_durations(self):
        self.assertEqual(bq.parse_duration("117ms"), 0.117)
        self.assertEqual(bq.parse_duration("2.5s"), 2.5)
        self.assertAlmostEqual(bq.parse_duration("1m2.345s"), 62.345)
        self.assertEqual(bq.parse_duration("0s"), 0.0)
        self.assertAlmostEqual(bq.parse_duration("950µs"), 950e-6)
        self.assertAlmostEqual(bq.parse_duration("1h0m1s"), 3601.0)
        for bad in ("", "12", "1.2x", "ms"):
            with self.assertRaises(ValueError):
                bq.parse_duration(bad)

    def test_verbose(self):
        stderr = (
            "pathctl: CSR built on the device in 6.86ms\n"
            "pathctl: engine gpu, algorithm auto: batched (B=32); targets and cutoff applied on the host, 901 vertices, "
            "21112 arcs, int64 distances (ready in 0s)\n"
            "pathctl: 901 sources in 4 blocks of up to 256\n"
            "pathctl: 901 sources × 901 vertices (21112 arcs): 811801 pairs in 1m2.5s (6.92M pairs/s), engine gpu, "
            "algorithm auto: batched (B=32); targets and cutoff applied on the host; 901 rows, 41.5 KiB written to s.arrow\n"
            "pathctl: device-to-host: 3247204 bytes of results\n")
        run = bq.parse_verbose(stderr, 70.0)
        self.assertEqual(run.pipeline, 62.5)
        self.assertEqual(run.seconds, 62.5)
        self.assertEqual(run.engine, "gpu")
        self.assertEqual(run.algorithm, "auto: batched (B=32); targets and cutoff applied on the host")
        self.assertTrue(run.host_narrowed)
        self.assertEqual(run.dist_type, "int64")
        self.assertEqual(run.d2h, 3247204)
        bare = bq.parse_verbose("nothing here\n", 3.0)
        self.assertIsNone(bare.d2h)  # the CPU engine reports no copies
        self.assertIsNone(bare.pipeline)
        self.assertEqual(bare.seconds, 3.0)  # wall time where no pipeline time was printed
        self.assertFalse(bare.host_narrowed)

    def test_device_times(self):
        stderr = ("pathctl: time in the blocks: computing or waiting for them 1.2s, building records 3ms, waiting for the "
                  "sink 0s; in the sink 10ms; on the device: kernels 812ms, device-to-host copies 1.5s, moves into the "
                  "blocks 20ms; on the host before the kernels: planning them 4ms, allocating device memory 1ms\n")
        self.assertEqual(bq.device_times(bq.parse_verbose(stderr, 2.0)), (0.812, 1.5))
        cpu = "pathctl: time in the blocks: computing or waiting for them 1.2s, building records 3ms, waiting for the sink 0s; in the sink 10ms\n"
        self.assertIsNone(bq.device_times(bq.parse_verbose(cpu, 2.0)))
        line = bq.cutoff_times(bq.parse_verbose(stderr, 2.0), bq.parse_verbose(stderr.replace("812ms", "4.06s"), 9.0), 1.5, 4, 100)
        self.assertIn("kernels 0.812 s vs 4.06 s (5×), device-to-host copies 1.5 s vs 1.5 s", line)

    def test_peer_rounds(self):
        self.assertEqual(bq.peer_rounds(0.5, 100, 60), 100)  # 50 s: every round
        self.assertEqual(bq.peer_rounds(2.0, 256, 60), 30)  # 60 s / 2 s
        self.assertEqual(bq.peer_rounds(100.0, 256, 60), 1)  # at least the first
        self.assertEqual(bq.peer_rounds(0.0, 7, 1), 7)

    def test_percentile_lower(self):
        rng = np.random.default_rng(3)
        for q in (1, 10, 50, 99, 100):
            x = rng.integers(1, 500, size=997).astype(float)
            self.assertEqual(bq.percentile_lower(x, q), float(np.percentile(x, q, method="lower")))
        self.assertEqual(bq.percentile_lower(np.array([7.0]), 1), 7.0)

    def test_ratio(self):
        self.assertEqual(bq.ratio_of(6.0, 2.0), 3.0)
        self.assertIsNone(bq.ratio_of(6.0, 0.0))  # a pipeline time printed as 0s
        self.assertIsNone(bq.at_least(None, 5))
        self.assertTrue(bq.at_least(5.0, 5))
        self.assertFalse(bq.at_least(4.9, 5))

    def test_args(self):
        a = bq.parse_args([])
        self.assertEqual((a.grid_side, a.rmat_scale, a.od_sources, a.od_targets, a.nearest_sources, a.k, a.rmat_sources),
                         (1000, 18, 4096, 4096, 10000, 16, 0))
        self.assertEqual(a.rows, bq.ROWS)
        self.assertEqual(bq.parse_args(["--rows", "od, nearest"]).rows, ["od", "nearest"])
        with self.assertRaises(SystemExit):
            bq.parse_args(["--rows", "od,paths"])
        with self.assertRaises(SystemExit):
            bq.parse_args(["--percentile", "0"])


class GridTest(unittest.TestCase):
    def test_shape_weights_and_seed(self):
        side = 20
        src, dst, w = bq.grid_edges(side, 0.1, 7)
        full = 2 * side * (side - 1)
        self.assertEqual(len(src), full - round(0.1 * full))
        self.assertTrue(np.all((w >= 1) & (w <= 1000)))
        step = dst - src
        self.assertTrue(np.all((step == 1) | (step == side)), "an edge between non-neighbours")
        self.assertTrue(np.all(src // side == np.where(step == 1, dst // side, src // side)), "a right edge wraps a row")
        self.assertEqual(len(set(zip(src.tolist(), dst.tolist()))), len(src), "a repeated edge")
        again = bq.grid_edges(side, 0.1, 7)
        self.assertTrue(all(np.array_equal(a, b) for a, b in zip((src, dst, w), again)), "not deterministic")
        other = bq.grid_edges(side, 0.1, 8)
        self.assertFalse(np.array_equal(src, other[0]) and np.array_equal(w, other[2]))

    def test_undirected_graph(self):
        g = bq.undirected_graph(np.array([1, 2]), np.array([2, 3]), np.array([5, 7]))
        self.assertEqual(g.ids.tolist(), [1, 2, 3])
        self.assertEqual(g.m, 4)
        d = dijkstra(g.csr(), directed=True)
        self.assertEqual(d[2, 0], 12.0)


class CheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # A path 10 - 20 - 30 - 40 with weights 1, 1, 2 and an isolated pair 50 - 60.
        self.g = bq.undirected_graph(np.array([10, 20, 30, 50]), np.array([20, 30, 40, 60]), np.array([1, 1, 2, 3]))
        self.d = dijkstra(self.g.csr(), directed=True)

    def tearDown(self):
        self.tmp.cleanup()

    def test_k_nearest_of_row(self):
        row = np.array([2.0, 0.0, 2.0, 1.0, np.inf, 2.0])
        vs, ds = bq.k_nearest_of_row(row, 1, 3)
        self.assertEqual(vs.tolist(), [3, 0, 2])  # ties by vertex order; the source and the unreachable left out
        self.assertEqual(ds.tolist(), [1.0, 2.0, 2.0])
        vs, _ = bq.k_nearest_of_row(row, 1, 10)
        self.assertEqual(vs.tolist(), [3, 0, 2, 5])

    def k_file(self, rows):
        path = os.path.join(self.tmp.name, "k.arrow")
        src, tgt, dist, rank = zip(*rows)
        write_arrow(path, pa.table({"source": pa.array(src, pa.int64()), "target": pa.array(tgt, pa.int64()),
                                    "distance": pa.array(dist, pa.int32()), "rank": pa.array(rank, pa.int32())}))
        return path

    def test_check_k_nearest(self):
        check = np.array([1, 4])  # vertex 20: 10 and 30 tie at 1; vertex 50: only 60
        good = [(20, 10, 1, 1), (20, 30, 1, 2), (50, 60, 3, 1)]
        self.assertEqual(bq.check_k_nearest(self.g, self.d[check], check, 2, self.k_file(good)), [])
        swapped = [(20, 30, 1, 1), (20, 10, 1, 2), (50, 60, 3, 1)]  # tie broken the wrong way
        self.assertEqual(len(bq.check_k_nearest(self.g, self.d[check], check, 2, self.k_file(swapped))), 1)
        short = [(20, 10, 1, 1), (50, 60, 3, 1)]
        self.assertTrue(bq.check_k_nearest(self.g, self.d[check], check, 2, self.k_file(short)))
        with_self = [(20, 20, 0, 1), (20, 10, 1, 2), (50, 60, 3, 1)]
        self.assertTrue(bq.check_k_nearest(self.g, self.d[check], check, 2, self.k_file(with_self)))

    def nearest_file(self, rows):
        path = os.path.join(self.tmp.name, "n.arrow")
        v, d, s = zip(*rows)
        write_arrow(path, pa.table({"vertex": pa.array(v, pa.int64()), "distance": pa.array(d, pa.int32()),
                                    "source": pa.array(s, pa.int64())}))
        return path

    def test_check_nearest(self):
        g = self.g
        sources = np.array([0, 2])  # 10 and 30: vertex 20 is at 1 from both, a tie the smaller id (10) wins
        csr = g.csr()
        dist, _, owner = dijkstra(csr, directed=True, indices=sources, min_only=True, return_predecessors=True)
        rng = np.random.default_rng(1)
        good = [(10, 0, 10), (20, 1, 10), (30, 0, 30), (40, 2, 30)]
        problems, line = bq.check_nearest(g, csr, sources, dist, owner, self.nearest_file(good), 4, rng)
        self.assertEqual(problems, [])
        self.assertIn("distances equal scipy's", line)
        tie_lost = [(10, 0, 10), (20, 1, 30), (30, 0, 30), (40, 2, 30)]
        # Sampling every reached vertex catches the tie given to the larger id.
        problems, _ = bq.check_nearest(g, csr, sources, dist, owner, self.nearest_file(tie_lost), 4, rng)
        self.assertTrue(any("vertex 20" in p for p in problems), problems)
        wrong = [(10, 0, 10), (20, 1, 10), (30, 0, 30), (40, 3, 30)]
        problems, _ = bq.check_nearest(g, csr, sources, dist, owner, self.nearest_file(wrong), 4, rng)
        self.assertTrue(any("distances" in p for p in problems), problems)
        unreached_listed = good + [(50, 9, 10)]
        problems, _ = bq.check_nearest(g, csr, sources, dist, owner, self.nearest_file(unreached_listed), 4, rng)
        self.assertTrue(any("reachability" in p for p in problems), problems)

    def test_compare_stats(self):
        row = self.d[1]  # from 20: 1, 0, 1, 3, inf, inf
        exp = bq.bc.stats_of_row(row, 1)
        stats = {k: np.array([v if v is not None else np.nan]) for k, v in exp.items()}
        self.assertEqual(bq.compare_stats(row, 1, stats, 0, "x"), [])
        clipped = np.where(row > 1, np.inf, row)
        problems = bq.compare_stats(clipped, 1, stats, 0, "x")
        self.assertTrue(any("reachable" in p for p in problems) and any("eccentricity" in p for p in problems), problems)


class TableTest(unittest.TestCase):
    def test_table(self):
        rep = bq.Report(rows=[bq.Row("grid", 10, 40, "OD matrix 2 × 2", 0.5, 60.0, 120.0, "≥ 100×", True, "ok", "n1",
                                     wall=0.75, d2h=16, d2h_needed=16),
                              bq.Row("rmat", 8, 30, "k nearest, K = 16", 2.0, 1.0, 2.0, "≤ 1.5×", False, "MISMATCH")],
                        failures=["bad row"], notes=["a note"])
        text = bq.format_table(rep, "M", "cmd")
        lines = [x for x in text.splitlines() if x.startswith("| ")]
        self.assertEqual(lines[0], "| " + " | ".join(bq.HEADER) + " |")
        cells = [[c.strip() for c in x.strip("|").split("|")] for x in lines[1:]]
        self.assertEqual(cells[0][4:9], ["0.5", "60", "120×", "≥ 100×", "yes"])
        self.assertEqual(cells[1][6:9], ["2×", "≤ 1.5×", "no"])
        self.assertEqual(cells[0][10:13], ["0.75", "16 B (needs 16 B)", "n1"])
        self.assertEqual(cells[1][10:12], ["—", "—"])  # no wall time or device given
        self.assertIn("FAILURES:\n- bad row", text)
        self.assertIn("- a note", text)


class WholeRunTest(unittest.TestCase):
    """The script end to end on tiny graphs with the CPU engine."""

    def run_script(self, pathctl, work, *extra):
        cmd = [sys.executable, os.path.join(HERE, "bench_queries.py"), "--pathctl", pathctl, "--engine", "cpu",
               "--grid-side", "24", "--rmat-scale", "8", "--od-sources", "12", "--od-targets", "9",
               "--nearest-sources", "15", "--check", "3", "--workers", "2",
               "--work", work, "--out", os.path.join(work, "report.md"), *extra]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    def test_tiny_run_passes_its_checks(self):
        self.assertTrue(os.access(PATHCTL, os.X_OK), f"no pathctl binary at {PATHCTL}: build it (go build -o bin/pathctl ./cmd/pathctl)")
        with tempfile.TemporaryDirectory() as work:
            proc = self.run_script(PATHCTL, work, "--rmat-sources", "100")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(os.path.join(work, "report.md")) as f:
                text = f.read()
        rows = [[c.strip() for c in x.strip("|").split("|")] for x in text.splitlines()
                if x.startswith("| grid |") or x.startswith("| rmat |")]
        self.assertEqual([r[3] for r in rows], ["OD matrix 12 × 9", "nearest source, 15 sources", "cutoff, stats", "k nearest, K = 16"])
        for r in rows:
            self.assertNotIn("MISMATCH", r[9])
            self.assertRegex(r[4], r"^[0-9.e+-]+$")  # a pipeline time was parsed
            self.assertIn(r[8], ("yes", "no", "—"))  # — where a time rounds to 0 ms
        for r in rows:
            self.assertRegex(r[10], r"^[0-9.e+-]+$")  # the process's wall time
            self.assertEqual(r[11], "—")  # the CPU engine copies nothing off a device
        self.assertIn("100 of", rows[2][12])  # sampled sources, extrapolated
        self.assertNotIn("FAILURES", text)
        # the cutoff row's in-process times, a note of their own
        self.assertRegex(text, r"rmat cutoff row, in the process: pipeline [0-9.e+-]+ s vs [0-9.e+-]+ s without the cutoff; "
                               r"scipy dijkstra\(limit=cutoff\)")

    def test_failed_run_exits_1(self):
        with tempfile.TemporaryDirectory() as work:
            fake = os.path.join(work, "pathctl")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'pathctl: broken' >&2\nexit 3\n")
            os.chmod(fake, 0o755)
            proc = self.run_script(fake, work, "--rows", "od")
            self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
            self.assertIn("pathctl: broken", proc.stdout)
            with open(os.path.join(work, "report.md")) as f:
                self.assertIn("FAILURES:", f.read())


if __name__ == "__main__":
    unittest.main()
