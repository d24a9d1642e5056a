"""pathctl.spark.apsp(..., out="dir/"): each Spark task writes its block of
sources straight into one Parquet dataset, under the CLI's rules (see
docs/cli.md, "Datasets"): a file appears under its final name only when
complete, and the ``_pathctl.json`` manifest, written last by the driver,
states that the dataset is complete.

A task runs its block as a one-block dataset of the local binary
(``pathctl run -o DIR/.spark-block-NNNNN-ATTEMPT/``, hidden from readers),
then renames the block's file to ``DIR/source_block=NNNNN/part-0.parquet``
and returns that dataset's manifest. The name depends on the block only:
a retried or speculative attempt replaces the file of the attempt before
it, so that a block is there once, never twice. The driver removes the
leftovers of failed attempts and writes the manifest from the tasks'
ones, once every block is in place. The directory must be on a file
system every executor sees (local mode, NFS, a cluster file system):
rename is what makes a file appear whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from typing import Any, Dict, List, Optional

from . import _errors

MANIFEST = "_pathctl.json"
ATTEMPT_PREFIX = ".spark-block-"


def dataset_dir(out: Any, overwrite: Any) -> str:
    """The dataset directory of ``out``, made empty for the run: a
    directory holding anything is refused unless ``overwrite``, which
    removes a pathctl dataset and refuses other files."""
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite={overwrite!r}: overwrite is True or False")
    path = os.path.abspath(os.fspath(out))
    if os.path.exists(path) and not os.path.isdir(path):
        raise _errors.UsageError(f"pathctl.spark: out={os.fspath(out)!r} is a file, not a directory")
    names = os.listdir(path) if os.path.isdir(path) else []
    if names and not overwrite:
        raise _errors.UsageError(f"pathctl.spark: out={os.fspath(out)!r}: the directory is not empty; "
                                 "give overwrite=True to replace the dataset it holds")
    foreign = [n for n in names if not _is_dataset_entry(n)]
    if foreign:
        raise _errors.UsageError(f"pathctl.spark: overwrite=True: {path} holds {sorted(foreign)[0]}, which is "
                                 "not part of a pathctl dataset; remove it or write elsewhere")
    for name in names:
        full = os.path.join(path, name)
        shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)
    os.makedirs(path, exist_ok=True)
    return path


def _is_dataset_entry(name: str) -> bool:
    return (name.startswith(("source_block=", "_pathctl", "._pathctl", ATTEMPT_PREFIX, "_vertices.", "._vertices."))
            or name.startswith("source="))


def block_width(blocks: int) -> int:
    """The digits of the blocks' partition numbers, as the CLI pads them."""
    return max(5, len(str(max(blocks - 1, 0))))


def write_block(directory: str, block: int, first: int, width: int, sources: List[Any],
                edges: Any, options: Dict[str, Any]) -> str:
    """Run one block on this executor into ``directory`` and return its
    manifest (JSON): the block's file renamed into place, the attempt's
    own directory removed."""
    from ._api import apsp

    name = f"{block:0{width}d}"
    attempt = os.path.join(directory, f"{ATTEMPT_PREFIX}{name}-{uuid.uuid4().hex}")
    apsp(edges, sources=sources, out=attempt + os.sep, dataset_block=max(1, len(sources)), **options)
    with open(os.path.join(attempt, MANIFEST), encoding="utf-8") as f:
        manifest = json.load(f)
    (entry,) = manifest["files"]
    rel = f"source_block={name}/part-0.parquet"
    partition = os.path.join(directory, f"source_block={name}")
    os.makedirs(partition, exist_ok=True)
    os.replace(os.path.join(attempt, *entry["path"].split("/")), os.path.join(directory, *rel.split("/")))
    _sync_dir(partition)
    shutil.rmtree(attempt, ignore_errors=True)
    manifest["files"] = [dict(entry, path=rel, block=block, first_source=first)]
    return json.dumps(manifest)


def write_manifest(directory: str, manifests: List[str], sources: Optional[List[Any]], block_size: int,
                   total: int) -> Dict[str, Any]:
    """Write the dataset's ``_pathctl.json`` from the tasks' manifests, last
    (temporary file, sync, rename), after removing what failed attempts
    left; the tasks must agree on the graph and the query."""
    parts = sorted((json.loads(m) for m in manifests), key=lambda m: m["files"][0]["block"])
    first = parts[0]
    for m in parts[1:]:
        for key in ("graph", "schema"):
            if m[key] != first[key]:
                raise _errors.PathctlError(f"pathctl.spark: block {m['files'][0]['block']} ran on another "
                                           f"{key} than block {first['files'][0]['block']}; the dataset is not complete")
    blocks = sorted(m["files"][0]["block"] for m in parts)
    if blocks != list(range(len(blocks))):
        raise _errors.PathctlError(f"pathctl.spark: blocks {blocks} came back, not each once; the dataset is not complete")
    for name in os.listdir(directory):
        if name.startswith(ATTEMPT_PREFIX):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)
    manifest = dict(first)
    manifest["writer"] = "pathctl.spark"
    manifest["complete"] = True
    manifest["blocks"] = len(parts)
    query = dict(first["query"], block_size=block_size, sources=total)
    # "all" for every vertex, as the CLI writes it; else a hash of the ids
    # as given (the driver has no dense ids).
    query["sources_hash"] = "all" if sources is None else \
        "ids:" + hashlib.sha256(json.dumps(sources, default=str).encode()).hexdigest()
    manifest["query"] = query
    manifest["files"] = [m["files"][0] for m in parts]
    manifest["rows"] = sum(f["rows"] for f in manifest["files"])
    manifest["bytes"] = sum(f["bytes"] for f in manifest["files"])
    fd, tmp = tempfile.mkstemp(prefix="." + MANIFEST + ".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(directory, MANIFEST))
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _sync_dir(directory)
    return manifest


def _sync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ("dataset_dir", "block_width", "write_block", "write_manifest")
