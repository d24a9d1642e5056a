"""Finding the pathctl binary: the one bundled with this package's wheel,
else ``binary=``'s or $PATHCTL_BIN's, else ``pathctl`` on PATH, and the
hint that says how to install one when none is found.

Apart from the run itself because the Flight client, the graph objects and
``pathctl.find_binary`` need the binary without starting a process.
"""

from __future__ import annotations

import functools
import os
import shutil
from typing import Optional

from . import _errors

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

INSTALL_HINT = (
    "install a pathctl wheel, which bundles the binary (`make wheel` in a checkout of the "
    "repository writes them to dist/), or build the binary there with `make build` and set "
    "PATHCTL_BIN to bin/pathctl or put it on PATH"
)


def bundled_binary() -> Optional[str]:
    """The pathctl executable installed by this package's wheel (into the
    environment's scripts directory, as ruff and uv install theirs), or None
    for an installation without one (a source or editable install)."""
    path = _bundled_path()
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


@functools.lru_cache(maxsize=1)
def _bundled_path() -> Optional[str]:
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        dist = metadata.distribution("pathctl")
    except metadata.PackageNotFoundError:
        return None
    files = list(dist.files or ())
    init = [f for f in files if f.as_posix() == "pathctl/__init__.py"]
    if not init or os.path.dirname(os.path.abspath(str(dist.locate_file(init[0])))) != _PACKAGE_DIR:
        return None  # metadata of another pathctl installation than this one
    for f in files:
        if f.name in ("pathctl", "pathctl.exe") and f.parent.name in ("bin", "Scripts"):
            return os.path.abspath(str(dist.locate_file(f)))
    return None


def find_binary(binary: Optional[str] = None) -> str:
    """The pathctl executable: ``binary`` if given, else the one bundled with
    this package (a wheel from ``make wheel``), else $PATHCTL_BIN, else
    ``pathctl`` on PATH. Raises BinaryNotFoundError saying how to install it.

    The bundled binary comes first because it is the one whose version
    matches the package's; a PATHCTL_BIN left over from a source checkout
    does not shadow it."""
    if not binary:
        bundled = bundled_binary()
        if bundled:
            return bundled
    candidate = binary or os.environ.get("PATHCTL_BIN") or ""
    if candidate:
        found = shutil.which(candidate) if os.sep not in candidate else candidate
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return os.path.abspath(found)
        where = "binary=" if binary else "PATHCTL_BIN="
        raise _errors.BinaryNotFoundError(
            f"pathctl binary not found at {where}{candidate!r}: {INSTALL_HINT}")
    found = shutil.which("pathctl")
    if not found:
        raise _errors.BinaryNotFoundError(
            f"pathctl binary not found: none bundled with this package, PATHCTL_BIN unset, "
            f"none on PATH; {INSTALL_HINT}")
    return found
