"""Unit checks of the CPU benchmark harness (python3 -m unittest bench/test_bench_cpu.py).

They need numpy, scipy, pyarrow and networkx (bench/requirements.txt) but not
the pathctl binary: pathctl's outputs are written here with pyarrow in the
schemas of design.md.
"""

import os
import sys
import tempfile
import unittest

import networkx as nx
import numpy as np
import pyarrow as pa
from scipy.sparse.csgraph import dijkstra

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu as bc  # noqa: E402


def random_multigraph(seed, n=40, rows=300):
    """Raw rows with self-loops, duplicates and sparse external ids."""
    rng = np.random.default_rng(seed)
    ext = np.sort(rng.choice(10_000, size=n, replace=False)) * 3 + 7
    src = ext[rng.integers(0, n, rows)]
    dst = ext[rng.integers(0, n, rows)]
    w = rng.integers(1, 20, rows)
    return src, dst, w


def nx_distances(src, dst, w, source):
    """networkx oracle on the raw rows: a multigraph, so duplicates stay."""
    G = nx.MultiDiGraph()
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    return nx.single_source_dijkstra_path_length(G, source)


def write_pathctl_outputs(directory, g, dist, dtype=pa.int32()):
    """Writes a matrix and a stats result as pathctl would for the full
    distance matrix dist (inf = unreachable), in the vertex order g.ids."""
    n = g.n
    flat = dist.reshape(-1)
    mask = np.isinf(flat)
    values = pa.array(np.where(mask, 0, flat).astype(dtype.to_pandas_dtype()), type=dtype, mask=mask)
    matrix = pa.FixedSizeListArray.from_arrays(values, n)
    schema = pa.schema([("source", pa.int64()), ("distance", matrix.type)], metadata={"pathctl.vertices": "m.vertices.arrow"})
    table = pa.table([pa.array(g.ids), matrix], schema=schema)
    matrix_path = os.path.join(directory, "m.arrow")
    with pa.ipc.new_file(matrix_path, schema) as w:
        w.write_table(table)
    with pa.ipc.new_file(os.path.join(directory, "m.vertices.arrow"), pa.schema([("vertex", pa.int64())])) as w:
        w.write_table(pa.table({"vertex": pa.array(g.ids)}))
    rows = [bc.stats_of_row(dist[s], s) for s in range(n)]
    stats = pa.table({"source": pa.array(g.ids), "reachable": pa.array([r["reachable"] for r in rows], pa.int64()),
                      "eccentricity": pa.array([r["eccentricity"] for r in rows], pa.float64()),
                      "sum": pa.array([r["sum"] for r in rows], pa.float64()),
                      "closeness": pa.array([r["closeness"] for r in rows], pa.float64()),
                      "harmonic": pa.array([r["harmonic"] for r in rows], pa.float64())})
    stats_path = os.path.join(directory, "s.arrow")
    with pa.ipc.new_file(stats_path, stats.schema) as w:
        w.write_table(stats)
    return matrix_path, stats_path


class CanonicalGraphTest(unittest.TestCase):
    def test_matches_networkx_on_raw_rows(self):
        for seed in range(5):
            src, dst, w = random_multigraph(seed)
            g = bc.canonical_graph(src, dst, w)
            self.assertTrue(np.all(np.diff(g.ids) > 0), f"seed {seed}: ids not ascending")
            self.assertTrue(np.all(g.src != g.dst), f"seed {seed}: self-loop kept")
            pairs = set(zip(g.src.tolist(), g.dst.tolist()))
            self.assertEqual(len(pairs), g.m, f"seed {seed}: duplicate arc kept")
            d = dijkstra(g.csr(), directed=True)
            for s in range(0, g.n, 7):
                want = nx_distances(src, dst, w, int(g.ids[s]))
                for t in range(g.n):
                    ext = int(g.ids[t])
                    if ext in want:
                        self.assertEqual(d[s, t], want[ext], f"seed {seed}: {g.ids[s]}→{ext}")
                    else:
                        self.assertTrue(np.isinf(d[s, t]), f"seed {seed}: {g.ids[s]}→{ext} should be unreachable")

    def test_lightest_duplicate_kept_and_unweighted(self):
        g = bc.canonical_graph([5, 5, 5, 9], [9, 9, 5, 5], [7, 3, 1, 4])
        self.assertEqual(g.ids.tolist(), [5, 9])
        self.assertEqual(sorted(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist())), [(0, 1, 3.0), (1, 0, 4.0)])
        self.assertEqual(g.rows, 4)
        self.assertTrue(g.integer_weights)
        u = bc.canonical_graph([1, 2], [2, 3])
        self.assertEqual(u.weight.tolist(), [1.0, 1.0])
        self.assertTrue(u.integer_weights)
        self.assertFalse(bc.canonical_graph([1], [2], np.array([0.5])).integer_weights)


