"""Checks of the Flight benchmark (bench_flight.py): its argument parsing,
its reading of the summary line and of the server's log, its comparison of
results, and one whole run on a tiny graph with the CPU engine, which
needs the pathctl binary ($PATHCTL_BIN, else bin/pathctl; `make
test-python` builds it).

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
        self.assertEqual((a.scale, a.engine, a.repeat, a.tmpfs, a.max_message_bytes, a.client_window),
                         (14, "auto", 3, "/dev/shm", 0, 16 << 20))

    def test_refuses(self):
        for argv in (["--scale", "0"], ["--scale", "25"], ["--repeat", "0"], ["--max-message-bytes", "-1"],
                     ["--client-window", "-1"]):
            with self.assertRaises(SystemExit, msg=argv):
                bf.parse_args(argv)

    def test_engine_seconds(self):
        self.assertAlmostEqual(bf.engine_seconds("pathctl: 9 pairs in 241ms (x)\n"), 0.241)
        self.assertAlmostEqual(bf.engine_seconds("a\n4 pairs in 1m2.5s (y)"), 62.5)
        self.assertIsNone(bf.engine_seconds("nothing here"))

    def test_server_times(self):
        log = ('time=x level=INFO msg="flight request" method=DoPut graph=g rows=3\n'
               'time=x level=INFO msg="flight request" method=DoGet graph=g engine_time=1.5ms send_time=250µs code=OK\n'
               'time=x level=INFO msg="flight request" method=DoGet graph=g engine_time=2s send_time=1m0.5s code=OK\n')
        times = bf.server_times(log)
        self.assertEqual(len(times), 2)
        self.assertAlmostEqual(times[0][0], 0.0015)
        self.assertAlmostEqual(times[0][1], 0.00025)
        self.assertAlmostEqual(times[1][1], 60.5)

    def test_same_columns(self):
        import pyarrow as pa
        a = pa.table({"source": [1, 2], "distance": [[0, 1], [1, 0]]})
        b = pa.table({"source": [1, 2], "distance": [[0, 1], [2, 0]]})
        self.assertEqual(bf.same_columns(a, a, ["source", "distance"]), [])
        self.assertEqual(bf.same_columns(a, b, ["source", "distance"]), ["distance"])


@unittest.skipUnless(os.path.isfile(PATHCTL), "needs the pathctl binary (make build)")
class TinyRun(unittest.TestCase):
    def test_scale_5(self):
        tmp = "/dev/shm" if os.path.isdir("/dev/shm") else os.environ.get("TMPDIR", "/tmp")
        a = bf.parse_args(["--scale", "5", "--repeat", "1", "--engine", "cpu", "--tmpfs", tmp, "--bin", PATHCTL])
        result, problems = bf.run(a)
        self.assertEqual(problems, [])
        rows = {r.what: r for r in result}
        _, secs, nbytes, nrows, engine, send, _ = rows["Flight DoGet, matrix"]
        _, _, file_bytes, file_rows, _, _, note = rows[f"`pathctl run -o {tmp}/x.arrow`, matrix"]
        self.assertIsNotNone(engine)
        self.assertGreater(send, 0)
        self.assertLessEqual(engine + send, secs * 1.5 + 0.05)
        # The same rows; the Arrow buffers received are about the size of
        # the file written (which adds a schema, footer and padding: a
        # matrix file in memory puts its values on a page boundary, two
        # pages at most beside a tiny matrix).
        self.assertGreater(nrows, 10)
        self.assertEqual(nrows, file_rows)
        self.assertGreater(nbytes, nrows * nrows * 4)
        self.assertLess(abs(file_bytes - nbytes), 0.25 * file_bytes + 8192)
        self.assertGreater(secs, 0)
        self.assertIn("engine's own time", note)
        self.assertEqual(rows["Flight DoGet, stats"][3], nrows)
        self.assertIn("| Flight DoGet, matrix |", bf.table(a, result, problems))
        self.assertIn("MISMATCH: matrix", bf.table(a, result, ["matrix: column distance differs"]))
        leftovers = [f for f in os.listdir(tmp) if f.startswith(f"bench_flight-{os.getpid()}")]
        self.assertEqual(leftovers, [])


if __name__ == "__main__":
    unittest.main()
