#!/usr/bin/env python3
"""Results larger than one file (issue 42): a dataset's write against one
file's and against the disk (``make bench-dataset``).

    make bench-dataset                                  # R-MAT 16, GPU engine, a temporary folder here
    .venv/bin/python bench/bench_dataset.py --pathctl bin/pathctl --engine gpu --dir /data/scratch

On the disk of ``--dir`` (default: a new folder in the current directory,
not /tmp or /dev/shm, which are often memory), in one run:

a. the disk's sequential write bandwidth: ``--gib`` GiB (default 4) of
   random bytes written from Python in 64 MiB ``os.write`` calls, then one
   ``os.fsync``; the file is deleted;
b. one file: ``pathctl run G --layout pairs -o DIR/one.parquet``;
c. the same as a dataset, ``-o DIR/ds/``; its row count must equal (b)'s
   (from the files' metadata, through ``pyarrow.dataset``);
d. a kill at half: the dataset run again, SIGKILLed once about half of the
   part files that (c) wrote are complete (polled; a part is complete once
   it is renamed from its hidden temporary name, ``.part-0.parquet.tmp-*``,
   to ``part-0.parquet``), then ``--resume`` to the end. Its total, the
   kill's time and the resume's, is compared with (c); the rows must match
   again and no temporary file may remain.

pathctl fsyncs every file before renaming it into place (arrowio's
``ResultWriter.Close``), so (b) to (d) are on the disk when the command
exits; ``os.sync()`` is still timed after each run and counted in its
bandwidth, so that the comparison with (a), which ends in an fsync, is fair
whatever the writer does. MB/s are 10^6 bytes a second: bytes on disk (the
compressed files) over seconds. Every output is deleted after its step
(``--keep`` keeps them), so the disk needs room for one of them at a time;
the runs pass ``--force``, since pathctl's free-space check estimates the
Arrow size, several times the Parquet files'.

The graph is ``--graph`` or else ``pathctl gen rmat --scale 16
--edge-factor 16 --seed 1`` (``--scale``, ``--seed``). A failed check is
listed under the table and exits 1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.dataset as pads

CHUNK = 64 << 20  # bytes per os.write of the sequential write
POLL_S = 0.001  # how often the killed run's directory is looked at


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pathctl", default=os.environ.get("PATHCTL_BIN", "bin/pathctl"), help="the pathctl binary")
    p.add_argument("--graph", help="an edge file (default: R-MAT --scale generated into the run's folder)")
    p.add_argument("--scale", type=int, default=16, help="R-MAT scale of the generated graph (edge factor 16)")
    p.add_argument("--seed", type=int, default=1, help="seed of the generated graph")
    p.add_argument("--engine", default="gpu", choices=["gpu", "cpu"], help="pathctl's --engine")
    p.add_argument("--format", default="parquet", choices=["parquet", "arrow"], help="the files' format")
    p.add_argument("--dataset-block", type=int, default=0, help="pathctl's --dataset-block (0: its default)")
    p.add_argument("--pathctl-args", default="", help="more arguments for every `pathctl run`, e.g. '--undirected'")
    p.add_argument("--gib", type=float, default=4.0, help="GiB of the sequential write")
    p.add_argument("--dir", help="where to write: a new folder is made in it (default: the current directory)")
    p.add_argument("--keep", action="store_true", help="keep the outputs (and the folder)")
    p.add_argument("--limit", type=float, default=1800, help="seconds a run may take")
    p.add_argument("--out", default="bench/results/bench-dataset.md", help="also write the report here ('' none)")
    return p.parse_args(argv)


# The steps, each a row of the table.


def sequential_write(path: Path, nbytes: int) -> float:
    """Seconds to write nbytes of random bytes to path in CHUNK writes and
    fsync it; the file is deleted."""
    chunk = os.urandom(CHUNK)  # not zeros: a compressing file system would skip them
    view = memoryview(chunk)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.perf_counter()
        left = nbytes
        while left > 0:
            n = os.write(fd, view[:min(left, CHUNK)])
            left -= n
        os.fsync(fd)
        seconds = time.perf_counter() - t0
    finally:
        os.close(fd)
        path.unlink()
    return seconds


def timed_sync() -> float:
    t0 = time.perf_counter()
    os.sync()
    return time.perf_counter() - t0


def run_pathctl(args, graph: str, out: str, *extra: str) -> tuple[float, float, str]:
    """Wall seconds of one `pathctl run`, the os.sync() after it, and its stderr."""
    cmd = run_command(args, graph, out, *extra)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.limit)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return wall, timed_sync(), proc.stderr


def run_command(args, graph: str, out: str, *extra: str) -> list[str]:
    cmd = [args.pathctl, "run", graph, "--layout", "pairs", "--engine", args.engine, "--force", "-o", out]
    if args.format != "parquet":
        cmd += ["--format", args.format]
    if args.dataset_block and out.endswith("/"):
        cmd += ["--dataset-block", str(args.dataset_block)]
    return cmd + shlex.split(args.pathctl_args) + list(extra)


def killed_at_half(args, graph: str, ds: Path, parts: int) -> tuple[float, int]:
    """Starts the dataset run and SIGKILLs it once half of its parts (at
    least one) are complete: the seconds from its start to its exit, and
    the parts complete then."""
    half = max(1, parts // 2)
    cmd = run_command(args, graph, str(ds) + "/", "--quiet")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while complete_parts(ds) < half:
            if proc.poll() is not None:
                raise RuntimeError(f"the run to kill ended first (exit {proc.returncode}, "
                                   f"{complete_parts(ds)} of {parts} parts): {proc.stderr.read().strip()}")
            if time.perf_counter() - t0 > args.limit:
                raise RuntimeError(f"the run to kill took over {args.limit} s")
            time.sleep(POLL_S)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    return time.perf_counter() - t0, complete_parts(ds)


# What is on the disk.


def complete_parts(ds: Path) -> int:
    """Part files renamed into place in the partitions of ds (temporary
    files start with a dot)."""
    n = 0
    for part_dir in list_dir(ds):
        if part_dir.is_dir() and "=" in part_dir.name:
            n += sum(1 for f in list_dir(part_dir) if f.name.startswith("part-"))
    return n


def list_dir(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except FileNotFoundError:  # not made yet, or being made
        return []


def tree_bytes(path: Path) -> tuple[int, int]:
    """Bytes and count of the regular files under path (or of path)."""
    if path.is_file():
        return path.stat().st_size, 1
    total = files = 0
    for root, _, names in os.walk(path):
        for name in names:
            total += os.path.getsize(os.path.join(root, name))
            files += 1
    return total, files


def temporaries(path: Path) -> list[str]:
    return [os.path.join(root, n) for root, _, names in os.walk(path) for n in names
            if n.startswith(".") and ".tmp-" in n]


def count_rows(path: Path, fmt: str) -> int:
    """Rows of a file or a hive dataset from its metadata (Parquet footers,
    Arrow IPC batch headers); names starting with '_' or '.' are skipped."""
    return pads.dataset(str(path), format="ipc" if fmt == "arrow" else fmt, partitioning="hive").count_rows()


def manifest(ds: Path) -> dict:
    return json.loads((ds / "_pathctl.json").read_text())


def partial_files(ds: Path) -> list[dict]:
    """The parts the partial manifest of a killed run lists: those its
    resume keeps (a part renamed into place but not yet listed is computed
    again)."""
    try:
        return json.loads((ds / "_pathctl.partial.json").read_text())["files"] or []
    except FileNotFoundError:
        return []


# The report.


def mbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e6


def row(step: str, seconds: float, sync: float | None, nbytes: int | None, disk: float | None, rows, note: str) -> str:
    total = seconds + (sync or 0.0)
    rate = f"{mbps(nbytes, total):,.0f}" if nbytes else "—"
    share = f"{100 * mbps(nbytes, total) / disk:.0f} %" if nbytes and disk else "—"
    return (f"| {step} | {seconds:.2f} | {'—' if sync is None else f'{sync:.2f}'} | "
            f"{'—' if nbytes is None else f'{nbytes:,}'} | {rate} | {share} | {rows} | {note} |")


def main(argv=None) -> int:
    args = parse_args(argv)
    base = Path(args.dir or ".").resolve()
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-dataset-", dir=base))
    failures: list[str] = []
    lines: list[str] = []
    try:
        graph = args.graph
        if not graph:
            graph = str(work / f"rmat{args.scale}.parquet")
            subprocess.run([args.pathctl, "gen", "rmat", "--scale", str(args.scale), "--edge-factor", "16",
                            "--seed", str(args.seed), "-o", graph], check=True, capture_output=True)
        ext = "." + args.format

        # a. The disk alone.
        nbytes = int(args.gib * (1 << 30))
        seq_s = sequential_write(work / "sequential.bin", nbytes)
        disk = mbps(nbytes, seq_s)
        lines.append(row("a. sequential write (os.write 64 MiB, fsync)", seq_s, None, nbytes, disk, "—",
                         f"{args.gib:g} GiB of random bytes"))
        print(lines[-1], file=sys.stderr, flush=True)

        # b. One file.
        one = work / f"one{ext}"
        one_s, one_sync, _ = run_pathctl(args, graph, str(one), "--quiet")
        one_bytes, _ = tree_bytes(one)
        one_rows = count_rows(one, args.format)
        lines.append(row(f"b. one file (-o one{ext})", one_s, one_sync, one_bytes, disk, f"{one_rows:,}", "1 file"))
        print(lines[-1], file=sys.stderr, flush=True)
        if not args.keep:
            one.unlink()

        # c. The dataset, uninterrupted.
        ds = work / "ds"
        ds_s, ds_sync, _ = run_pathctl(args, graph, str(ds) + "/", "--quiet")
        ds_bytes, ds_files = tree_bytes(ds)
        ds_rows = count_rows(ds, args.format)
        parts = manifest(ds)["blocks"]
        same = ds_rows == one_rows
        if not same:
            failures.append(f"the dataset holds {ds_rows} rows, the one file {one_rows}")
        lines.append(row("c. dataset (-o ds/)", ds_s, ds_sync, ds_bytes, disk, f"{ds_rows:,}",
                         f"{parts} parts, {ds_files} files; rows {'=' if same else '≠'} (b)"))
        print(lines[-1], file=sys.stderr, flush=True)
        if not args.keep:
            shutil.rmtree(ds)

        # d. Killed at half, then resumed.
        rs = work / "resumed"
        kill_s, kept = killed_at_half(args, graph, rs, parts)
        kill_sync = timed_sync()
        listed = len(partial_files(rs))
        lines.append(row("d1. dataset, SIGKILL at half", kill_s, kill_sync, None, None, "—",
                         f"{kept} of {parts} parts complete at the kill, {listed} in the partial manifest"))
        print(lines[-1], file=sys.stderr, flush=True)
        res_s, res_sync, stderr = run_pathctl(args, graph, str(rs) + "/", "--resume")
        said = re.search(r"\((\d+) computed now\)", stderr)
        computed = said.group(1) if said else "?"
        rs_bytes, _ = tree_bytes(rs)
        rs_rows = count_rows(rs, args.format)
        left = temporaries(rs)
        if rs_rows != one_rows:
            failures.append(f"the resumed dataset holds {rs_rows} rows, the one file {one_rows}")
        if left:
            failures.append(f"temporary files remain after the resume: {', '.join(left)}")
        lines.append(row("d2. --resume to the end", res_s, res_sync, None, None, "—",
                         f"{computed} parts computed"))
        print(lines[-1], file=sys.stderr, flush=True)
        total = kill_s + kill_sync + res_s + res_sync
        lines.append(row("d. kill + resume, total", kill_s + res_s, kill_sync + res_sync, rs_bytes, disk,
                         f"{rs_rows:,}", f"{total / (ds_s + ds_sync):.2f}× (c); rows {'=' if rs_rows == one_rows else '≠'} (b); "
                         f"{len(left)} temporary files left"))
        print(lines[-1], file=sys.stderr, flush=True)
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as err:  # ValueError: pyarrow's ArrowInvalid
        failures.append(str(err))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    invocation = " ".join([Path(__file__).name] + [shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])])
    report = [
        "# A dataset's write against one file's and the disk's",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} cores; "
        f"graph {args.graph or f'R-MAT {args.scale} (edge factor 16, seed {args.seed})'}, pairs layout, {args.format}, "
        f"engine {args.engine}; written in {base}.",
        f"Command: `{invocation}`",
        "",
        "| step | seconds | os.sync (s) | bytes | MB/s | % of (a) | rows | note |",
        "|---|---|---|---|---|---|---|---|",
        *lines,
        "",
        "Seconds are the command's wall time; MB/s count the os.sync() after it. pathctl fsyncs each file "
        "before its rename, so the figures hold no page-cache effect beyond what the sync column shows.",
    ]
    if failures:
        report += ["", "Failed:", *[f"- {f}" for f in failures]]
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
