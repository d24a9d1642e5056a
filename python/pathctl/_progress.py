"""``progress=True`` of the local entry points: the binary's progress
lines (``pathctl run --progress``, on stderr) shown as a bar, or logged.

With tqdm installed (``pip install 'pathctl[progress]'``), a bar of
sources done: ``tqdm.auto`` draws a widget in a notebook and a text bar in
a terminal, and the binary is asked for a line every half second. Without
it, each line is logged at INFO on the ``pathctl`` logger (as the binary's
other messages are), at most every 5 s, which is what a log (Airflow,
cron, CI) wants: ``logging.basicConfig(level=logging.INFO)`` shows them.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, List, Optional

log = logging.getLogger("pathctl")

# The binary's line (cmd/pathctl/progress.go, progressLines).
PROGRESS_LINE = re.compile(
    r"^pathctl: progress\s+(?P<percent>[\d.]+)%: (?P<done>\d+) of (?P<total>\d+) sources, "
    r"(?P<elapsed>\S+) elapsed, (?P<left>.+) left$")

# The least time between two lines the binary prints: often for a bar,
# rarely for a log (the CLI's own default).
BAR_EVERY = "500ms"
LOG_EVERY = "5s"


def _tqdm() -> Optional[Any]:
    """tqdm.auto's bar class, or None where tqdm is not installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class Progress:
    """The progress of one run: ``flags`` for the binary; ``line`` for
    each of its progress lines (called from the thread that drains its
    stderr); ``close`` at the end, ``ok`` when the run succeeded."""

    def __init__(self, what: str) -> None:
        self._lock = threading.Lock()
        self._total: Optional[int] = None
        self._closed = False
        bar = _tqdm()
        self._bar = None if bar is None else bar(total=None, desc=what, unit="sources", dynamic_ncols=True)

    @property
    def flags(self) -> List[str]:
        return ["--progress", "--progress-every", BAR_EVERY if self._bar is not None else LOG_EVERY]

    def line(self, m: "re.Match[str]") -> None:
        done, total = int(m["done"]), int(m["total"])
        with self._lock:
            if self._closed:
                return
            self._total = total
            if self._bar is None:
                log.info("pathctl: %s of %s sources (%s%%), %s elapsed, %s left",
                         done, total, m["percent"], m["elapsed"], m["left"])
                return
            if self._bar.total != total:
                self._bar.total = total
            self._bar.n = done
            self._bar.refresh()

    def close(self, ok: bool) -> None:
        with self._lock:
            self._closed = True
            if self._bar is None:
                return
            if ok and self._total is not None:
                self._bar.n = self._total
                self._bar.refresh()
            self._bar.close()
            self._bar = None
