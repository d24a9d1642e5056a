#!/usr/bin/env python3
"""The scaling curve of `make bench`: seconds for every source against the
work n × arcs, log-log, one line per engine and graph family, from the
records that bench/bench_gpu.py writes (bench/results/bench-gpu.csv).

    .venv/bin/python bench/plot_scaling.py bench/results/bench-gpu.csv -o bench/results/scaling.png

The GPU machine has no matplotlib: run bench_gpu.py there, bring its CSV
back, and draw here. Several CSV files may be given (rows of several runs,
say GPU rows from one and scipy rows from another); a (graph, run) measured
twice keeps its last record.

Drawn by default: pathctl GPU (auto), pathctl CPU (auto) and scipy's
Dijkstra on every core, on the R-MAT and grid graphs (--graphs takes a
regular expression of graph names, --engines a list). Hollow markers are
times extrapolated from a sample of sources; the dotted line is a time
proportional to n × arcs through the smallest pathctl GPU point, for
reference: a curve that bends above it grows faster than the work.
Nothing is invented: a graph or engine without a record is simply not
drawn, and no selected record at all is an error.
"""
import argparse
import csv
import re
import sys
from dataclasses import dataclass

# The engines drawn by default, in legend order, with the run each takes
# (auto for pathctl: the algorithm a user gets) and how the legend names it.
SERIES = {
    "pathctl-gpu": ("pathctl gpu auto", "pathctl GPU (auto)"),
    "pathctl-cpu": ("pathctl cpu auto", "pathctl CPU (auto, every core)"),
    "scipy-all-cores": (None, "scipy Dijkstra, every core"),
    "scipy-1-core": (None, "scipy Dijkstra, 1 core"),
    "networkx": (None, "networkx (1 core)"),
    "networkit": (None, "NetworKit"),
}
DEFAULT_ENGINES = "pathctl-gpu,pathctl-cpu,scipy-all-cores"
COLOURS = {"pathctl-gpu": "#1b9e77", "pathctl-cpu": "#d95f02", "scipy-all-cores": "#7570b3",
           "scipy-1-core": "#e7298a", "networkx": "#66a61e", "networkit": "#e6ab02"}
MARKERS = {"rmat": "o", "grid": "s", "uniform": "^"}


@dataclass
class Record:
    graph: str
    n: int
    arcs: int
    run: str
    engine: str
    sources: int
    seconds: float
    extrapolated: bool
    machine: str = ""

    @property
    def work(self) -> float:
        return float(self.n) * float(self.arcs)

    @property
    def family(self) -> str:
        """The graph's family: the letters its name starts with (rmat14 -> rmat)."""
        m = re.match(r"[A-Za-z]+", self.graph)
        return m.group(0) if m else self.graph


def read_records(paths: list[str]) -> list[Record]:
    """The records of the CSV files, in order; a (graph, run) seen again
    replaces the earlier one."""
    by_key: dict[tuple[str, str], Record] = {}
    for path in paths:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                try:
                    rec = Record(graph=row["graph"], n=int(row["n"]), arcs=int(row["arcs"]), run=row["run"],
                                 engine=row["engine"], sources=int(row["sources"]), seconds=float(row["seconds"]),
                                 extrapolated=row["extrapolated"].strip().lower() == "true",
                                 machine=row.get("machine", "") or "")
                except (KeyError, ValueError) as err:
                    raise ValueError(f"{path}:{line}: bad record ({err})") from err
                by_key.pop((rec.graph, rec.run), None)
                by_key[(rec.graph, rec.run)] = rec
    return list(by_key.values())


def select(records: list[Record], engines: list[str], graphs: str) -> dict[str, list[Record]]:
    """The records drawn, per engine in the given order: the engine's run
    (auto for pathctl), graphs whose name matches the expression, a
    positive time and work."""
    pattern = re.compile(graphs)
    chosen: dict[str, list[Record]] = {}
    for engine in engines:
        run = SERIES.get(engine, (None, engine))[0]
        rows = [r for r in records if r.engine == engine and (run is None or r.run == run)
                and pattern.search(r.graph) and r.seconds > 0 and r.work > 0]
        if rows:
            chosen[engine] = sorted(rows, key=lambda r: r.work)
    return chosen


