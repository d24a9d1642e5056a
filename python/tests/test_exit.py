"""A run's threads hold no reference to the run, so that the interpreter's
exit never frees a pyarrow object in one of them."""

from __future__ import annotations

import gc

import pyarrow as pa

import pathctl
from pathctl import _local


def test_the_stderr_thread_holds_no_run(monkeypatch):
    """The thread that drains the binary's stderr is a daemon, alive until
    the binary exits, which a run whose result is in a memfd does not wait
    for. Were the run among what that thread holds, the run and its edges'
    reader would be freed in that thread when the caller drops the run
    before the binary's exit; a pyarrow object freed there while the
    interpreter exits aborts the process ("terminate called without an
    active exception", about 1 run in 100 of a script that called apsp and
    sssp, before)."""
    seen = []
    start = _local.Run._start

    def recording_start(self, *args, **kwargs):
        start(self, *args, **kwargs)
        thread = self._stderr_thread
        # The thread's callable and arguments, while it runs (Thread drops
        # them when its target returns).
        held = [getattr(thread, "_target", None), *getattr(thread, "_args", ())]
        seen.append((self, thread, held))

    monkeypatch.setattr(_local.Run, "_start", recording_start)
    for edges in (pa.table({"src": [1, 2], "dst": [2, 3]}), pa.table({"src": [5], "dst": [6], "weight": [2.5]})):
        pathctl.apsp(edges)
    assert len(seen) == 2
    for run, thread, held in seen:
        for obj in held:
            assert obj is not run and getattr(obj, "__self__", None) is not run, obj
            assert run not in gc.get_referents(obj), obj
        assert thread.name == "pathctl-stderr"
        thread.join(timeout=30)
        assert not thread.is_alive()
