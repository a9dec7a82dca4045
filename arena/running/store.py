"""The run folder of RESULTS.md: its one owner. Written append-only, resumable after any stop.

Every file of a run folder is named here and nowhere else (:class:`RunFolder`):
``run.json``, ``games.jsonl`` (or ``games.jsonl.gz``), ``matches.parquet``,
``ratings.csv``, ``variant_stats.csv``, ``report.html`` and ``bots/<label>.stderr``
with its rotation ``bots/<label>.stderr.1``. Its records are read here and
nowhere else (:func:`read_records`); the files derived from them are written
through :func:`write_text` (the analysis computes their text).

``games.jsonl`` is the source of truth: one line per finished match, written
and flushed as each match ends, so even ``kill -9`` loses at most the line
being written. Reading it (:func:`read_records`), for a resume and for the
analysis alike:

- a torn last line (a run killed mid-write) is skipped, and said so; on
  resume that match is played again;
- a bad line anywhere else is damage and raises :class:`RunError` naming it;
- a match recorded again on a later line is left out, and said so: each match
  counts once, as its first record (the one a resumed run went on from). Such
  a repeat is identical but for its timing fields (a match is a pure function
  of the config and seed) unless something outside the run wrote the folder;
  a repeat that differs is an error naming both lines, since no reader can
  know which of the two to believe.

``matches.parquet`` is derived from the records whenever a run stops;
``run.json`` is replaced atomically.

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from arena import __version__
from arena.engine.records import MatchRecord, RecordError, canonical, record_line
from arena.errors import RunError
from arena.running.tables import PARQUET_TYPES, parquet_rows

RUN_JSON = "run.json"
GAMES = "games.jsonl"
GAMES_GZ = "games.jsonl.gz"
MATCHES = "matches.parquet"
RATINGS = "ratings.csv"
VARIANT_STATS = "variant_stats.csv"
REPORT = "report.html"
BOTS = "bots"
STDERR_SUFFIX = ".stderr"
ROTATED_SUFFIX = ".1"  # bots/<label>.stderr.1: the older part of a log that outgrew STDERR_MAX
STDERR_MAX = 1 << 20  # bytes per bots/<label>.stderr before it is rotated
STDERR_HEADER = b"### arena: "  # starts the header line of each match's stderr, and nothing else
_HEADER_LIKE = re.compile(rb"(?m)^(?=\\*### arena)")  # a bot's line that could pass for a header


def stderr_name(label: str) -> str:
    """The file name of entrant ``label``'s stderr log: its label with anything
    but letters, digits and ``-_.#`` made ``_`` (a label is the config's text)."""
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label) + STDERR_SUFFIX


class _File:
    """A file of every run folder, by name: ``RunFolder(p).games`` is ``p / GAMES``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, folder: RunFolder, owner: type | None = None) -> Path:
        return folder.path / self.name


class RunFolder:
    """The paths of a run folder (RESULTS.md's files), the one place they are spelled."""

    __slots__ = ("path",)

    run_json = _File(RUN_JSON)
    games = _File(GAMES)
    games_gz = _File(GAMES_GZ)
    matches = _File(MATCHES)
    ratings = _File(RATINGS)
    variant_stats = _File(VARIANT_STATS)
    report = _File(REPORT)
    bots = _File(BOTS)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    def stderr(self, label: str) -> Path:
        """``bots/<label>.stderr``: entrant ``label``'s log."""
        return self.bots / stderr_name(label)

    def stderr_rotated(self, label: str) -> Path:
        """``bots/<label>.stderr.1``: the older part of that log, once it outgrew the bound."""
        return self.bots / (stderr_name(label) + ROTATED_SUFFIX)

    def games_file(self) -> Path | None:
        """The games file to read: ``games.jsonl``, else ``games.jsonl.gz``
        (a plain file beside a gzip is a resumed run, or a compression that
        did not finish: the plain one is complete)."""
        return next((p for p in (self.games, self.games_gz) if p.exists()), None)

    def is_run(self) -> bool:
        """Whether the folder holds a run (a run.json or a games file)."""
        return self.run_json.exists() or self.games_file() is not None


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a reader sees the old file or
    the new one, never half of one): how every derived file is written."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise RunError(f"{path}: could not write it: {exc.strerror}") from None


