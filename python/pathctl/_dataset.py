"""Results written as a partitioned dataset: ``out="dir/"`` of apsp, sssp
and bfs.

The binary writes the directory (``pathctl run -o DIR/``: one Parquet file
per block of sources under hive partitions, and the ``_pathctl.json``
manifest last, see docs/cli.md); this module makes its flags and opens the
finished directory as a :class:`pyarrow.dataset.Dataset`. The dataset is
the manifest's files in block order, so that ``dataset.to_table()`` has
the rows of the one-file result in the same order; a dataset partitioned
by source prunes its files on a filter of ``source``.
"""

from __future__ import annotations

import base64
import json
import numbers
import os
from typing import Any, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from . import _errors

MANIFEST = "_pathctl.json"
PARTITIONS = ("source_block", "source")


def dataset_flags(out: Any, *, resume: Any, overwrite: Any, partition_by: Optional[str],
                  dataset_block: Optional[int]) -> Optional[List[str]]:
    """The flags of a dataset output at ``out`` (None: no dataset, and then
    none of the other keywords may be given)."""
    for name, value in (("resume", resume), ("overwrite", overwrite)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}={value!r}: {name} is True or False")
    if out is None:
        given = [name for name, value in (("resume", resume), ("overwrite", overwrite),
                                          ("partition_by", partition_by), ("dataset_block", dataset_block))
                 if value not in (None, False)]
        if given:
            raise _errors.UsageError(f"{given[0]}=... is an option of a dataset result: give out=\"dir/\" too")
        return None
    path = os.fspath(out)
    if not isinstance(path, str) or not path:
        raise TypeError(f"out={out!r}: out is the dataset's directory, a str or os.PathLike")
    if resume and overwrite:
        raise _errors.UsageError("resume=True and overwrite=True: give one (overwrite starts the dataset again)")
    args = ["-o", path if path.endswith(os.sep) else path + os.sep, "--format", "parquet"]
    if partition_by is not None:
        if partition_by not in PARTITIONS:
            raise _errors.UsageError(f"partition_by={partition_by!r}: want one of {', '.join(map(repr, PARTITIONS))}")
        args += ["--partition-by", partition_by]
    if dataset_block is not None:
        if isinstance(dataset_block, (bool, np.bool_)) or not isinstance(dataset_block, numbers.Integral):
            raise _errors.UsageError(f"dataset_block={dataset_block!r}: the sources per file, a whole number of 1 or more")
        args += ["--dataset-block", str(int(dataset_block))]
    if resume:
        args.append("--resume")
    if overwrite:
        args.append("--overwrite")
    return args


def open_dataset(out: Any) -> ds.Dataset:
    """The complete dataset at ``out`` as a pyarrow Dataset: its manifest's
    files in block order, with the source partitions' values typed as the
    files' source column where it is partitioned by source."""
    base = os.fspath(out)
    with open(os.path.join(base, MANIFEST), encoding="utf-8") as f:
        manifest = json.load(f)
    if not manifest.get("complete"):
        raise _errors.PathctlError(f"{base}: the dataset is not complete (its manifest says so); "
                                   "run again with resume=True")
    paths = [os.path.join(base, *entry["path"].split("/")) for entry in manifest["files"]]
    schema = pa.ipc.open_stream(pa.py_buffer(base64.b64decode(manifest["schema"]["ipc"]))).schema
    fmt = manifest["query"].get("format", "parquet")
    fmt = "ipc" if fmt == "arrow" else fmt
    if manifest["query"].get("partition_by") == "source" and "source" in schema.names:
        part = ds.partitioning(pa.schema([schema.field("source")]), flavor="hive")
        return ds.dataset(paths, format=fmt, partitioning=part, partition_base_dir=base)
    return ds.dataset(paths, format=fmt)


__all__ = ("dataset_flags", "open_dataset")
