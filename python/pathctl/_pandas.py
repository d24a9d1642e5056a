"""Results as pandas DataFrames that keep their ids."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def to_pandas(table: Any, **kwargs: Any) -> Any:
    """``table`` (a pyarrow Table or RecordBatch, such as a result of
    :func:`pathctl.apsp`) as a pandas DataFrame whose columns keep their
    Arrow types: ``table.to_pandas(types_mapper=pd.ArrowDtype)``.

    Plain ``table.to_pandas()`` turns an integer column with nulls into
    float64 with NaN: the ``predecessor`` column of a pairs table (null on
    each source's own row) would come back as floats, and ids above 2**53
    would lose digits. Here it stays ``int64[pyarrow]`` (or the ids' own
    type) with ``<NA>``; distances, strings and ``path`` lists keep theirs
    too. Other keywords go to ``pyarrow.Table.to_pandas``.
    """
    import pandas as pd

    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        raise TypeError(f"pathctl.to_pandas takes a pyarrow Table or RecordBatch, not {type(table).__name__}")
    kwargs.setdefault("types_mapper", pd.ArrowDtype)
    return table.to_pandas(**kwargs)
