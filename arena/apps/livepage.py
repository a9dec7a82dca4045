"""The live page of ``arena run --serve``: ``arena serve RUN`` beside the run.

The server runs in a process of its own (``python -m arena serve RUN
--run-pending``), so its reading of the folder and its fits never hold up the
run's own process (the observer, the progress, the writing of records), and
the run is played exactly as without it. The page follows the folder from
the run's first record; once the run is over it stays until Ctrl-C, so the
finished run's matches can still be browsed.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["LivePage"]

STOP_S = 10.0  # seconds the server has to stop before it is killed


class LivePage:
    """The server process of a run's live page."""

    def __init__(self, proc: subprocess.Popen[bytes], link: str) -> None:
        self.proc = proc
        self.link = link

    @staticmethod
    def start(folder: Path, port: int) -> LivePage:
        """Start serving ``folder`` on 127.0.0.1:``port``; a port it cannot
        listen on, or the serve extra missing, is refused before the run starts."""
        from arena.errors import RunError

        try:
            from arena.serve.app import ServeOptions, can_listen
        except ModuleNotFoundError as exc:
            if exc.name in ("starlette", "uvicorn", "websockets"):
                raise RunError(f"--serve needs {exc.name}, which is not installed: pip install -e '.[serve]'") from None
            raise
        can_listen(ServeOptions(port=port))
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", str(folder), "--port", str(port), "--run-pending"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # its "open ..." line would name the tables; the run says where to look
        )
        return LivePage(proc, f"http://127.0.0.1:{port}/run")

    def stay(self, say: Callable[[str], None]) -> None:
        """After the run: keep the page until Ctrl-C (or until the server stops)."""
        if self.proc.poll() is not None:
            say(f"the live page stopped early (exit status {self.proc.returncode})")
            return
        say(f"the run is over; its page stays at {self.link} until Ctrl-C")
        try:
            self.proc.wait()
        except KeyboardInterrupt:
            pass

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
