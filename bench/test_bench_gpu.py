"""Unit checks of the benchmark driver (bench_gpu.py) and of the graph-tool
export (export_graph_tool.py), without a GPU, without pathctl and without
graph-tool: pathctl's JSON report and graph-tool's graphs are stood in for
here. They need numpy, scipy, pyarrow and networkx (bench/requirements.txt).

    .venv/bin/python -m pytest -q bench/test_bench_gpu.py
"""

import json
import os
import sys
import tempfile
import unittest

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.parquet as pq
from scipy.sparse.csgraph import dijkstra

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu as bg  # noqa: E402
import export_graph_tool as egt  # noqa: E402


def pathctl_report(rows, n=100, arcs=800, bandwidth=None, disk=None):
    """A `pathctl bench --json` document as internal/benchsuite writes it (pathctl bench --json)."""
    return {
        "machine": {"date": "2026-11-22T00:00:00Z", "pathctl": "test", "cpus": 16, "gpu": "Test GPU",
                    "driver": "580.1", "cuda_driver": "13.0", "command": "pathctl bench"},
        "d2h_bytes_per_second": bandwidth,
        "graphs": [{"name": "g", "n": n, "arcs": arcs, "undirected": True, "dist_type": "int32", "floor_seconds": None}],
        "rows": rows,
        "disk": disk,
    }


def pathctl_row(engine, algo, seconds, sources=100, extrapolated=False, chosen=None, n=100, arcs=800):
    return {"graph": "g", "engine": engine, "algorithm": algo, "chosen": chosen or algo, "layout": "stats",
            "n": n, "arcs": arcs, "sources": sources, "measured_seconds": seconds * sources / n,
            "seconds": seconds, "extrapolated": extrapolated, "rows": sources,
            "pairs_per_second": n * n / seconds, "relaxations_per_second": arcs * n / seconds, "checked_sources": 4}


class ArithmeticTest(unittest.TestCase):
    def test_extrapolate(self):
        self.assertEqual(bg.extrapolate(2.0, 10, 10), (2.0, False))
        self.assertEqual(bg.extrapolate(2.0, 20, 10), (2.0, False))
        secs, extrap = bg.extrapolate(2.0, 10, 1000)
        self.assertTrue(extrap)
        self.assertAlmostEqual(secs, 200.0)

    def test_floor(self):
        self.assertIsNone(bg.floor_seconds(1000, 4, None))
        self.assertIsNone(bg.floor_seconds(1000, 4, 0.0))
        # 65536² int32 distances over 46 GB/s: about 0.37 s.
        self.assertAlmostEqual(bg.floor_seconds(65536, 4, 46e9), 65536 * 65536 * 4 / 46e9)
        self.assertAlmostEqual(bg.floor_seconds(1000, 8, 1e9), 8e-3)

    def test_sample_size(self):
        self.assertEqual(bg.sample_size(0.5, 60, 4, 512), 120)
        self.assertEqual(bg.sample_size(0.001, 60, 4, 512), 512)  # capped
        self.assertEqual(bg.sample_size(100.0, 60, 4, 512), 4)  # at least the probe
        self.assertEqual(bg.sample_size(0.0, 60, 4, 512), 512)
        self.assertEqual(bg.sample_size(1.0, 60, 8, 5), 5)  # never more than there are

    def test_rates(self):
        r = bg.Row("g", 1000, 5000, "x", 1000, 2.0)
        self.assertAlmostEqual(r.pairs_per_second, 1000 * 1000 / 2.0)
        self.assertAlmostEqual(r.relaxations_per_second, 5000 * 1000 / 2.0)


