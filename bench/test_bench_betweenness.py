"""Checks of the betweenness benchmark harness (make test-python runs them):
a small R-MAT through the whole harness, NetworKit made unimportable so that
the one-line skip is what shows."""

import os
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_betweenness as bb  # noqa: E402


class BenchBetweennessTest(unittest.TestCase):
    def test_small_run_without_networkit(self):
        binary = os.environ.get("PATHCTL_BIN") or str(bb.REPO / "bin" / "pathctl")
        with tempfile.TemporaryDirectory() as work:
            out = Path(work) / "report.md"
            code = bb.main(["--pathctl", binary, "--scale", "6", "--rounds", "1", "--threads", "1",
                            "--networkit-python", "/bin/false", "--work", work, "--out", str(out)])
            self.assertEqual(code, 0)
            report = out.read_text()
            self.assertIn("NetworKit skipped: /bin/false cannot import networkit", report)
            self.assertIn("| pathctl (whole command) |", report)
            self.assertNotIn("| NetworKit", report)
            self.assertIn("| networkx ", report)
            self.assertIn("16 sources, extrapolated to", report)

    def test_dense_graph_is_pathctls(self):
        """Self-loops dropped, duplicates at their smallest weight, ids in
        ascending order."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "g.parquet")
            pq.write_table(pa.table({"src": [30, 10, 10, 20, 20], "dst": [10, 20, 20, 20, 30],
                                     "weight": [4, 7, 2, 1, 5]}), path)
            ids, g = bb.dense_graph(path)
        self.assertEqual(ids.tolist(), [10, 20, 30])
        arcs = sorted(zip(g["src"].tolist(), g["dst"].tolist(), g["w"].tolist()))
        self.assertEqual(arcs, [(0, 1, 2), (1, 2, 5), (2, 0, 4)])
        self.assertEqual(g["n"], 3)
        self.assertTrue(np.all(g["src"] != g["dst"]))


if __name__ == "__main__":
    unittest.main()