def write_json_atomic(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def read_run_json(folder: Path) -> dict[str, Any] | None:
    """The folder's run.json, or ``None`` if it has none."""
    path = RunFolder(folder).run_json
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: not a run.json object")
    return data


# ---------------------------------------------------------------------------
# Reading the records
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Repeat:
    """A line recording a match already recorded on an earlier line: left out."""

    match: str
    line: int
    first_line: int


@dataclass(frozen=True, slots=True)
class RecordsRead:
    """What :func:`read_records` found: ``records`` in file order, each match
    once, with the ``lines`` they are on; ``truncated`` if a torn last line
    was skipped; ``repeats``, the later records of a match left out."""

    path: Path | None  # the games file read; None: the folder has none yet
    records: tuple[MatchRecord, ...]
    lines: tuple[int, ...]
    truncated: bool
    repeats: tuple[Repeat, ...]

    def note(self) -> str | None:
        """One line for the user about what was left out, or ``None``."""
        if not self.repeats:
            return None
        shown = ", ".join(f"line {r.line} ({r.match}, first on line {r.first_line})" for r in self.repeats[:5])
        more = f" and {len(self.repeats) - 5} more" if len(self.repeats) > 5 else ""
        return (f"note: {self.path}: {len(self.repeats)} record(s) of a match already recorded were left out, "
                f"each match counts once: {shown}{more}")


def _lines(path: Path) -> tuple[list[tuple[int, bytes, bool]], bytes]:
    """(line number, bytes, complete) for each non-empty line, and the file's
    bytes; a gzip stream cut short ends like an unterminated last line."""
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
    return [(i + 1, part, i < len(parts) - 1) for i, part in enumerate(parts) if part.strip()], data


def _scan(folder: Path) -> tuple[RecordsRead, list[bytes], bytes]:
    """:func:`read_records`, plus the kept lines as they are on disk and the file's bytes."""
    path = RunFolder(folder).games_file()
    if path is None:
        return RecordsRead(None, (), (), False, ()), [], b""
    entries, data = _lines(path)
    records: list[MatchRecord] = []
    lines: list[int] = []
    raws: list[bytes] = []
    repeats: list[Repeat] = []
    seen: dict[str, int] = {}  # match id -> index in records
    truncated = False
    for n, (lineno, raw, complete) in enumerate(entries):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if n == len(entries) - 1 and not complete:
                truncated = True
                break
            raise RunError(f"{path}, line {lineno}: not a JSON match record ({exc}); the file is damaged") from None
        try:
            rec = MatchRecord.from_dict(obj)
        except RecordError as exc:
            raise RunError(f"{path}, line {lineno}: {exc}") from None
        at = seen.get(rec.match)
        if at is not None:
            if canonical(records[at]) != canonical(rec):
                raise RunError(
                    f"{path}, line {lineno}: match {rec.match!r} is recorded on line {lines[at]} too, and the "
                    f"two records differ in more than their timing; remove the line that does not belong")
            repeats.append(Repeat(rec.match, lineno, lines[at]))
            continue
        seen[rec.match] = len(records)
        records.append(rec)
        lines.append(lineno)
        raws.append(raw)
    return RecordsRead(path, tuple(records), tuple(lines), truncated, tuple(repeats)), raws, data


def read_records(folder: Path) -> RecordsRead:
    """Every match record of a run folder, each match once, in file order: the
    one reader of records (the module docstring says what it skips and why)."""
    return _scan(folder)[0]


def iter_records(folder: Path) -> Iterator[MatchRecord]:
    """The records :func:`read_records` returns."""
    yield from read_records(folder).records


class RunStore:
    """Appends match records to a run folder and keeps ``run.json`` current."""

    def __init__(self, folder: Path, stderr_max: int | None = None) -> None:
        self.folder = folder
        self.paths = RunFolder(folder)
        self._fh: IO[bytes] | None = None
        self.meta: dict[str, Any] = {}
        self.stderr_max = max(4096, STDERR_MAX if stderr_max is None else stderr_max)
        self._err: dict[str, tuple[IO[bytes], int]] = {}  # label -> (open stderr file, its size)
        self.read: RecordsRead | None = None  # what open() found already recorded

    # -- opening -------------------------------------------------------------

    def open(self, meta: dict[str, Any], fingerprint: dict[str, Any], *, force: bool) -> set[str]:
        """Create or resume the folder; returns the ids of matches already recorded.

        An existing folder made with a different config or different bot files
        is refused unless ``force``, which moves it aside (nothing is deleted).
        A torn last line and repeated records (:func:`read_records`) are
        dropped from ``games.jsonl`` before appending resumes.
        """
        folder, paths = self.folder, self.paths
        try:
            old = read_run_json(folder) if folder.exists() else None
        except RunError as exc:
            raise RunError(f"{exc}; use --force to start over or --out for a new folder") from None
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
        paths.bots.mkdir(exist_ok=True)
        if paths.games_gz.exists() and not paths.games.exists():
            # A finished, compressed run being resumed: unpack to append again.
            with gzip.open(paths.games_gz, "rb") as src, open(paths.games, "wb") as dst:
                shutil.copyfileobj(src, dst)
            paths.games_gz.unlink()
        read, raws, data = _scan(folder)
        self._rewrite_clean(read, raws, data)
        self.read = read
        self.meta = dict(old or {})
        self.meta.update(meta)
        self.meta["fingerprint"] = fingerprint
        self.meta.setdefault("started", now())
        self.meta["resumed"] = now() if old is not None else None
        self.meta["status"] = "running"
        self.meta["ended"] = None
        self.meta["version"] = __version__
        write_json_atomic(paths.run_json, self.meta)
        self._fh = open(paths.games, "ab")
        return {rec.match for rec in read.records}

    def _rewrite_clean(self, read: RecordsRead, raws: list[bytes], data: bytes) -> None:
        """Keep only the lines :func:`read_records` kept (no torn last line, no
        repeats), each as it was written, so the next line appends cleanly."""
        path = self.paths.games
        if read.path != path:
            return
        if (data.endswith(b"\n") or not data) and data.count(b"\n") == len(raws):
            return
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            for raw in raws:
                fh.write(raw + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    # -- writing -------------------------------------------------------------

    def append(self, record: MatchRecord) -> None:
        self.append_line(record_line(record))

    def append_line(self, line: bytes) -> None:
        """Append one encoded record (:func:`arena.engine.records.record_line`)."""
        if self._fh is None:
            raise RunError(f"{self.folder}: the run store is not open")
        # One write per line and a flush: a killed run keeps every line before.
        self._fh.write(line)
        self._fh.flush()

    def stderr_path(self, label: str) -> Path:
        return self.paths.stderr(label)

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
        path = self.paths.stderr(label)
        known = self._err.get(label)
        fh: IO[bytes]
        if known is None:
            fh = open(path, "ab")
            size = os.fstat(fh.fileno()).st_size
        else:
            fh, size = known
        if size and size + len(entry) > self.stderr_max:
            fh.close()
            os.replace(path, self.paths.stderr_rotated(label))
            fh, size = open(path, "ab"), 0
        fh.write(entry)
        fh.flush()
        self._err[label] = (fh, size + len(entry))

    def close(self, status: str, *, compress: bool = False) -> None:
        """Record the final status, write matches.parquet, and compress if asked."""
        paths = self.paths
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
            with open(paths.games, "rb") as src, gzip.open(paths.games_gz, "wb") as dst:
                shutil.copyfileobj(src, dst)
            paths.games.unlink()
        self.meta["status"] = status
        self.meta["ended"] = now()
        write_json_atomic(paths.run_json, self.meta)


def write_matches_parquet(folder: Path) -> None:
    """matches.parquet from the records (:func:`arena.running.tables.parquet_rows`),
    written with pyarrow directly (the run layer has no need of pandas; readers
    get the same columns, ``out_round`` and ``fault`` null where they do not apply)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = parquet_rows(read_records(folder).records)
    table = pa.table({name: pa.array([r[i] for r in rows], type=pa.type_for_alias(kind))
                      for i, (name, kind) in enumerate(PARQUET_TYPES)})
    path = RunFolder(folder).matches
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