class ResultReadingTest(unittest.TestCase):
    def setUp(self):
        src, dst, w = random_multigraph(11, n=30, rows=60)  # sparse: many unreachable pairs
        self.g = bc.canonical_graph(src, dst, w)
        self.dist = dijkstra(self.g.csr(), directed=True)
        self.assertTrue(np.isinf(self.dist).any())
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_read_matrix_round_trip(self):
        matrix_path, _ = write_pathctl_outputs(self.tmp.name, self.g, self.dist)
        sources, vertices, d = bc.read_matrix(matrix_path)
        self.assertEqual(sources.tolist(), self.g.ids.tolist())
        self.assertEqual(vertices.tolist(), self.g.ids.tolist())
        np.testing.assert_array_equal(d, self.dist)
        pick = self.g.ids[[5, 2]]
        sources, _, d = bc.read_matrix(matrix_path, pick)
        self.assertEqual(sources.tolist(), pick.tolist())
        np.testing.assert_array_equal(d, self.dist[[5, 2]])
        with self.assertRaises(KeyError):
            bc.read_matrix(matrix_path, np.array([-1]))

    def test_check_results_accepts_correct_output(self):
        matrix_path, stats_path = write_pathctl_outputs(self.tmp.name, self.g, self.dist)
        check = np.arange(self.g.n)
        self.assertEqual(bc.check_results(self.g, check, matrix_path, stats_path, rtol=0.0), [])

    def test_check_results_catches_wrong_distance(self):
        bad = self.dist.copy()
        s, t = np.argwhere(np.isfinite(bad) & (bad > 0))[0]
        bad[s, t] += 1
        matrix_path, stats_path = write_pathctl_outputs(self.tmp.name, self.g, bad)
        problems = bc.check_results(self.g, np.array([s]), matrix_path, stats_path, rtol=0.0)
        self.assertTrue(any("distances differ" in p for p in problems), problems)
        self.assertTrue(any("stats" in p and "sum" in p for p in problems), problems)

    def test_check_results_catches_wrong_reachability(self):
        bad = self.dist.copy()
        s, t = np.argwhere(np.isinf(bad))[0]
        bad[s, t] = 5
        matrix_path, stats_path = write_pathctl_outputs(self.tmp.name, self.g, bad)
        problems = bc.check_results(self.g, np.array([s]), matrix_path, stats_path, rtol=0.0)
        self.assertTrue(any("reachability" in p for p in problems), problems)
        self.assertTrue(any("reachable" in p for p in problems), problems)
        self.assertTrue(any("closeness" in p for p in problems), problems)

    def test_check_results_catches_wrong_vertex_order(self):
        matrix_path, stats_path = write_pathctl_outputs(self.tmp.name, self.g, self.dist)
        with pa.ipc.new_file(os.path.join(self.tmp.name, "m.vertices.arrow"), pa.schema([("vertex", pa.int64())])) as w:
            w.write_table(pa.table({"vertex": pa.array(self.g.ids[::-1].copy())}))
        problems = bc.check_results(self.g, np.array([0]), matrix_path, stats_path, rtol=0.0)
        self.assertTrue(problems and "vertex order" in problems[0], problems)

    def test_float_distances_with_tolerance(self):
        fdist = self.dist * 0.1
        matrix_path, stats_path = write_pathctl_outputs(self.tmp.name, self.g, fdist.astype(np.float32).astype(np.float64), pa.float32())
        g = bc.Graph(self.g.ids, self.g.src, self.g.dst, self.g.weight * 0.1, self.g.rows, integer_weights=False)
        check = np.arange(g.n)
        self.assertEqual(bc.check_results(g, check, matrix_path, stats_path, rtol=1e-6), [])


