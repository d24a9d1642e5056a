"""Checks of the Flight benchmark (bench_flight.py): its argument parsing,
its reading of the summary line, and one whole run on a tiny graph with the
CPU engine, which needs the pathctl binary ($PATHCTL_BIN, else bin/pathctl;
`make test-python` builds it).

    PATHCTL_BIN=bin/pathctl .venv/bin/python -m pytest -q bench/test_bench_flight.py
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_flight as bf  # noqa: E402

PATHCTL = os.environ.get("PATHCTL_BIN", os.path.join(HERE, os.pardir, "bin", "pathctl"))


class ParseArgs(unittest.TestCase):
    def test_defaults(self):
        a = bf.parse_args([])
        self.assertEqual((a.scale, a.engine, a.repeat, a.tmpfs, a.max_message_bytes),
                         (14, "auto", 3, "/dev/shm", 0))

    def test_refuses(self):
        for argv in (["--scale", "0"], ["--scale", "25"], ["--repeat", "0"], ["--max-message-bytes", "-1"]):
            with self.assertRaises(SystemExit, msg=argv):
                bf.parse_args(argv)

    def test_engine_seconds(self):
        self.assertAlmostEqual(bf.engine_seconds("pathctl: 9 pairs in 241ms (x)\n"), 0.241)
        self.assertAlmostEqual(bf.engine_seconds("a\n4 pairs in 1m2.5s (y)"), 62.5)
        self.assertIsNone(bf.engine_seconds("nothing here"))


@unittest.skipUnless(os.path.isfile(PATHCTL), "needs the pathctl binary (make build)")
class TinyRun(unittest.TestCase):
    def test_scale_5(self):
        tmp = "/dev/shm" if os.path.isdir("/dev/shm") else os.environ.get("TMPDIR", "/tmp")
        a = bf.parse_args(["--scale", "5", "--repeat", "1", "--engine", "cpu", "--tmpfs", tmp, "--bin", PATHCTL])
        rows = {r[0]: r for r in bf.run(a)}
        _, secs, nbytes, nrows, _ = rows["Flight DoGet, matrix"]
        _, _, file_bytes, file_rows, note = rows[f"`pathctl run -o {tmp}/x.arrow`, matrix"]
        # The same rows; the Arrow buffers received are about the size of
        # the file written (which adds a schema, footer and padding).
        self.assertGreater(nrows, 10)
        self.assertEqual(nrows, file_rows)
        self.assertGreater(nbytes, nrows * nrows * 4)
        self.assertLess(abs(file_bytes - nbytes), 0.25 * file_bytes)
        self.assertGreater(secs, 0)
        self.assertIn("engine's own time", note)
        self.assertEqual(rows["Flight DoGet, stats"][3], nrows)
        self.assertIn("| Flight DoGet, matrix |", bf.table(a, list(rows.values())))
        leftovers = [f for f in os.listdir(tmp) if f.startswith(f"bench_flight-{os.getpid()}")]
        self.assertEqual(leftovers, [])


if __name__ == "__main__":
    unittest.main()
