"""The life of one pathctl process: starting it, draining its stderr
(the last lines, a crash report's first ones, its notes), waiting for its
exit or its done line, killing and reaping it, and turning its exit
status and stderr into the package's errors.

_RunProcess holds the methods of Run that do this; _ProcessBatches reaps
the process at the end of a streamed result.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import warnings
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple

import pyarrow as pa

from . import _errors
from ._discovery import _PACKAGE_DIR, INSTALL_HINT
from ._progress import PROGRESS_LINE

if TYPE_CHECKING:  # annotations only: _local imports this module
    from ._local import Run

log = logging.getLogger("pathctl")

# The line a run prints last on stderr when PATHCTL_DONE_LINE=1 and it
# succeeded: its results are complete; the exit (a device's teardown) may
# still take a while.
DONE_LINE_ENV = "PATHCTL_DONE_LINE"
DONE_LINE = "pathctl: done"

# Lines of the binary's stderr kept: the last ones, and the first ones of a
# crash report.
_STDERR_KEPT = 200


class _StderrLog:
    """The binary's stderr as its drain thread reads it: the last lines,
    numbered; the first lines of a crash report (a Go panic and the stack
    of its goroutine), which a long goroutine dump would push out of the
    last ones; the notes not yet warned about; the progress lines, shown by
    progress; and whether the binary said it is done.

    It is apart from the run so that the thread, a daemon, holds no
    reference to the run. The run's pyarrow objects (the edges' reader) are
    then freed where the caller drops the run, never in this thread: a
    pyarrow object freed there while the interpreter exits aborts the
    process ("terminate called without an active exception"), since its
    deallocation releases the GIL and a daemon thread that takes it back
    during the exit is stopped by an unwinding that the C++ runtime turns
    into std::terminate."""

    def __init__(self, progress: Any) -> None:
        self.lines: deque = deque(maxlen=_STDERR_KEPT)
        self.crash_lines: List[Tuple[int, str]] = []
        self.crash: Optional[str] = None
        self.notes: deque = deque()  # "pathctl: warning: ..." lines not yet warned about
        self.settled = threading.Event()  # the done line was read, or the binary exited
        self.progress = progress

    def drain(self, stream: Any) -> None:
        """Read stream (the binary's stderr) to its end, then close it."""
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line == DONE_LINE:
                self.settled.set()  # every line before it has been read
                continue
            progress = self.progress
            if progress is not None:
                m = PROGRESS_LINE.match(line)
                if m:  # shown (a bar, or logged), not kept for messages
                    progress.line(m)
                    continue
            number = self.lines[-1][0] + 1 if self.lines else 0
            self.lines.append((number, line))
            if self.crash is None and _errors.CRASH_LINE.match(line):
                self.crash = line.strip()
            if self.crash is not None and len(self.crash_lines) < _STDERR_KEPT:
                self.crash_lines.append((number, line))
            if _errors.NOTE.match(line):
                self.notes.append(line)
            if line:
                log.info("%s", line)  # notes such as a GPU-to-CPU fallback, and errors
        stream.close()


class _RunProcess:
    """The process half of Run. _start starts the binary; the rest waits
    for it, reaps it and raises its error. cleanup() is _RunHandoff's."""

    def _start(self, args: List[str], binary: str, env: Optional[Mapping[str, Any]], feeding: bool) -> None:
        """Start the binary with args (and env over this process's), feeding
        the edges on stdin when feeding, and the threads that drain its
        stderr and feed it."""
        # A run that succeeds says so on stderr before its exit, whose
        # device teardown need not be waited for (DONE_LINE).
        full_env = dict(os.environ)
        full_env[DONE_LINE_ENV] = "1"
        if env:
            full_env.update({str(k): str(v) for k, v in env.items()})
        # What the stderr thread reads (_StderrLog), apart from self so that
        # the thread holds no reference to the run.
        self._log = _StderrLog(getattr(self, "_progress", None))
        self._feed_error: Optional[BaseException] = None
        self._exited = False
        self._feed_thread: Optional[threading.Thread] = None
        self._done = False
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE if feeding else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.output == "pipe" else subprocess.DEVNULL,
                stderr=subprocess.PIPE, env=full_env, pass_fds=tuple(self._fds))
        except OSError as exc:
            self._end_progress(False)
            self.cleanup()
            raise _errors.BinaryNotFoundError(f"cannot start {binary}: {exc}; {INSTALL_HINT}") from exc
        # A run abandoned without finish() or abort() is killed when it is
        # collected or the interpreter exits.
        self._kill_at_exit = weakref.finalize(self, _kill_quietly, self.proc)
        try:
            # The binary holds its own descriptors now: the edges' memfd is
            # freed when it exits; only the result's stays open here.
            for fd in [fd for fd in self._fds if fd != self._out_fd and fd not in self._keep_fds]:
                self._fds.remove(fd)
                os.close(fd)
            if self._peer is not None:
                self._peer.start(self.proc.pid)
            self._stderr_thread = threading.Thread(target=self._log.drain, args=(self.proc.stderr,), daemon=True,
                                                   name="pathctl-stderr")
            self._stderr_thread.start()
            if feeding:
                self._feed_thread = threading.Thread(target=self._feed, args=(self._input,), daemon=True)
                self._feed_thread.start()
        except BaseException:
            # Interrupted (Ctrl-C) before the run is handed on: nothing else
            # would stop the process, whose output nobody will read.
            self._done = True
            _kill_quietly(self.proc)
            self._end_progress(False)
            self.cleanup()
            raise

    @property
    def stderr(self) -> str:
        tail = list(self._log.lines)
        head = [entry for entry in self._log.crash_lines if not tail or entry[0] < tail[0][0]]
        lines = [line for _, line in head]
        if head and head[-1][0] + 1 < tail[0][0]:
            lines.append(f"... ({tail[0][0] - head[-1][0] - 1} lines left out)")
        return "\n".join(lines + [line for _, line in tail])

    def warn_notes(self) -> None:
        """Raise a UserWarning, in the caller's thread, for each note or
        warning line of the binary read so far (the binary prints them
        before its output, so a finished run has them all)."""
        while self._log.notes:
            line = self._log.notes.popleft()
            _warn_user(_errors.python_message(_errors.NOTE.sub("", line), self._names))

    def finish(self, read_error: Optional[BaseException] = None) -> None:
        """Reap the process and raise what went wrong, the engine's error first."""
        if self._done:
            return
        self._done = True
        ok = False
        try:
            try:
                code = self._wait_exit(read_error)
            except BaseException:
                # Interrupted while waiting (Ctrl-C): the binary is stopped
                # here, since this run is done and no later call reaps it.
                _kill_quietly(self.proc)
                raise
            if code == 0:
                self.warn_notes()
            if self._feed_error is not None:
                # The edges themselves failed (a reader that raised): that is
                # the cause, whatever the binary made of the cut-off stream.
                raise _errors.InvalidInputError(
                    f"reading the edges failed: {self._feed_error}",
                    exit_code=code, stderr=self.stderr) from self._feed_error
            if code != 0:
                raise _errors.from_exit(code, self.stderr, self._names, self._log.crash) from read_error
            if read_error is not None:
                raise _errors.PathctlError(
                    f"pathctl exited 0 but its output is not a valid Arrow stream: {read_error}",
                    exit_code=0, stderr=self.stderr) from read_error
            ok = True
        finally:
            self._end_progress(ok)
            if not (ok and self.keep_tmp):
                self.cleanup()

    def _end_progress(self, ok: bool) -> None:
        """Close the progress bar of the run (complete where ok)."""
        progress, self._progress = getattr(self, "_progress", None), None
        self._log.progress = None
        if progress is not None:
            progress.close(ok)

    def _wait_exit(self, read_error: Optional[BaseException]) -> int:
        """The binary's exit status, once it has exited (or, for a result in
        a memfd, said it is done)."""
        if read_error is not None and self.proc.poll() is None and self.proc.stdout is not None:
            # The stream broke while the binary still runs: drain it so it
            # can exit, then judge by its status.
            try:
                while self.proc.stdout.read(1 << 16):
                    pass
            except (OSError, ValueError):
                pass
        if self.output == "memfd" and read_error is None:
            code = self._wait_settled()
        else:
            code = self.proc.wait()
            self._exited = True
        if self._exited:
            self._join()
        return code

    def _wait_settled(self) -> int:
        """The binary's exit status, or 0 as soon as it has said it is done
        (its result written and closed, every message before the line read);
        it is then reaped in the background while its exit tears the device
        down."""
        # The thread holds the process and the event, not self: self may
        # hold the result's mapping, which must go with the caller's last
        # view even while the binary is still exiting.
        proc, settled = self.proc, self._log.settled

        def reap() -> None:
            proc.wait()
            settled.set()

        threading.Thread(target=reap, daemon=True, name="pathctl-reap").start()
        settled.wait()
        if self.proc.poll() is not None:
            self._exited = True
            return self.proc.returncode
        return 0

    def abort(self) -> None:
        """Kill the process (if it still runs) and reap it."""
        if self._done:
            return
        self._done = True
        try:
            if self.proc.poll() is None:
                self.proc.kill()
            if self.proc.stdout is not None:
                try:
                    self.proc.stdout.close()
                except OSError:
                    pass
            self.proc.wait()
            self._join()
        finally:
            self._end_progress(False)
            self.cleanup()

    def _join(self) -> None:
        if self._feed_thread is not None:
            self._feed_thread.join()
        if self._peer is not None:
            self._peer.join()
        self._stderr_thread.join()
        if self.proc.stdout is not None:
            try:
                self.proc.stdout.close()
            except OSError:
                pass


def _warn_user(message: str) -> None:
    """warnings.warn, attributed to the first caller outside this package."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        level += 1
        frame = frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def _kill_quietly(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _is_broken_pipe(exc: BaseException) -> bool:
    if isinstance(exc, BrokenPipeError):
        return True
    text = str(exc).lower()
    return "broken pipe" in text or "errno 32" in text


class _ProcessBatches:
    """Iterator over a Run's output batches that reaps the process at the end,
    raises the engine's error when the stream breaks, and kills the process
    if it is dropped before the end."""

    def __init__(self, run: Run, reader: pa.RecordBatchStreamReader):
        self._run = run
        self._reader = reader
        self._finished = False

    def __iter__(self):
        return self

    def __next__(self) -> pa.RecordBatch:
        if self._finished:
            raise StopIteration
        try:
            return self._reader.read_next_batch()
        except StopIteration:
            self._finished = True
            self._run.finish()
            raise
        except BaseException as exc:
            self._finished = True
            if isinstance(exc, (pa.ArrowException, OSError)):
                self._run.finish(read_error=exc)
            else:
                self._run.abort()
            raise

    def close(self) -> None:
        if not self._finished:
            self._finished = True
            self._run.abort()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at GC time
            pass
