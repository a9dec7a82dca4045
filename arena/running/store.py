"""The run folder of RESULTS.md: written append-only, resumable after any stop.

``games.jsonl`` is the source of truth: one line per finished match, written
and flushed as each match ends, so even ``kill -9`` loses at most the line
being written (a torn last line is cut off on resume). ``matches.parquet`` is
derived from it whenever a run stops; ``run.json`` is replaced atomically.

``bots/<label>.stderr`` is each entrant's log: what its processes wrote to
stderr, appended match by match under a header line naming the match and the
worker (``### arena: m-000042 · worker 1234``). Records never hold stderr, so
they stay a pure function of the config and seed. Each file is bounded: past
``STDERR_MAX`` bytes it is moved to ``<label>.stderr.1`` (replacing the one
before) and a new file begins, so a bot's log costs at most twice that.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import re
import shutil
import zlib
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from arena import __version__
from arena.errors import RunError
from arena.engine.records import record_line

RUN_JSON = "run.json"
GAMES = "games.jsonl"
GAMES_GZ = "games.jsonl.gz"
MATCHES = "matches.parquet"
STDERR_MAX = 1 << 20  # bytes per bots/<label>.stderr before it is rotated to .stderr.1
STDERR_HEADER = b"### arena: "  # starts the header line of each match's stderr, and nothing else
_HEADER_LIKE = re.compile(rb"(?m)^(?=\\*### arena)")  # a bot's line that could pass for a header


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_run_json(folder: Path) -> dict[str, Any] | None:
    path = folder / RUN_JSON
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunError(f"{path}: unreadable ({exc}); use --force to start over or --out for a new folder") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: not a run.json object")
    return data


def _lines(path: Path) -> list[tuple[int, bytes, bool]]:
    """(line number, bytes, complete) for each non-empty line; a gzip stream
    cut short ends like an unterminated last line."""
    if path.suffix == ".gz":
        try:
            with gzip.open(path, "rb") as fh:
                data = fh.read()
        except (EOFError, zlib.error, gzip.BadGzipFile):
            d = zlib.decompressobj(zlib.MAX_WBITS | 16)  # keep what decompresses
            try:
                data = d.decompress(path.read_bytes())
            except zlib.error as exc:
                raise RunError(f"{path}: not a readable gzip file ({exc})") from None
    else:
        data = path.read_bytes()
    parts = data.split(b"\n")
    return [(i + 1, part, i < len(parts) - 1) for i, part in enumerate(parts) if part.strip()]


def numbered_records(folder: Path) -> tuple[Path | None, list[tuple[int, dict[str, Any]]], bool]:
    """The games file read, every complete record with its line number (file
    order), and whether a torn last line was skipped.

    A torn last line (a run killed mid-write) is skipped: that match is played
    again on resume. A bad line elsewhere is damage and raises
    :class:`RunError` naming the line. Every reader of a run folder uses this.
    """
    path = next((folder / n for n in (GAMES, GAMES_GZ) if (folder / n).exists()), None)
    if path is None:
        return None, [], False
    entries = _lines(path)
    records: list[tuple[int, dict[str, Any]]] = []
    for n, (lineno, raw, complete) in enumerate(entries):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if n == len(entries) - 1 and not complete:
                return path, records, True
            raise RunError(f"{path}, line {lineno}: not a JSON match record ({exc}); the file is damaged") from None
        if not isinstance(rec, dict) or not {"match", "bots", "placements"} <= rec.keys():
            raise RunError(f"{path}, line {lineno}: a match record needs the keys match, bots and placements")
        records.append((lineno, rec))
    return path, records, False


def read_records(folder: Path) -> tuple[list[dict[str, Any]], bool]:
    """Every complete record of a run folder (``games.jsonl``, else ``.gz``), in
    file order, and whether a torn last line was skipped (:func:`numbered_records`)."""
    _, records, truncated = numbered_records(folder)
    return [rec for _, rec in records], truncated


def iter_records(folder: Path) -> Iterator[dict[str, Any]]:
    """Every complete record of a run folder (see :func:`read_records`)."""
    yield from read_records(folder)[0]


class RunStore:
    """Appends match records to a run folder and keeps ``run.json`` current."""

    def __init__(self, folder: Path, stderr_max: int | None = None) -> None:
        self.folder = folder
        self._fh: Any = None
        self.meta: dict[str, Any] = {}
        self.stderr_max = max(4096, STDERR_MAX if stderr_max is None else stderr_max)
        self._err: dict[str, tuple[Any, int]] = {}  # label -> (open stderr file, its size)

    # -- opening -------------------------------------------------------------

    def open(self, meta: dict[str, Any], fingerprint: dict[str, Any], *, force: bool) -> set[str]:
        """Create or resume the folder; returns the ids of matches already recorded.

        An existing folder made with a different config or different bot files
        is refused unless ``force``, which moves it aside (nothing is deleted).
        """
        folder = self.folder
        old = read_run_json(folder) if folder.exists() else None
        if old is not None and old.get("fingerprint") != fingerprint:
            if not force:
                diff = sorted(k for k in set(fingerprint) | set(old.get("fingerprint") or {})
                              if (old.get("fingerprint") or {}).get(k) != fingerprint.get(k))
                raise RunError(
                    f"{folder} holds a run with a different config or different bot files "
                    f"(differs in: {', '.join(diff) or 'everything'}); use --out for a new folder, "
                    f"or --force to move the old run aside and start over")
            aside = folder.with_name(f"{folder.name}.old-{_dt.datetime.now():%Y%m%d-%H%M%S}")
            folder.rename(aside)
            old = None
        elif old is None and folder.exists() and any(folder.iterdir()):
            if not force:
                raise RunError(f"{folder} exists and is not a run folder; use --out for a new folder "
                               f"or --force to move it aside")
            folder.rename(folder.with_name(f"{folder.name}.old-{_dt.datetime.now():%Y%m%d-%H%M%S}"))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bots").mkdir(exist_ok=True)
        done: dict[str, dict[str, Any]] = {}
        if (folder / GAMES_GZ).exists() and not (folder / GAMES).exists():
            # A finished, compressed run being resumed: unpack to append again.
            with gzip.open(folder / GAMES_GZ, "rb") as src, open(folder / GAMES, "wb") as dst:
                shutil.copyfileobj(src, dst)
            (folder / GAMES_GZ).unlink()
        for rec in iter_records(folder):
            done.setdefault(rec["match"], rec)
        self._rewrite_clean(done.values())
        self.meta = dict(old or {})
        self.meta.update(meta)
        self.meta["fingerprint"] = fingerprint
        self.meta.setdefault("started", now())
        self.meta["resumed"] = now() if old is not None else None
        self.meta["status"] = "running"
        self.meta["ended"] = None
        self.meta["version"] = __version__
        write_json_atomic(folder / RUN_JSON, self.meta)
        self._fh = open(folder / GAMES, "ab")
        return set(done)

    def _rewrite_clean(self, records: Iterable[dict[str, Any]]) -> None:
        """Drop a torn last line or duplicate records left by a hard stop."""
        path = self.folder / GAMES
        if not path.exists():
            return
        recs = list(records)
        data = path.read_bytes()
        good = data.endswith(b"\n") or not data
        if good and data.count(b"\n") == len(recs):
            return
        tmp = path.with_name(GAMES + ".tmp")
        with open(tmp, "wb") as fh:
            for rec in recs:
                fh.write(record_line(rec))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    # -- writing -------------------------------------------------------------

    def append(self, record: dict[str, Any]) -> None:
        self.append_line(record_line(record))

    def append_line(self, line: bytes) -> None:
        """Append one encoded record (:func:`arena.engine.records.record_line`)."""
        # One write per line and a flush: a killed run keeps every line before.
        self._fh.write(line)
        self._fh.flush()

    def stderr_path(self, label: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
        return self.folder / "bots" / f"{safe}.stderr"

    def write_stderr(self, label: str, data: bytes, *, match: str, worker: str, note: str = "",
                     lost: int = 0) -> None:
        """Append what entrant ``label`` wrote to stderr during ``match`` (on
        ``worker``) under a header line; ``lost``: bytes of it not kept."""
        # A bot's line that starts like a header is escaped with a backslash:
        # only the arena writes lines that start with STDERR_HEADER.
        body = _HEADER_LIKE.sub(rb"\\", data)
        if body and not body.endswith(b"\n"):
            body += b"\n"
        cap = self.stderr_max - 256  # room for the header
        if len(body) > cap:  # one match's tail is normally far smaller than the file
            lost += len(body) - cap
            body = body[len(body) - cap:]
        words = [match, f"worker {worker}"] + ([note] if note else []) \
            + ([f"{lost} earlier bytes not kept (sandbox stderr_tail)"] if lost else [])
        header = STDERR_HEADER + " · ".join(words).encode("utf-8", "replace")[:240] + b"\n"
        entry = header + body
        path = self.stderr_path(label)
        fh, size = self._err.get(label, (None, 0))
        if fh is None:
            fh = open(path, "ab")
            size = os.fstat(fh.fileno()).st_size
        if size and size + len(entry) > self.stderr_max:
            fh.close()
            os.replace(path, path.with_name(path.name + ".1"))
            fh, size = open(path, "ab"), 0
        fh.write(entry)
        fh.flush()
        self._err[label] = (fh, size + len(entry))

    def close(self, status: str, *, compress: bool = False) -> None:
        """Record the final status, write matches.parquet, and compress if asked."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
        for fh, _ in self._err.values():
            fh.close()
        self._err.clear()
        write_matches_parquet(self.folder)
        if compress and status == "complete":
            with open(self.folder / GAMES, "rb") as src, gzip.open(self.folder / GAMES_GZ, "wb") as dst:
                shutil.copyfileobj(src, dst)
            (self.folder / GAMES).unlink()
        self.meta["status"] = status
        self.meta["ended"] = now()
        write_json_atomic(self.folder / RUN_JSON, self.meta)


