#!/usr/bin/env python3
"""Exports the real graphs of the benchmark from graph-tool's collection to
Parquet, once, for bench/bench_gpu.py:

    sudo apt-get install python3-graph-tool        # Debian (bookworm and later)
    python3 bench/export_graph_tool.py             # writes bench/results/data/

Each graph becomes NAME.parquet with columns src, dst (int64 vertex indices)
and weight where the graph has a numeric edge property (see --weight) — or
NAME.csv with the same columns where pyarrow is not importable beside the
system's graph-tool — and NAME.json beside it: whether it is undirected (bench_gpu.py passes
`--undirected` to pathctl then), the weight property used, the counts, and
where it came from. graph_tool.collection.data (the networks shipped with
the package, no network needed) is tried first, then graph_tool.collection.ns
(the Netzschleuder repository, downloaded on first use).

In an undirected graph-tool graph every edge is listed once; pathctl and
the peers add the reverse direction. Vertices without an edge do not occur
in an edge table, so pathctl counts only the vertices that do.
"""
import argparse
import json
import os
import sys

GRAPHS = ["email-Enron", "cond-mat-2005", "pgp-strong-2009"]
# Netzschleuder entry names to try when the packaged collection lacks a graph.
NS_NAMES = {
    "email-Enron": ["email_enron", "email-enron"],
    "cond-mat-2005": ["cond_mat/2005", "cond_mat_2005", "cond-mat-2005"],
    "pgp-strong-2009": ["pgp_strong", "pgp-strong-2009"],
}
# Edge properties taken as the weight, in order of preference.
WEIGHT_NAMES = ["weight", "value", "weights", "strength"]


def load(name: str):
    """The graph called name and a description of where it came from."""
    import graph_tool.collection as collection

    errors = []
    data = getattr(collection, "data", None)
    if data is not None:
        try:
            return data[name], f"graph_tool.collection.data[{name!r}]"
        except Exception as err:  # KeyError, or a missing data file
            errors.append(f"data[{name!r}]: {err}")
    ns = getattr(collection, "ns", None)
    if ns is not None:
        for entry in NS_NAMES.get(name, [name]):
            try:
                return ns[entry], f"graph_tool.collection.ns[{entry!r}]"
            except Exception as err:  # unknown entry, no network
                errors.append(f"ns[{entry!r}]: {err}")
    raise LookupError(f"{name}: not found in graph-tool's collection ({'; '.join(errors) or 'no collection'})")


def weight_property(g, wanted: str | None):
    """The name of the edge property used as weight: wanted ("" for none),
    else the first numeric scalar one of WEIGHT_NAMES; None for none."""
    if wanted == "":
        return None
    names = [wanted] if wanted else WEIGHT_NAMES
    for key in names:
        if key in g.ep:
            t = g.ep[key].value_type()
            if any(x in t for x in ("int", "double", "float", "long")) and "vector" not in t:
                return key
            if wanted:
                raise ValueError(f"edge property {key!r} is {t}, not a number")
    if wanted:
        raise KeyError(f"no edge property {wanted!r} (have: {', '.join(g.ep.keys()) or 'none'})")
    return None


def edge_columns(g, weight: str | None):
    """src, dst and weight (or None) as numpy arrays, in graph-tool's edge
    order."""
    import numpy as np

    if weight is None:
        edges = np.asarray(g.get_edges())
        return edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64), None
    prop = g.ep[weight]
    try:
        edges = np.asarray(g.get_edges([prop]))  # graph-tool >= 2.27: source, target, weight
        src, dst, w = edges[:, 0], edges[:, 1], edges[:, 2]
    except TypeError:  # older: source, target, edge index
        edges = np.asarray(g.get_edges())
        src, dst, w = edges[:, 0], edges[:, 1], np.asarray(prop.a)[edges[:, 2]]
    w = np.asarray(w)
    if "int" in prop.value_type() or "long" in prop.value_type():
        w = w.astype(np.int64)
    else:
        w = w.astype(np.float64)
    return src.astype(np.int64), dst.astype(np.int64), w


