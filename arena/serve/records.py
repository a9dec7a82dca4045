"""Games at the browser table as ordinary match records, in a run folder of their own.

Every finished match is appended through the project's store
(:class:`arena.running.store.RunStore`), as a run's workers append theirs, so
``arena ratings``, ``arena stats``, ``arena report`` and the notebook read the
folder as any run folder, and a person is rated beside the bots.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from arena.engine.records import MatchRecord
from arena.errors import RunError
from arena.running.store import RunStore, read_run_json

__all__ = ["FINGERPRINT", "TableRecords", "default_folder"]

FINGERPRINT = {"kind": "arena serve tables"}
"""The fingerprint of a table folder: one kind of folder, whatever is played in
it (each record carries its own rules and names), so every table of every
server started on the folder adds to it."""


def default_folder(root: Path = Path("results")) -> Path:
    """``results/table-YYYYMMDD-HHMMSS``: a folder of its own for this server's games."""
    return root / f"table-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


class TableRecords:
    """Appends each finished table's record to ``folder`` (one at a time:
    tables finish in their own threads)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()

    def check(self) -> None:
        """Refuse, before any game is played, a folder that holds something else."""
        if not self.folder.exists():
            return
        if not self.folder.is_dir():
            raise RunError(f"--out {self.folder}: not a folder")
        meta = read_run_json(self.folder)
        if meta is None:
            if any(self.folder.iterdir()):
                raise RunError(f"--out {self.folder} exists and is not a table folder: give a new folder")
            return
        if meta.get("fingerprint") != FINGERPRINT:
            raise RunError(
                f"--out {self.folder} holds a run, not games of arena serve: give a table folder "
                f"(results/table-...) or a new one"
            )

    def __call__(self, record: MatchRecord) -> str:
        with self._lock:
            store = RunStore(self.folder)
            try:
                store.open({"name": self.folder.name, "kind": "table"}, FINGERPRINT, force=False)
                try:
                    store.append(record)
                finally:
                    store.close("complete")
            except OSError as exc:
                raise RunError(f"{self.folder}: could not write the match record: {exc.strerror}") from None
        return str(self.folder)
