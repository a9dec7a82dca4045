"""The Elo table ``arena run`` ends with, made ahead in a forked helper process.

Why: the table needs pandas (0.15 s to import on a fast machine, 0.4 s on a
slow one) and then the rating itself (0.13 s for 2,000 matches). Both sat on
the run's critical path: the import while the bots were checked (the check
waits for one bot's interpreter, the import for the parent's only thread, and
the import took longer), the rating after the analysis tables were written.
The helper, forked before the bot check, imports the analysis modules on the
core the check leaves free, sleeps on a pipe (no CPU) while the matches are
played, and rates the run as soon as ``matches.parquet`` holds it
(:func:`arena.running.runner.run`'s ``seats_written``), while the parent
writes the analysis tables. The parent prints what the helper sends: the very
text, notes and progress the same call would give in process.

Anything unusual (no ``fork`` here, another thread in the process, which a
fork would copy mid-step, the helper dying, a reply cut short) and the parent
computes the table itself, as before: the helper is a shortcut, never needed.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

# As arena.analysis.commands.Note and arena.analysis.stats.Progress, not imported
# from there: those modules import pandas, which this process must not (the helper's job).
Note = Callable[[str], None]
Progress = Callable[[str, int, int], None]

_LENGTH = struct.Struct("<I")  # each message: its pickled length, then the pickle


class EloAhead:
    """A forked helper that makes ``end_of_run_text(folder)`` once told to (:meth:`go`)."""

    def __init__(self, pid: int, go: int, replies: int) -> None:
        self.pid: int | None = pid
        self._go: int | None = go
        self._replies: int | None = replies

    @classmethod
    def start(cls, folder: Path) -> EloAhead | None:
        """Fork the helper; None where it cannot be done safely (then compute in process)."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        go_r, go_w = os.pipe()
        replies_r, replies_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the helper; never returns
            os.close(go_w)
            os.close(replies_r)
            _helper(folder, go_r, replies_w)
        os.close(go_r)
        os.close(replies_w)
        return cls(pid, go_w, replies_r)

    def go(self) -> None:
        """The run folder's matches.parquet holds the run as it stopped: rate it now.
        Only the first call counts."""
        if self._go is None:
            return
        try:
            os.write(self._go, b"g")
        except OSError:  # the helper is gone: table() says so
            pass
        os.close(self._go)
        self._go = None

    def table(self, note: Note | None = None, progress: Progress | None = None) -> str | None:
        """The helper's table (it is told to :meth:`go` first, if it was not yet):
        progress passed on as it arrives, notes once the table has come (so that
        a fallback in process does not repeat them); None if the helper failed."""
        self.go()
        notes: list[str] = []
        text: str | None = None
        try:
            with os.fdopen(self._pop_replies(), "rb") as replies:
                for kind, *args in _messages(replies):
                    if kind == "progress" and progress is not None:
                        progress(*args)
                    elif kind == "note":
                        notes.append(args[0])
                    elif kind == "text":
                        text = args[0]
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            text = None
        finally:
            self.close()
        if text is not None and note is not None:
            for line in notes:
                note(line)
        return text

    def _pop_replies(self) -> int:
        fd, self._replies = self._replies, None
        if fd is None:
            raise ValueError("the helper's replies were already read")
        return fd

    def close(self) -> None:
        """Stop the helper if it still runs (a run that failed, a table not wanted) and reap it."""
        for fd in (self._go, self._replies):
            if fd is not None:
                os.close(fd)
        self._go = self._replies = None
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)

    def __enter__(self) -> EloAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _messages(stream: BinaryIO) -> Any:
    while True:
        head = stream.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return
        (size,) = _LENGTH.unpack(head)
        body = stream.read(size)
        if len(body) < size:
            raise EOFError("the helper's reply was cut short")
        yield pickle.loads(body)  # noqa: S301 - written by this program's own fork


def _helper(folder: Path, go: int, replies: int) -> None:
    """The forked side. Its output goes nowhere (the parent's terminal is the
    parent's); it ends with ``os._exit``, so nothing of the parent's (atexit
    handlers, buffered output, a test runner's teardown) runs twice."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which then still wants the table
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from arena.sandbox import die_with_parent

        die_with_parent(signal.SIGKILL)  # a killed arena run leaves no helper behind
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        import pyarrow.dataset  # noqa: F401 - what reading matches.parquet imports at first use (23 ms)
        import pyarrow.parquet  # noqa: F401
        from threadpoolctl import threadpool_limits

        from arena.analysis.commands import end_of_run_text

        # One BLAS thread: the bootstrap's products are small, and the parent
        # writes the analysis tables on the other core meanwhile, where a second
        # BLAS thread would spin waiting for it (the table took 0.20-0.23 s so,
        # against 0.17 s on one thread).
        threadpool_limits(1, user_api="blas")
        if os.read(go, 1) != b"g":  # the parent closed the pipe: no table wanted
            return
        with os.fdopen(replies, "wb") as out:

            def send(*message: Any) -> None:
                data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
                out.write(_LENGTH.pack(len(data)) + data)
                out.flush()  # progress as it is made

            text = end_of_run_text(
                folder,
                note=lambda line: send("note", line),
                progress=lambda what, done, total: send("progress", what, done, total),
            )
            send("text", text)
    except BaseException:  # noqa: BLE001 - whatever it was, the parent computes the table itself
        pass
    finally:
        os._exit(0)