class CompareTest(unittest.TestCase):
    def test_compare_distances(self):
        inf = np.inf
        self.assertEqual(bc.compare_distances(np.array([0, 1, inf]), np.array([0, 1, inf])), [])
        self.assertEqual(len(bc.compare_distances(np.array([0, 1, inf]), np.array([0, 2, inf]))), 1)
        self.assertEqual(len(bc.compare_distances(np.array([0, 1, inf]), np.array([0, 1, 3]))), 1)
        self.assertEqual(bc.compare_distances(np.array([0.1]), np.array([0.1 + 1e-12]), rtol=1e-9), [])

    def test_stats_of_row(self):
        st = bc.stats_of_row(np.array([0.0, 2.0, np.inf, 5.0]), 0)
        self.assertEqual(st["reachable"], 2)
        self.assertEqual(st["sum"], 7.0)
        self.assertEqual(st["eccentricity"], 5.0)
        self.assertAlmostEqual(st["closeness"], (2 / 7) * (2 / 3))
        self.assertAlmostEqual(st["harmonic"], 1 / 2 + 1 / 5)
        lone = bc.stats_of_row(np.array([0.0, np.inf]), 0)
        self.assertIsNone(lone["eccentricity"])
        self.assertEqual((lone["closeness"], lone["harmonic"]), (0.0, 0.0))
        zero = bc.stats_of_row(np.array([0.0, 0.0, 4.0]), 0)  # a zero-weight path
        self.assertEqual(zero["harmonic"], 0.25)

    def test_stats_agree_with_networkx_centrality(self):
        # design.md: on an undirected graph our closeness and harmonic equal networkx's.
        G = nx.gnm_random_graph(30, 45, seed=4)
        for u, v in G.edges:
            G[u][v]["weight"] = (u * 7 + v) % 5 + 1
        src, dst, w = zip(*[(u, v, d["weight"]) for u, v, d in G.edges(data=True)])
        g = bc.canonical_graph(np.r_[src, dst], np.r_[dst, src], np.r_[w, w])
        d = dijkstra(g.csr(), directed=True)
        close = nx.closeness_centrality(G, distance="weight", wf_improved=True)
        harm = nx.harmonic_centrality(G, distance="weight")
        for s in range(g.n):
            st = bc.stats_of_row(d[s], s)
            self.assertAlmostEqual(st["closeness"], close[int(g.ids[s])])
            self.assertAlmostEqual(st["harmonic"], harm[int(g.ids[s])])


class TableTest(unittest.TestCase):
    def test_ratio_and_rates(self):
        rows = [
            bc.Row("g", 1000, 5000, "scipy dijkstra", 1, 10.0, extrapolated=True),
            bc.Row("g", 1000, 5000, "pathctl cpu (stats)", 2, 2.0),
            bc.Row("h", 10, 20, "pathctl cpu (stats)", 1, 1.0),
        ]
        cells = bc.table_rows(rows)
        self.assertEqual(cells[0][6], "100.00k")  # 1e6 pairs / 10 s
        self.assertEqual(cells[0][7], "1.00×")
        self.assertEqual(cells[0][8], "yes")
        self.assertEqual(cells[1][7], "2.50×")  # (1e6/2 s/2 cores) / (1e6/10 s)
        self.assertEqual(cells[2][7], "—")  # no scipy row for h
        md = bc.format_table(rows, markdown=True).splitlines()
        self.assertEqual(len(md), 2 + len(rows))
        self.assertTrue(all(line.count("|") == len(bc.HEADER) + 1 for line in md))

    def test_extrapolate(self):
        self.assertAlmostEqual(bc.extrapolate(2.0, 10, 1000), 200.0)

    def test_quick_defaults_and_specs(self):
        args = bc.parse_args(["--quick"])
        names = [s.name for s in bc.graph_specs(args)]
        self.assertEqual(names, ["rmat10", "grid48x48", "uniform2048d8"])
        full = bc.parse_args(["--rmat-scales", "12,14"])
        self.assertEqual([s.name for s in bc.graph_specs(full)], ["rmat12", "rmat14", "grid128x128", "uniform16384d16"])
        cmd = bc.rmat_spec(12, 16).gen_command("bin/pathctl", "x.parquet", 3)
        self.assertEqual(cmd, ["bin/pathctl", "gen", "rmat", "--scale", "12", "--edge-factor", "16", "--seed", "3", "-o", "x.parquet"])


class PoolTest(unittest.TestCase):
    def test_pool_matches_serial(self):
        src, dst, w = random_multigraph(3, n=60, rows=400)
        g = bc.canonical_graph(src, dst, w)
        d = dijkstra(g.csr(), directed=True)
        _, finite, total = bc.scipy_pool(g.csr(), np.arange(g.n), 2, 7)
        self.assertEqual(finite, int(np.isfinite(d).sum()))
        self.assertAlmostEqual(total, float(d[np.isfinite(d)].sum()))


if __name__ == "__main__":
    unittest.main()
