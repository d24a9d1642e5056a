"""Turning whatever the caller hands us as edges into Arrow."""

from __future__ import annotations

import os
from typing import Any, Sequence, Union

import pyarrow as pa

# File extensions the binary reads by name, and the --input-format each means.
_PATH_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
    ".arrows": "arrows",
    ".csv": "csv",
    ".tsv": "tsv",
    ".gr": "gr",
}


class PathInput:
    """An edge file the binary opens itself."""

    def __init__(self, path: str):
        self.path = path

    def __repr__(self) -> str:
        return f"PathInput({self.path!r})"


EdgeInput = Union[PathInput, pa.RecordBatchReader]


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def as_edge_input(edges: Any, id_columns: Sequence[str] = ("src", "dst")) -> EdgeInput:
    """Classify ``edges``: a path stays a path (the binary reads it without a
    copy through Python); everything else becomes a RecordBatchReader.

    Accepted: str or os.PathLike (Parquet, Arrow IPC file or stream, CSV, TSV,
    DIMACS .gr, compressed CSV as the binary supports), pyarrow.Table,
    RecordBatch, RecordBatchReader, pandas.DataFrame, polars.DataFrame or
    LazyFrame, and any object with ``__arrow_c_stream__`` (a DuckDB relation,
    a nanoarrow stream) or ``__arrow_c_array__``.

    pandas stores a missing value in an integer column as NaN in a float64
    column: the ``id_columns`` of a pandas DataFrame that hold NaN and
    otherwise whole numbers go over as int64 with nulls, so that the engine
    reports the null id rather than a float64 id column.
    """
    if isinstance(edges, (str, os.PathLike)):
        return PathInput(os.fspath(edges))
    if isinstance(edges, pa.RecordBatchReader):
        return _normalize_reader(edges)
    if isinstance(edges, pa.Table):
        return _normalize_reader(edges.to_reader())
    if isinstance(edges, pa.RecordBatch):
        return _normalize_reader(pa.Table.from_batches([edges]).to_reader())
    mod = _module_of(edges)
    if mod == "pandas":
        import pandas as pd

        if isinstance(edges, pd.DataFrame):
            table = pa.Table.from_pandas(edges, preserve_index=False)
            table = _keep_nan_weights(table, edges, id_columns)
            return _normalize_reader(_restore_null_ids(table, id_columns).to_reader())
    if mod == "polars":
        import polars as pl

        if isinstance(edges, pl.LazyFrame):
            edges = edges.collect()
        if isinstance(edges, pl.DataFrame):
            return _normalize_reader(edges.to_arrow().to_reader())
    if hasattr(edges, "__arrow_c_stream__"):
        return _normalize_reader(pa.RecordBatchReader.from_stream(edges))
    if hasattr(edges, "__arrow_c_array__"):
        batch = pa.record_batch(edges)
        return _normalize_reader(pa.Table.from_batches([batch]).to_reader())
    raise TypeError(
        "pathctl: edges must be a path or Arrow-shaped data (pyarrow Table, RecordBatch or "
        "RecordBatchReader, pandas or polars DataFrame, or an object with __arrow_c_stream__), "
        f"not {type(edges).__name__}"
    )


def _keep_nan_weights(table: pa.Table, frame: Any, id_columns: Sequence[str]) -> pa.Table:
    """``table`` with the NaN of ``frame``'s float columns other than the
    ids kept as NaN, which from_pandas made null: the engine then refuses
    the weight NaN the user passed, not a "null weight" they did not."""
    for name in table.column_names:
        if name in id_columns or not pa.types.is_floating(table.column(name).type):
            continue
        column = frame[name]
        if getattr(column.dtype, "kind", "") != "f" or table.column(name).null_count == 0:
            continue
        values = pa.array(column.to_numpy(), type=table.column(name).type, from_pandas=False)
        table = table.set_column(table.column_names.index(name), name, values)
    return table


def _restore_null_ids(table: pa.Table, id_columns: Sequence[str]) -> pa.Table:
    import pyarrow.compute as pc

    for name in id_columns:
        if name not in table.column_names:
            continue
        column = table.column(name)  # from_pandas has turned NaN into null
        if not pa.types.is_floating(column.type) or column.null_count == 0:
            continue
        valid = pc.drop_null(column)
        if len(valid) and not pc.all(pc.equal(pc.floor(valid), valid)).as_py():
            continue  # fractional ids: let the engine refuse the float column
        table = table.set_column(table.column_names.index(name), name, column.cast(pa.int64()))
    return table


def input_format_of(path: str) -> str:
    """The --input-format the binary would infer from ``path``'s extension
    (compression suffixes .gz/.zst stripped first), or "" when unknown."""
    base = path.lower()
    for comp in (".gz", ".zst", ".zstd"):
        if base.endswith(comp):
            base = base[: -len(comp)]
    return _PATH_FORMATS.get(os.path.splitext(base)[1], "")


def _plain_type(t: pa.DataType) -> pa.DataType:
    """View types (string_view, binary_view) as their large counterparts,
    which every Arrow IPC reader of the binary's vintage reads."""
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t):
        return pa.large_string()
    if hasattr(pa.types, "is_binary_view") and pa.types.is_binary_view(t):
        return pa.large_binary()
    return t


def _normalize_reader(reader: pa.RecordBatchReader) -> pa.RecordBatchReader:
    schema = reader.schema
    fields = [f.with_type(_plain_type(f.type)) for f in schema]
    target = pa.schema(fields, metadata=schema.metadata)
    if target.equals(schema):
        return reader

    def cast():
        for batch in reader:
            yield batch.cast(target) if hasattr(batch, "cast") else pa.Table.from_batches([batch]).cast(target).to_batches()[0]

    return pa.RecordBatchReader.from_batches(target, cast())


def read_path(path: str) -> pa.RecordBatchReader:
    """Read an edge file in Python (for Flight uploads and Spark), by
    extension: Parquet, Arrow IPC file or stream, CSV or TSV."""
    fmt = input_format_of(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_reader()
    if fmt in ("arrow", "arrows"):
        with pa.memory_map(path) as source:
            try:
                table = pa.ipc.open_file(source).read_all()
            except pa.ArrowInvalid:
                source.seek(0)
                table = pa.ipc.open_stream(source).read_all()
        return table.to_reader()
    if fmt in ("csv", "tsv"):
        import pyarrow.csv as pcsv

        parse = pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        return pcsv.read_csv(path, parse_options=parse).to_reader()
    raise ValueError(f"pathctl: cannot read {path!r} in Python: unknown extension (want .parquet, .arrow, .arrows, .csv or .tsv)")


def as_reader(edges: Any, id_columns: Sequence[str] = ("src", "dst")) -> pa.RecordBatchReader:
    """Like as_edge_input, but paths are read in Python too."""
    inp = as_edge_input(edges, id_columns)
    if isinstance(inp, PathInput):
        return read_path(inp.path)
    return inp