def have_pyarrow() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def write_csv(path: str, src, dst, w) -> None:
    """src,dst[,weight] as text: what pathctl and the driver read where
    pyarrow is missing beside Debian's graph-tool."""
    import numpy as np

    with open(path, "w") as f:
        f.write("src,dst" + (",weight" if w is not None else "") + "\n")
        if w is None:
            np.savetxt(f, np.column_stack([src, dst]), fmt="%d", delimiter=",")
        elif w.dtype.kind in "iu":
            np.savetxt(f, np.column_stack([src, dst, w]), fmt="%d", delimiter=",")
        else:
            for a, b, c in zip(src.tolist(), dst.tolist(), w.tolist()):
                f.write(f"{a},{b},{c!r}\n")


def export(g, name: str, origin: str, out_dir: str, weight_flag: str | None, fmt: str = "") -> dict:
    """Writes NAME.parquet (or NAME.csv: fmt "csv", or "" without pyarrow)
    and the sidecar NAME.json; returns the sidecar's content."""
    import numpy as np

    weight = weight_property(g, weight_flag)
    src, dst, w = edge_columns(g, weight)
    skipped = None
    if w is not None and not np.isfinite(w.astype(np.float64)).all():
        bad = int((~np.isfinite(w.astype(np.float64))).sum())
        if weight_flag:
            raise ValueError(f"{name}: weight property {weight!r} has {bad} non-finite values")
        # A property found by name, not asked for: cond-mat-2005's "value"
        # (collaboration strength) is infinite on 2 edges, so the graph is
        # exported unweighted and the sidecar says why.
        skipped = f"{weight}: {bad} non-finite values"
        print(f"{name}: edge property {weight!r} has {bad} non-finite values; exported unweighted", file=sys.stderr)
        weight, w = None, None
    fmt = fmt or ("parquet" if have_pyarrow() else "csv")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.{fmt}")
    tmp = path + ".tmp"
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = {"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64())}
        if w is not None:
            cols["weight"] = pa.array(w)
        pq.write_table(pa.table(cols), tmp, compression="zstd")
    else:
        write_csv(tmp, src, dst, w)
    os.replace(tmp, path)
    for other in ("parquet", "csv"):  # one file per graph
        stale = os.path.join(out_dir, f"{name}.{other}")
        if other != fmt and os.path.exists(stale):
            os.remove(stale)
    meta = {
        "name": name,
        "source": origin,
        "file": os.path.basename(path),
        "undirected": not g.is_directed(),
        "weight": weight,
        "weight_skipped": skipped,
        "graph_vertices": int(g.num_vertices()),
        "vertices_with_edges": int(len(np.unique(np.concatenate([src, dst])))) if len(src) else 0,
        "edges": int(len(src)),
        "min_weight": None if w is None or not len(w) else float(w.min()),
        "max_weight": None if w is None or not len(w) else float(w.max()),
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=",".join(GRAPHS))
    ap.add_argument("--out", default="bench/results/data")
    ap.add_argument("--format", choices=["parquet", "csv"], default="",
                    help="output format (default: parquet where pyarrow imports, else csv)")
    ap.add_argument("--weight", default=None,
                    help="edge property to use as weight ('' for none; default: the first of " + ", ".join(WEIGHT_NAMES) + ")")
    args = ap.parse_args(argv)
    try:
        import graph_tool  # noqa: F401
    except ImportError as err:
        print(f"graph-tool is not importable ({err}); on Debian: sudo apt-get install python3-graph-tool", file=sys.stderr)
        return 2
    failed = 0
    for name in [x for x in args.graphs.split(",") if x]:
        try:
            g, origin = load(name)
            meta = export(g, name, origin, args.out, args.weight, args.format)
        except (LookupError, ValueError) as err:
            print(f"{name}: {err}", file=sys.stderr)
            failed += 1
            continue
        kind = "undirected" if meta["undirected"] else "directed"
        weighted = f"weight {meta['weight']!r}" if meta["weight"] else "unweighted"
        print(f"{name}: {meta['edges']} edges, {meta['vertices_with_edges']} vertices, {kind}, {weighted}, "
              f"from {origin}, to {os.path.join(args.out, meta['file'])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