class TableTest(unittest.TestCase):
    def report(self):
        doc = pathctl_report([
            pathctl_row("gpu", "auto", 0.5, chosen="auto: batched"),
            pathctl_row("gpu", "delta", 1.0),
            pathctl_row("cpu", "auto", 8.0, sources=10, extrapolated=True),
        ], bandwidth=40e9, disk={
            "graph": "g", "dir": "/d", "bytes": 4_000_000, "compute_seconds": 0.5, "arrow_seconds": 2.0, "plain_seconds": 1.8,
            "arrow_bytes_per_second": 2e6, "plain_bytes_per_second": 4e6 / 1.8, "ratio": 0.9, "engine": "gpu", "algorithm": "auto",
            "arrow_runs": [2.0, 2.31], "plain_runs": [1.95, 1.8],
        })
        rep = bg.Report(machine=doc["machine"], bandwidth=doc["d2h_bytes_per_second"], disk=doc["disk"])
        rep.floors["g"] = bg.floor_seconds(100, 4, rep.bandwidth)
        rep.rows = bg.rows_from_pathctl(doc)
        rep.rows.append(bg.Row("g", 100, 800, "scipy dijkstra (1 core)", 10, 40.0, True, "extrapolated from a sample"))
        rep.rows.append(bg.Row("g", 100, 800, "scipy dijkstra (16 cores)", 100, 4.0, False, "all sources"))
        return rep

    def test_columns_and_ratios(self):
        text = bg.format_table(self.report())
        header = "| graph | n | arcs | run | sources | seconds | pairs/s | relaxations/s | vs scipy all cores | floor (s) | note |"
        self.assertIn(header, text)
        rows = {line.split("|")[4].strip(): [c.strip() for c in line.strip("|").split("|")]
                for line in text.splitlines() if line.startswith("| g |")}
        self.assertEqual(set(rows), {"pathctl gpu auto", "pathctl gpu delta", "pathctl cpu auto",
                                     "scipy dijkstra (1 core)", "scipy dijkstra (16 cores)"})
        self.assertTrue(all(len(r) == 11 for r in rows.values()))
        self.assertEqual(rows["pathctl gpu auto"][8], "8.00×")  # 4.0 / 0.5
        self.assertEqual(rows["pathctl cpu auto"][8], "0.50×")
        self.assertEqual(rows["scipy dijkstra (16 cores)"][8], "1.00×")
        self.assertEqual(rows["pathctl gpu auto"][9], f"{100 * 100 * 4 / 40e9:.3g}")
        self.assertIn("auto: batched", rows["pathctl gpu auto"][10])
        self.assertIn("extrapolated from 10 sources", rows["pathctl cpu auto"][10])
        self.assertIn("all sources", rows["pathctl gpu delta"][10])
        self.assertIn("Test GPU, driver 580.1 (CUDA 13.0)", text)
        self.assertIn("40.0 GB/s", text)
        self.assertIn("**90 %**", text)
        self.assertIn("meets the target", text)
        self.assertIn("Best of 2 alternating rounds; Arrow file 2.00, 2.31 s, plain write 1.95, 1.80 s.", text)

    def test_no_gpu_no_scipy(self):
        rep = self.report()
        rep.bandwidth, rep.floors, rep.disk = None, {"g": None}, None
        rep.machine = {"cpus": 2, "gpu_unavailable": "no CUDA device"}
        rep.rows = [r for r in rep.rows if not r.run.startswith("scipy")]
        text = bg.format_table(rep)
        for line in text.splitlines():
            if line.startswith("| g |"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                self.assertEqual(cells[8], "—")
                self.assertEqual(cells[9], "—")
        self.assertIn("no GPU (no CUDA device)", text)
        self.assertNotIn("Disk:", text)


class CommandTest(unittest.TestCase):
    def args(self, *argv):
        return bg.parse_args(["--pathctl", "pc", "--work", "w", *argv])

    def test_suite_graph(self):
        cmd = bg.bench_command("rmat16", self.args())
        self.assertEqual(cmd[:4], ["pc", "bench", "--json", "--graphs"])
        self.assertEqual(cmd[cmd.index("--graphs") + 1], "rmat16")
        self.assertEqual(cmd[cmd.index("--algos") + 1], ",".join(bg.ALGOS))
        self.assertEqual(cmd[cmd.index("--disk-graph") + 1], "rmat16")
        self.assertEqual(cmd[cmd.index("--save-graphs") + 1], "w")
        self.assertNotIn("--undirected", cmd)

    def test_rmat20_runs_auto_only(self):
        cmd = bg.bench_command("rmat20", self.args())
        self.assertEqual(cmd[cmd.index("--algos") + 1], "auto")
        self.assertEqual(cmd[cmd.index("--disk-graph") + 1], "none")
        cmd = bg.bench_command("rmat20", self.args("--algos", "auto,delta"))
        self.assertEqual(cmd[cmd.index("--algos") + 1], "auto,delta")

    def test_real_graph(self):
        cmd = bg.bench_command("email-Enron", self.args(), "d/email-Enron.parquet", True)
        self.assertEqual(cmd[cmd.index("--graphs") + 1], "d/email-Enron.parquet")
        self.assertIn("--undirected", cmd)
        cmd = bg.bench_command("pgp-strong-2009", self.args(), "d/pgp-strong-2009.parquet", False)
        self.assertNotIn("--undirected", cmd)

    def test_rows_from_pathctl(self):
        rows = bg.rows_from_pathctl(pathctl_report([pathctl_row("gpu", "auto", 2.0, chosen="auto: x")]))
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual((r.graph, r.run, r.seconds, r.extrapolated), ("g", "pathctl gpu auto", 2.0, False))
        self.assertIn("4 sources match the serial oracle", r.note)


class GraphTest(unittest.TestCase):
    def test_load_graph_undirected_matches_networkx(self):
        rng = np.random.default_rng(5)
        n, m = 30, 120
        ext = np.sort(rng.choice(1000, size=n, replace=False))
        src, dst, w = ext[rng.integers(0, n, m)], ext[rng.integers(0, n, m)], rng.integers(1, 20, m)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.parquet")
            pq.write_table(pa.table({"src": src, "dst": dst, "weight": w}), path)
            g = bg.load_graph(path, undirected=True)
        G = nx.MultiGraph()
        G.add_nodes_from(np.unique(np.concatenate([src, dst])).tolist())
        G.add_weighted_edges_from((int(a), int(b), int(c)) for a, b, c in zip(src, dst, w) if a != b)
        got = dijkstra(g.csr(), directed=True)
        for i, s in enumerate(g.ids):
            want = nx.single_source_dijkstra_path_length(G, int(s))
            for j, t in enumerate(g.ids):
                self.assertEqual(got[i, j], want.get(int(t), np.inf), f"seed 5: {s} -> {t}")

    def test_real_graph_sidecar(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(bg.real_graph(d, "email-Enron"))
            pq.write_table(pa.table({"src": [1], "dst": [2]}), os.path.join(d, "email-Enron.parquet"))
            self.assertIsNone(bg.real_graph(d, "email-Enron"))  # no sidecar yet
            with open(os.path.join(d, "email-Enron.json"), "w") as f:
                json.dump({"undirected": True, "file": "email-Enron.parquet"}, f)
            self.assertEqual(bg.real_graph(d, "email-Enron"), (os.path.join(d, "email-Enron.parquet"), True))
            with open(os.path.join(d, "email-Enron.json"), "w") as f:
                json.dump({"undirected": False, "file": "email-Enron.csv"}, f)
            self.assertIsNone(bg.real_graph(d, "email-Enron"))  # the file it names is missing

    def test_check_rows(self):
        ids = np.array([10, 20, 30])
        want = np.array([[0.0, 1.0, np.inf]])
        self.assertEqual(bg.check_rows("x", want, want.copy(), ids, np.array([0]), 0.0), [])
        bad = bg.check_rows("x", want, np.array([[0.0, 2.0, np.inf]]), ids, np.array([0]), 0.0)
        self.assertEqual(len(bad), 1)
        self.assertIn("source 10", bad[0])
        self.assertTrue(bg.check_rows("x", want, np.array([[0.0, 1.0, 5.0]]), ids, np.array([0]), 0.0))


class FakeProperty:
    def __init__(self, values, value_type):
        self.a = np.asarray(values)
        self._t = value_type

    def value_type(self):
        return self._t


class FakeGraph:
    """What export_graph_tool uses of a graph_tool.Graph, in the API of
    graph-tool >= 2.27 (get_edges takes edge properties) or before it
    (get_edges returns source, target, edge index)."""

    def __init__(self, edges, directed, props, new_api=True, vertices=None):
        self.edges = np.asarray(edges, dtype=np.int64)
        self.directed = directed
        self.ep = props
        self.new_api = new_api
        self.vertices = vertices if vertices is not None else int(self.edges.max()) + 1

    def is_directed(self):
        return self.directed

    def num_vertices(self):
        return self.vertices

    def get_edges(self, eprops=None):
        index = np.arange(len(self.edges))
        if not self.new_api:
            if eprops is not None:
                raise TypeError("get_edges() takes no arguments")
            return np.column_stack([self.edges, index])
        cols = [self.edges[:, 0], self.edges[:, 1]] + [p.a[index] for p in (eprops or [])]
        return np.column_stack(cols).astype(np.float64 if eprops else np.int64)


class ExportTest(unittest.TestCase):
    def export(self, g, weight=None, fmt="parquet"):
        with tempfile.TemporaryDirectory() as d:
            meta = egt.export(g, "x", "fake", d, weight, fmt)
            path = os.path.join(d, "x." + fmt)
            table = pq.read_table(path) if fmt == "parquet" else pa.csv.read_csv(path)
            self.assertEqual(sorted(os.listdir(d)), sorted(["x.json", "x." + fmt]))
            with open(os.path.join(d, "x.json")) as f:
                side = json.load(f)
        self.assertEqual(meta, side)
        return table, side

    def test_weighted_undirected(self):
        for new_api in (True, False):
            g = FakeGraph([[0, 1], [1, 2], [2, 0]], False, {"value": FakeProperty([2.5, 1.0, 4.0], "double")}, new_api, vertices=5)
            table, side = self.export(g)
            self.assertEqual(table.column_names, ["src", "dst", "weight"])
            self.assertEqual(table.column("src").to_pylist(), [0, 1, 2])
            self.assertEqual(table.column("dst").to_pylist(), [1, 2, 0])
            self.assertEqual(table.column("weight").to_pylist(), [2.5, 1.0, 4.0])
            self.assertEqual(table.schema.field("src").type, pa.int64())
            self.assertTrue(side["undirected"])
            self.assertEqual((side["weight"], side["edges"], side["graph_vertices"], side["vertices_with_edges"]), ("value", 3, 5, 3))

    def test_integer_weights_and_directed(self):
        g = FakeGraph([[3, 1], [1, 2]], True, {"weight": FakeProperty([7, 9], "int32_t")})
        table, side = self.export(g)
        self.assertEqual(table.schema.field("weight").type, pa.int64())
        self.assertEqual(table.column("weight").to_pylist(), [7, 9])
        self.assertFalse(side["undirected"])

    def test_unweighted(self):
        g = FakeGraph([[0, 1]], True, {"label": FakeProperty(["a"], "string")})
        table, side = self.export(g)
        self.assertEqual(table.column_names, ["src", "dst"])
        self.assertIsNone(side["weight"])
        g = FakeGraph([[0, 1]], True, {"weight": FakeProperty([3.0], "double")})
        table, side = self.export(g, weight="")  # --weight '' ignores it
        self.assertEqual(table.column_names, ["src", "dst"])

    def test_bad_weights(self):
        g = FakeGraph([[0, 1]], True, {"weight": FakeProperty([np.inf], "double")})
        table, side = self.export(g)  # found by name: exported unweighted, and said so
        self.assertEqual(table.column_names, ["src", "dst"])
        self.assertIsNone(side["weight"])
        self.assertEqual(side["weight_skipped"], "weight: 1 non-finite values")
        g = FakeGraph([[0, 1]], True, {"weight": FakeProperty([np.nan], "double")})
        with self.assertRaises(ValueError):  # asked for: refused
            self.export(g, weight="weight")
        with self.assertRaises(KeyError):
            self.export(FakeGraph([[0, 1]], True, {}), weight="w")

    def test_csv(self):
        g = FakeGraph([[0, 1], [1, 2]], False, {"weight": FakeProperty([0.1, 2.5], "double")})
        table, side = self.export(g, fmt="csv")
        self.assertEqual(table.column_names, ["src", "dst", "weight"])
        self.assertEqual(table.column("weight").to_pylist(), [0.1, 2.5])
        self.assertEqual(side["file"], "x.csv")
        g = FakeGraph([[0, 1], [1, 2]], True, {"weight": FakeProperty([4, 5], "int64_t")})
        table, _ = self.export(g, fmt="csv")
        self.assertEqual(table.column("weight").to_pylist(), [4, 5])

    def test_driver_reads_the_export(self):
        # bench_gpu.load_graph reads what export writes, in either format.
        g = FakeGraph([[0, 1], [1, 2]], False, {"weight": FakeProperty([2.0, 3.0], "double")})
        for fmt in ("parquet", "csv"):
            with tempfile.TemporaryDirectory() as d:
                egt.export(g, "x", "fake", d, None, fmt)
                path, undirected = bg.real_graph(d, "x")
                self.assertTrue(path.endswith("." + fmt))
                graph = bg.load_graph(path, undirected)
            self.assertEqual(graph.n, 3)
            self.assertEqual(graph.m, 4)
            self.assertEqual(dijkstra(graph.csr(), directed=True, indices=[2])[0].tolist(), [5.0, 3.0, 0.0])


if __name__ == "__main__":
    unittest.main()


BINARY = os.environ.get("PATHCTL_BIN") or os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "bin", "pathctl")


class FloatsAndWallTest(unittest.TestCase):
    def test_go_seconds(self):
        self.assertAlmostEqual(bg.go_seconds("518ms"), 0.518)
        self.assertAlmostEqual(bg.go_seconds("1.234s"), 1.234)
        self.assertAlmostEqual(bg.go_seconds("2m3.5s"), 123.5)
        self.assertAlmostEqual(bg.go_seconds("800µs"), 0.0008)
        self.assertEqual(bg.go_seconds("0s"), 0.0)
        for bad in ("", "12", "1.5 s", "3x"):
            with self.assertRaises(ValueError):
                bg.go_seconds(bad)

    def test_wall_of(self):
        err = ("pathctl: 3348 sources × 3348 vertices (97250 arcs): 11209104 pairs in 504ms (22.22M pairs/s), engine cpu\n"
               "pathctl: wall time 1.518s = start-up 1ms + reading 8ms + closing the output 1ms + other 1ms\n")
        self.assertEqual(bg.wall_of(err), (1.518, 0.504))
        self.assertEqual(bg.wall_of("pathctl: wrote 3 rows\n"), (None, None))

    def test_float_rows_and_section(self):
        doc = {"graphs": [{"name": "i", "dist_type": "int32"}, {"name": "f", "dist_type": "float32"}],
               "rows": [dict(pathctl_row("gpu", "auto", 0.2), graph="i"),
                        dict(pathctl_row("gpu", "auto", 0.9, extrapolated=True), graph="f"),
                        dict(pathctl_row("gpu", "auto", 5.0), graph="other")]}
        rows = bg.float_rows(doc, {"i": "int 1..100", "f": "float32 0.1..10"})
        self.assertEqual([(r.weights, r.distances, r.seconds, r.extrapolated) for r in rows],
                         [("int 1..100", "int32", 0.2, False), ("float32 0.1..10", "float32", 0.9, True)])
        report = bg.Report(floats=rows, floats_graph="R-MAT 16")
        text = "\n".join(bg.format_floats(report))
        self.assertIn("| float32 0.1..10 | float32 | 0.9 (extrapolated) | 4.50 × | 4 |", text)
        self.assertIn("| int 1..100 | int32 | 0.2 | 1.00 × | 4 |", text)
        self.assertEqual(bg.format_floats(bg.Report()), [])

    def test_wall_section(self):
        report = bg.Report(wall=[bg.WallRun(0.52, 0.391, 0.2), bg.WallRun(0.5, None, None)], wall_command="pathctl run g")
        text = "\n".join(bg.format_wall(report))
        self.assertIn("| 1 | 0.520 | 0.391 | 0.200 |", text)
        self.assertIn("| 2 | 0.500 | — | — |", text)

    def test_all_sources_reaches_rmat20(self):
        args = bg.parse_args(["--graphs", "rmat20", "--all-sources"])
        cmd = bg.bench_command("rmat20", args)
        self.assertEqual(cmd[cmd.index("--sample") + 1], str(bg.EVERY_SOURCE))
        self.assertNotIn("--sample", bg.bench_command("rmat20", bg.parse_args(["--graphs", "rmat20"])))

    @unittest.skipUnless(os.path.exists(BINARY), "no pathctl binary (make build)")
    def test_sections_on_the_cpu(self):
        # The float and wall sections end to end on the CPU engine: the
        # three weight files hold the same edges, every row is checked by
        # pathctl bench, and the wall runs report their --verbose times.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.md")
            rc = bg.main(["--pathctl", BINARY, "--graphs", "", "--engine", "cpu", "--floats", "8", "--wall", "8",
                          "--wall-repeat", "2", "--work", tmp, "--out", out, "--disk-graph", "none"])
            self.assertEqual(rc, 0)
            files = bg.rmat_files(bg.parse_args(["--pathctl", BINARY, "--work", tmp]), 8, sys.stderr)
            tables = {k: pq.read_table(v) for k, v in files.items()}
            for k in ("f32", "f64"):
                self.assertEqual(tables[k].column("src"), tables["int"].column("src"))
                self.assertEqual(tables[k].column("dst"), tables["int"].column("dst"))
            self.assertEqual(tables["f32"].schema.field("weight").type, pa.float32())
            w = tables["f64"].column("weight").to_numpy()
            self.assertTrue((w >= 0.1).all() and (w <= 10).all())
            text = open(out).read()
            for want in ("| int 1..100 | int32 |", "| float32 0.1..10 | float32 |", "| float64 0.1..10 | float64 |",
                         "| float32 0.1..10 | float64 (--dist-type float64) |", "| 2 | "):
                self.assertIn(want, text)
            self.assertNotIn("FAILURES", text)
