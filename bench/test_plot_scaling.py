"""Checks of the scaling plot (plot_scaling.py) and of the records that
bench_gpu.py writes for it, on made-up records (they stand in for a run
and are never shown as measurements). The drawing needs matplotlib, which
make test's venv installs (bench/requirements.txt).

    .venv/bin/python -m pytest -q bench/test_plot_scaling.py
"""

import csv
import importlib.util
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu as bg  # noqa: E402
import plot_scaling as ps  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def png_size(path: str) -> tuple[int, int]:
    """The width and height of a PNG, from its IHDR chunk; fails on a file
    that is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def made_up_report() -> bg.Report:
    """A report as bench_gpu.py builds it, with invented times."""
    rep = bg.Report(machine={"gpu": "Test GPU", "cpus": 16, "date": "2026-11-23T00:00:00Z"})
    graphs = [("rmat14", 12000, 400000), ("rmat16", 49000, 1900000), ("rmat18", 184000, 7800000),
              ("grid128", 16384, 65024), ("grid256", 65536, 261120), ("uniform65536d16", 65536, 2097152)]
    for i, (g, n, arcs) in enumerate(graphs):
        rep.rows += [
            bg.Row(g, n, arcs, "pathctl gpu auto", n, 0.01 * (i + 1)),
            bg.Row(g, n, arcs, "pathctl gpu dijkstra", n, 0.05 * (i + 1)),
            bg.Row(g, n, arcs, "pathctl cpu auto", 1024, 1.0 * (i + 1), True),
            bg.Row(g, n, arcs, "scipy dijkstra (16 cores)", 512, 3.0 * (i + 1), True),
            bg.Row(g, n, arcs, "scipy dijkstra (1 core)", 64, 40.0 * (i + 1), True),
        ]
    return rep


class RecordsTest(unittest.TestCase):
    def test_engine_of(self):
        self.assertEqual(bg.engine_of("pathctl gpu auto"), "pathctl-gpu")
        self.assertEqual(bg.engine_of("pathctl cpu dijkstra"), "pathctl-cpu")
        self.assertEqual(bg.engine_of("scipy dijkstra (16 cores)"), "scipy-all-cores")
        self.assertEqual(bg.engine_of("scipy dijkstra (1 core)"), "scipy-1-core")
        self.assertEqual(bg.engine_of("networkit APSP (8 threads)"), "networkit")
        self.assertEqual(bg.engine_of("networkx dijkstra (1 core)"), "networkx")

    def test_round_trip(self):
        rep = made_up_report()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sub", "bench-gpu.csv")
            bg.write_records(path, rep)
            with open(path, newline="") as f:
                header = next(csv.reader(f))
            self.assertEqual(header, bg.RECORD_FIELDS)
            recs = ps.read_records([path])
        self.assertEqual(len(recs), len(rep.rows))
        for row, rec in zip(rep.rows, recs):
            self.assertEqual((rec.graph, rec.n, rec.arcs, rec.run, rec.sources, rec.seconds, rec.extrapolated),
                             (row.graph, row.n, row.arcs, row.run, row.sources, row.seconds, row.extrapolated))
            self.assertEqual(rec.engine, bg.engine_of(row.run))
            self.assertEqual(rec.machine, "Test GPU; 16 CPUs")

    def test_default_records_path(self):
        args = bg.parse_args(["--out", "x/bench-gpu.md"])
        self.assertEqual(args.records, "x/bench-gpu.csv")
        args = bg.parse_args(["--records", "r.csv"])
        self.assertEqual(args.records, "r.csv")

    def test_select(self):
        recs = [ps.Record(r.graph, r.n, r.arcs, r.run, bg.engine_of(r.run), r.sources, r.seconds, r.extrapolated)
                for r in made_up_report().rows]
        chosen = ps.select(recs, ["pathctl-gpu", "pathctl-cpu", "scipy-all-cores", "networkit"], r"^(rmat|grid)")
        self.assertEqual(list(chosen), ["pathctl-gpu", "pathctl-cpu", "scipy-all-cores"])
        for engine, rows in chosen.items():
            self.assertEqual(len(rows), 5, engine)  # rmat14/16/18, grid128/256; not uniform
            self.assertEqual([r.work for r in rows], sorted(r.work for r in rows))
        # pathctl's rows are auto's, not the seed algorithms'.
        self.assertTrue(all(r.run == "pathctl gpu auto" for r in chosen["pathctl-gpu"]))
        self.assertEqual({r.family for r in chosen["pathctl-gpu"]}, {"rmat", "grid"})

    def test_later_record_wins(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, secs in enumerate([1.0, 2.0]):
                rep = bg.Report(machine={"gpu": "Test GPU", "cpus": 4})
                rep.rows = [bg.Row("rmat14", 10, 20, "pathctl gpu auto", 10, secs)]
                paths.append(os.path.join(tmp, f"{i}.csv"))
                bg.write_records(paths[-1], rep)
            recs = ps.read_records(paths)
        self.assertEqual([r.seconds for r in recs], [2.0])

    def test_bad_record(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.csv")
            with open(path, "w") as f:
                f.write("graph,n,arcs,run,engine,sources,seconds,extrapolated\nrmat14,ten,20,r,e,1,1.0,false\n")
            with self.assertRaisesRegex(ValueError, "bad.csv:2"):
                ps.read_records([path])
            self.assertEqual(ps.main([path, "-o", os.path.join(tmp, "x.png")]), 1)


@unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (pip install -r bench/requirements.txt)")
class PlotTest(unittest.TestCase):
    def test_draws_png_of_the_size_asked(self):
        with tempfile.TemporaryDirectory() as tmp:
            records = os.path.join(tmp, "bench-gpu.csv")
            bg.write_records(records, made_up_report())
            out = os.path.join(tmp, "scaling.png")
            self.assertEqual(ps.main([records, "-o", out, "--width", "8", "--height", "5", "--dpi", "80"]), 0)
            self.assertEqual(png_size(out), (640, 400))
            self.assertGreater(os.path.getsize(out), 5000)  # drawn, not an empty canvas
            # Every engine and graph, with the defaults.
            out2 = os.path.join(tmp, "all.png")
            self.assertEqual(ps.main([records, "-o", out2, "--graphs", ".", "--engines",
                                      "pathctl-gpu,pathctl-cpu,scipy-all-cores,scipy-1-core"]), 0)
            self.assertEqual(png_size(out2), (900, 600))

    def test_nothing_to_draw(self):
        with tempfile.TemporaryDirectory() as tmp:
            records = os.path.join(tmp, "bench-gpu.csv")
            bg.write_records(records, made_up_report())
            out = os.path.join(tmp, "none.png")
            self.assertEqual(ps.main([records, "-o", out, "--graphs", "^nothing$"]), 1)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
