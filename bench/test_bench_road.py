"""Checks of the road-network benchmark (bench_road.py): its checks on
crafted answers, and one whole run on a 30 × 30 grid with the CPU engine,
with the peer where routingkit_cch imports and without it otherwise. It
needs the pathctl binary ($PATHCTL_BIN, else bin/pathctl; `make
test-python` builds it).

    PATHCTL_BIN=bin/pathctl .venv/bin/python -m pytest -q bench/test_bench_road.py
"""

import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_cpu as bc  # noqa: E402
import bench_road as br  # noqa: E402

PATHCTL = os.environ.get("PATHCTL_BIN", os.path.join(HERE, os.pardir, "bin", "pathctl"))


def peer_imports() -> bool:
    try:
        import routingkit_cch  # noqa: F401
    except ImportError:
        return False
    return True


def square_road() -> br.Road:
    """0 → 1 → 3 and 0 → 2 → 3 of weights 1, 2 and 5, 1: a 2 × 2 grid."""
    g = bc.canonical_graph([0, 1, 0, 2], [1, 3, 2, 3], [1, 2, 5, 1])
    return br.Road("", g, 2)


class CheckTest(unittest.TestCase):
    def test_path(self):
        road = square_road()
        w = br.arc_weights(road, {0, 1, 2})
        self.assertEqual(w, {(0, 1): 1.0, (1, 3): 2.0, (0, 2): 5.0, (2, 3): 1.0})
        self.assertEqual(br.check_path(road, w, 0, 3, 3.0, 3.0, [0, 1, 3]), [])
        self.assertIn("distance 6.0, expected 3.0", br.check_path(road, w, 0, 3, 3.0, 6.0, [0, 2, 3])[0])
        self.assertIn("weigh 6.0, its distance is 3.0", br.check_path(road, w, 0, 3, 3.0, 3.0, [0, 2, 3])[0])
        self.assertIn("not an arc", br.check_path(road, w, 0, 3, 3.0, 3.0, [0, 3])[0])
        self.assertIn("runs from [1]", br.check_path(road, w, 0, 3, 3.0, 3.0, [1, 3])[0])
        self.assertEqual(br.check_path(road, w, 3, 0, np.inf, None, []), [])  # unreachable both ways
        self.assertIn("expected inf", br.check_path(road, w, 3, 0, np.inf, 4.0, [3, 0])[0])

    def test_same_matrix(self):
        first = np.array([[0.0, 1.0], [np.inf, 2.0]])
        self.assertEqual(br.same_matrix("x", first, first.copy()), [])
        self.assertEqual(br.same_matrix("x", first, first[:1].copy()), [])  # a sample of the first rows
        other = first.copy()
        other[1, 1] = 3.0
        self.assertIn("1 of 4 distances differ", br.same_matrix("x", first, other)[0])
        self.assertIn("shape", br.same_matrix("x", first, np.zeros((2, 3)))[0])

    def test_peer_rows_as_matrix(self):
        m = br.as_matrix([[0, None, 7], [None, 3, 4]])
        self.assertTrue(np.array_equal(m, [[0, np.inf, 7], [np.inf, 3, 4]]))

    def test_coordinates_and_csr_bytes(self):
        road = square_road()
        self.assertEqual(road.lat.tolist(), [0, 0, 1, 1])
        self.assertEqual(road.lon.tolist(), [0, 1, 0, 1])
        self.assertEqual(br.csr_bytes(4, 4, "int32"), 8 * 5 + 4 * 4 + 4 * 4)
        self.assertEqual(br.csr_bytes(4, 4, "int64"), 8 * 5 + 4 * 4 + 8 * 4)

    def test_index_line(self):
        proc = br.Proc(1.0, 1.0, "", "pathctl: wrote the hierarchy of 900 vertices (6592 arcs, 3112 shortcuts) "
                                     "to /x/g.idx in 1m2.5s\n")
        idx = br.parse_index(proc)
        self.assertEqual((idx.arcs, idx.shortcuts, idx.build), (6592, 3112, 62.5))
        with self.assertRaises(RuntimeError):
            br.parse_index(br.Proc(1.0, 1.0, "", "nothing\n"))

    def test_unimportable_peer_says_why(self):
        with mock.patch.dict(sys.modules, {"routingkit_cch": None}):
            module, why = br.import_peer()
        self.assertIsNone(module)
        self.assertIn("routingkit_cch does not import", why)

    def test_engines(self):
        self.assertEqual(br.parse_args(["--engine", "cpu,gpu"]).engine, ["cpu", "gpu"])
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            br.parse_args(["--engine", "tpu"])


@unittest.skipUnless(os.path.exists(PATHCTL), f"no pathctl binary at {PATHCTL} (make build)")
class WholeRunTest(unittest.TestCase):
    def test_tiny_grid(self):
        peer = peer_imports()
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "road.md")
            argv = ["--pathctl", PATHCTL, "--rows", "30", "--cols", "30", "--od", "20", "--engine", "cpu",
                    "--pairs", "50", "--peer-sample", "8", "--peer-threads", "2", "--work", work, "--out", out]
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                code = br.main(argv + ([] if peer else ["--skip-peer"]))
            with open(out) as f:
                text = f.read()
            # The oracle checked the OD matrices against scipy on the whole
            # 20 × 20 sample: each --check row, then the matrices in full.
            _, columns, got = bc.read_matrix(os.path.join(work, "od-index-cpu.arrow"))
            self.assertEqual(got.shape, (20, 20))
            self.assertEqual(len(columns), 20)
        self.assertEqual(code, 0, text)
        self.assertNotIn("MISMATCH", text)
        self.assertNotIn("FAILURES", text)
        rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| tool")]
        steps = [line.split(" | ")[1] for line in rows]
        want = ["`index G -o X`", "OD 20 × 20, `--index X`, `--engine cpu`", "OD 20 × 20, no index, `--engine cpu`",
                "one pair, `path --algo ch --index X`", "one pair, 1 × 1 `run --index X`"]
        if peer:
            want += ["order: `compute_order_inertial` (nested dissection)", "preprocessing: `CCH(order, tail, head)`",
                     "customization: `CCHMetric(cch, weights)`", "OD 20 × 20, `CCHOneToMany`, 1 thread",
                     "OD 20 × 20, `CCHOneToMany`, 2 threads", "one pair, `CCHQuery.run` (distance and node path)"]
        self.assertEqual(steps, want)
        self.assertIn("4 rows equal scipy's | engine cpu: ch", rows[1])
        self.assertIn("4 rows equal scipy's; all equal the first matrix", rows[2])
        self.assertIn("distance equals scipy's; the path's arcs add up to it", rows[3])
        self.assertIn("distance equals scipy's", rows[4])
        self.assertIn("index build included", text)
        if peer:
            self.assertIn("4 rows equal scipy's; 20 rows equal pathctl's", rows[9])
            self.assertIn("4 pairs' distances equal scipy's", rows[10])
            self.assertIn("routingkit-cch's query phase", text)
        else:
            self.assertIn("--skip-peer: the peer rows are left out", text)


if __name__ == "__main__":
    unittest.main()
