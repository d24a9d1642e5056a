"""Execute a notebook top to bottom with nbclient and fail on any error.

Usage: python run_notebook.py NOTEBOOK [--timeout SECONDS]

The notebook is run in a temporary directory and not rewritten: committed
notebooks stay without outputs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    args = parser.parse_args(argv)
    nb = nbformat.read(args.notebook, as_version=4)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pathctl-notebook-") as cwd:
        client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                                resources={"metadata": {"path": cwd}})
        try:
            client.execute()
        except CellExecutionError as exc:
            print(f"{args.notebook}: a cell failed:\n{exc}", file=sys.stderr)
            return 1
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    print(f"{args.notebook}: {cells} code cells ran in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
