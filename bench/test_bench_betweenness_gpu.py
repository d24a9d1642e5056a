"""Checks of the GPU betweenness harness (make test-python runs them): its
rows on graphs 2^10 times smaller, on the CPU engine, through the whole
harness, networkx check included."""

import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_betweenness_gpu as bg  # noqa: E402


class BenchBetweennessGPUTest(unittest.TestCase):
    def test_rows_shrunk_on_the_cpu(self):
        binary = os.environ.get("PATHCTL_BIN") or str(bg.REPO / "bin" / "pathctl")
        with tempfile.TemporaryDirectory() as work:
            out = Path(work) / "report.md"
            code = bg.main(["--pathctl", binary, "--engine", "cpu", "--shrink", "10", "--check-sources", "3",
                            "--work", work, "--out", str(out)])
            self.assertEqual(code, 0)
            report = out.read_text()
            self.assertIn("Betweenness on the CPU engine", report)
            for label in ("R-MAT 16, exact", "R-MAT 16 edges, exact", "R-MAT 18, exact", "R-MAT 20, k = 1,024", "1000² grid, k = "):
                self.assertIn(f"| {label}", report)
            self.assertIn("networkx, ", report)
            self.assertIn("cpu engine, ", report)


if __name__ == "__main__":
    unittest.main()