def plot(chosen: dict[str, list[Record]], out: str, width: float, height: float, dpi: int, title: str) -> None:
    """Draws the curve into the PNG out, width × height inches at dpi."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=dpi)
    names: dict[str, tuple[float, float]] = {}  # graph -> (work, highest time)
    for engine, rows in chosen.items():
        colour = COLOURS.get(engine, None)
        label = SERIES.get(engine, (None, engine))[1]
        for family in sorted({r.family for r in rows}):
            pts = [r for r in rows if r.family == family]
            marker = MARKERS.get(family, "D")
            line, = ax.plot([r.work for r in pts], [r.seconds for r in pts], "-", color=colour, alpha=0.7,
                            label=label)
            label = "_nolegend_"  # one legend entry per engine
            colour = line.get_color()
            for r in pts:
                ax.plot([r.work], [r.seconds], marker=marker, linestyle="none", markersize=7, color=colour,
                        markerfacecolor="white" if r.extrapolated else colour, markeredgewidth=1.5)
                w, top = names.get(r.graph, (r.work, 0.0))
                names[r.graph] = (w, max(top, r.seconds))
    gpu = chosen.get("pathctl-gpu")
    if gpu:
        lo, hi = min(r.work for rows in chosen.values() for r in rows), max(r.work for rows in chosen.values() for r in rows)
        base = gpu[0]
        ax.plot([lo, hi], [base.seconds * lo / base.work, base.seconds * hi / base.work], ":", color="grey",
                label="∝ n × arcs (through the first GPU point)")
    for graph, (work, top) in names.items():
        ax.annotate(graph, (work, top), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    for family, marker in MARKERS.items():
        if any(r.family == family for rows in chosen.values() for r in rows):
            ax.plot([], [], marker=marker, linestyle="none", color="black", label={"rmat": "R-MAT", "grid": "grid"}.get(family, family))
    ax.plot([], [], marker="o", linestyle="none", color="black", markerfacecolor="white", label="extrapolated from a sample")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n × arcs (vertices × arcs: the work of every source relaxing every arc once)")
    ax.set_ylabel("seconds, every source (stats layout)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.subplots_adjust(left=0.1, right=0.97, top=0.92, bottom=0.1)
    fig.savefig(out, dpi=dpi, format="png")
    plt.close(fig)


def default_title(chosen: dict[str, list[Record]]) -> str:
    machines = sorted({r.machine for rows in chosen.values() for r in rows if r.machine})
    where = machines[0] if len(machines) == 1 else f"{len(machines)} machines" if machines else "machine not recorded"
    return f"All-pairs shortest paths, seconds against n × arcs ({where})"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+", help="CSV records of bench/bench_gpu.py")
    ap.add_argument("-o", "--out", default="bench/results/scaling.png", help="the PNG to write")
    ap.add_argument("--engines", default=DEFAULT_ENGINES, help=f"engines drawn, in legend order (of {', '.join(SERIES)})")
    ap.add_argument("--graphs", default=r"^(rmat|grid)", help="regular expression of the graph names drawn")
    ap.add_argument("--width", type=float, default=9.0, help="inches")
    ap.add_argument("--height", type=float, default=6.0, help="inches")
    ap.add_argument("--dpi", type=int, default=100)
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        records = read_records(args.records)
    except (OSError, ValueError) as err:
        print(f"plot_scaling: {err}", file=sys.stderr)
        return 1
    engines = [e for e in args.engines.split(",") if e]
    chosen = select(records, engines, args.graphs)
    if not chosen:
        print(f"plot_scaling: no record of {', '.join(engines)} on graphs matching {args.graphs!r} in "
              f"{', '.join(args.records)}", file=sys.stderr)
        return 1
    plot(chosen, args.out, args.width, args.height, args.dpi, args.title or default_title(chosen))
    drawn = sum(len(rows) for rows in chosen.values())
    missing = [e for e in engines if e not in chosen]
    print(f"plot_scaling: {drawn} points of {len(chosen)} engines drawn to {args.out}"
          + (f"; no record of {', '.join(missing)}" if missing else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