def seat_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The matches.parquet rows of one record (one per seat)."""
    n = len(record["bots"])
    counts = [int(record["rules"]["dice"])] * n
    out_round: list[int | None] = [None] * n
    for entry in record["rounds"]:
        if "fault" in entry:
            seat = entry["fault"]["seat"]
            counts[seat] = 0
        else:
            seat, delta = entry["change"]["seat"], entry["change"]["delta"]
            counts[seat] += delta
        if counts[seat] == 0 and out_round[seat] is None:
            out_round[seat] = entry["round"]
    fault_kind: list[str | None] = [None] * n
    for f in record.get("faults", []):
        fault_kind[f["seat"]] = f["kind"]
    think = record.get("think") or [None] * n
    return [{"match": record["match"], "variant": record["variant"], "seat": s, "bot": record["bots"][s],
             "place": record["placements"][s], "players": n, "rounds": record["rounds_played"],
             "dice_left": counts[s], "out_round": out_round[s], "fault": fault_kind[s],
             "seconds": think[s]} for s in range(n)]


# matches.parquet's columns and their types (RESULTS: one row per match and seat).
PARQUET_COLUMNS = (("match", "string"), ("variant", "string"), ("seat", "int16"), ("bot", "string"),
                   ("place", "int16"), ("players", "int16"), ("rounds", "int32"), ("dice_left", "int16"),
                   ("out_round", "int32"), ("fault", "string"), ("seconds", "float64"))


def write_matches_parquet(folder: Path) -> None:
    """matches.parquet from the records, sorted by match and seat, written with
    pyarrow directly (the run layer has no need of pandas; readers get the
    same columns, ``out_round`` and ``fault`` null where they do not apply)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = sorted((row for rec in iter_records(folder) for row in seat_rows(rec)),
                  key=lambda r: (r["match"], r["seat"]))
    table = pa.table({name: pa.array([r[name] for r in rows], type=pa.type_for_alias(kind))
                      for name, kind in PARQUET_COLUMNS})
    tmp = folder / (MATCHES + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, folder / MATCHES)
