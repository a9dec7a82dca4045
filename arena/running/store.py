"""The run folder (docs/records.md): its one owner. Written append-only, resumable after any stop.

Every file of a run folder is named here and nowhere else (:class:`RunFolder`):
``run.json``, ``games.jsonl`` (or ``games.jsonl.gz``), ``matches.parquet``,
``tables/<name>.parquet`` (:mod:`arena.running.tablefiles`), ``ratings.csv``, ``variant_stats.csv``, ``report.html`` and ``bots/<label>.stderr``
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

``matches.parquet`` and ``tables/`` are derived from the records whenever a
run stops; ``run.json`` is replaced atomically.

``bots/<label>.stderr`` is each entrant's log: what its processes wrote to
stderr, appended match by match under a header line naming the match and the
worker (``### arena: m-000042 · worker 1234``). Records never hold stderr, so
they stay a pure function of the config and seed. Each file is bounded: past
``STDERR_MAX`` bytes it is moved to ``<label>.stderr.1`` (replacing the one
before) and a new file begins, so a bot's log costs at most twice that.
"""

from __future__ import annotations

import datetime as _dt
import errno
import gzip
import json
import os
import re
import shutil
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from arena import __version__
from arena.engine.records import MatchRecord, RecordError, canonical, record_line
from arena.errors import RunError
from arena.running import columns
from arena.running.tablefiles import NAMES, RecordTables, arrow_tables, check, merged, record_tables
from arena.running.tables import PARQUET_TYPES, Row, parquet_rows

RUN_JSON = "run.json"
GAMES = "games.jsonl"
GAMES_GZ = "games.jsonl.gz"
MATCHES = "matches.parquet"
RATINGS = "ratings.csv"
VARIANT_STATS = "variant_stats.csv"
REPORT = "report.html"
TABLES = "tables"
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
    """The paths of a run folder (docs/records.md's files), the one place they are spelled."""

    __slots__ = ("path",)

    run_json = _File(RUN_JSON)
    games = _File(GAMES)
    games_gz = _File(GAMES_GZ)
    matches = _File(MATCHES)
    ratings = _File(RATINGS)
    variant_stats = _File(VARIANT_STATS)
    report = _File(REPORT)
    tables = _File(TABLES)
    bots = _File(BOTS)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    def table(self, name: str) -> Path:
        """``tables/<name>.parquet``: one of the analysis tables (:mod:`arena.running.tablefiles`)."""
        return self.tables / f"{name}.parquet"

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
        try:  # a half-written temporary file on a full disk holds the space the next write needs
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise RunError(f"{path}: could not write it: {exc.strerror}") from None


def _recovered(read: RecordsRead, old: dict[str, Any] | None) -> str | None:
    """What resuming a run that stopped without closing (a full disk, a kill,
    a power cut) found, in one line; None if it closed as usual."""
    unclosed = old is not None and old.get("status") == "running"
    if not unclosed and not read.truncated:
        return None
    what = f"recovered: {len(read.records)} matches recorded"
    if unclosed:
        what += " by a run that stopped without closing (run.json said running)"
    if read.truncated:
        what += f"; the torn last line of {read.path} (a match cut short) was dropped and is played again"
    return what + "; nothing else was lost"


def cannot_write(folder: Path, exc: OSError, existed: bool) -> RunError:
    """One line for a run folder the disk refuses (read-only, full, no
    permission): the path, what is kept, what to do."""
    where = str(exc.filename or folder)
    why = exc.strerror if where == str(folder) else f"{where}: {exc.strerror}"
    if not existed:
        return RunError(
            f"{folder}: cannot create the run folder ({why}); nothing was written; "
            f"choose a writable place with --out DIR"
        )
    return RunError(
        f"{folder}: cannot write in the run folder ({why}); what it holds is kept as it is; "
        f"make it writable (free some space), or copy it elsewhere and run with --out COPY"
    )


def write_json_atomic(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def move_aside(folder: Path) -> Path:
    """Rename ``folder`` to ``<folder>.old-<time>`` (nothing is deleted); returns the new path."""
    stamp = f"{_dt.datetime.now():%Y%m%d-%H%M%S}"
    aside = folder.with_name(f"{folder.name}.old-{stamp}")
    k = 1
    while aside.exists():
        k += 1
        aside = folder.with_name(f"{folder.name}.old-{stamp}-{k}")
    folder.rename(aside)
    return aside


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
        return (
            f"note: {self.path}: {len(self.repeats)} record(s) of a match already recorded were left out, "
            f"each match counts once: {shown}{more}"
        )


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
                    f"two records differ in more than their timing; remove the line that does not belong"
                )
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


def read_matches(folder: Path, ids: Iterable[str]) -> dict[str, MatchRecord]:
    """The records of the matches ``ids`` (those recorded), by id, as
    :func:`read_records` has them (each match's first record), parsing only
    the lines that mention an id: a report's few notable matches of a league."""
    wanted = set(ids)
    path = RunFolder(folder).games_file()
    if path is None or not wanted:
        return {}
    needles = [b'"' + mid.encode("utf-8") + b'"' for mid in wanted]
    found: dict[str, MatchRecord] = {}
    entries, _ = _lines(path)
    for _lineno, raw, _complete in entries:
        if not any(n in raw for n in needles):
            continue
        try:
            rec = MatchRecord.from_json(raw)
        except RecordError:
            continue  # a torn last line (read_records says so) or a line a full read refuses
        if rec.match in wanted and rec.match not in found:
            found[rec.match] = rec
            if len(found) == len(wanted):
                break
    return found


def iter_records(folder: Path) -> Iterator[MatchRecord]:
    """The records :func:`read_records` returns."""
    yield from read_records(folder).records


_Appended = tuple[bytes, "list[Row] | None", "RecordTables | None"]  # a line, its rows, its tables


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
        # Each line appended, with its rows of matches.parquet and its tables
        # (tablefiles), either None where the caller had none: close() then
        # reads the folder back for that file.
        self._appended: list[_Appended] = []
        self._appending: _Appended | None = None  # the append under way (see append_line)
        self._old_tables: dict[str, Any] | None = None  # the tables of what open() found, read back if fresh
        self._size = 0  # bytes of whole lines in the games file
        # The write the disk refused (full, read-only, no permission), if one was:
        # close() then keeps what is there and writes only the status.
        self.refused: str | None = None
        self.status_written = True  # whether close() could record the final status in run.json
        self.recovered: str | None = None  # what open() found of a run that did not close, in words

    # -- opening -------------------------------------------------------------

    def open(
        self,
        meta: dict[str, Any],
        fingerprint: dict[str, Any],
        *,
        force: bool,
        pool_planned: bool = False,
        changed_bots: Mapping[str, str] | None = None,
    ) -> set[str]:
        """Create or resume the folder; returns the ids of matches already recorded.

        An existing folder made with a different config or different bot files
        is refused unless ``force``, which moves it aside (nothing is deleted).
        A torn last line and repeated records (:func:`read_records`) are
        dropped from ``games.jsonl`` before appending resumes. With
        ``pool_planned`` the bots are not compared: the caller matched them
        against the folder's history (a league that grows, :mod:`arena.running.league`);
        ``changed_bots`` names the files of each changed bot, for the refusal.
        """
        folder = self.folder
        try:
            old = read_run_json(folder) if folder.exists() else None
        except RunError as exc:
            raise RunError(f"{exc}; use --force to start over or --out for a new folder") from None
        ignored = {"bots"} if pool_planned else set()
        old_fp = (
            {k: v for k, v in (old or {}).get("fingerprint", {}).items() if k not in ignored}
            if old is not None and isinstance(old.get("fingerprint"), dict)
            else None
        )
        if old is not None and old_fp != {k: v for k, v in fingerprint.items() if k not in ignored}:
            if not force:
                diff = sorted(
                    k
                    for k in set(fingerprint) | set(old.get("fingerprint") or {})
                    if (old.get("fingerprint") or {}).get(k) != fingerprint.get(k)
                )
                if "bots" in diff and changed_bots:
                    diff[diff.index("bots")] = "bots: " + "; ".join(
                        f"{label}: {files}" for label, files in changed_bots.items()
                    )
                raise RunError(
                    f"{folder} holds a run with a different config or different bot files "
                    f"(differs in: {', '.join(diff) or 'everything'}); use --out for a new folder, "
                    f"or --force to move the old run aside and start over"
                )
            move_aside(folder)
            old = None
        elif old is None and folder.exists() and any(folder.iterdir()):
            if not force:
                raise RunError(
                    f"{folder} exists and is not a run folder; use --out for a new folder or --force to move it aside"
                )
            move_aside(folder)
        existed = folder.exists()
        try:
            self._open_files(meta, fingerprint, old)
        except OSError as exc:
            raise cannot_write(folder, exc, existed) from None
        assert self.read is not None
        return {rec.match for rec in self.read.records}

    def _open_files(self, meta: dict[str, Any], fingerprint: dict[str, Any], old: dict[str, Any] | None) -> None:
        """The folder made or resumed for appending (open's second half)."""
        folder, paths = self.folder, self.paths
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
        self.recovered = _recovered(read, old)
        # The tables the last stop wrote, if they are those of the records just
        # read: close() then adds the new matches' to them rather than deriving
        # every earlier record's again (a league that grows by one bot resumes
        # thousands of records).
        self._old_tables = read_tables(folder) if read.records else None
        self.meta = dict(old or {})
        self.meta.update(meta)
        self.meta["fingerprint"] = fingerprint
        self.meta.setdefault("started", now())
        self.meta["resumed"] = now() if old is not None else None
        self.meta["status"] = "running"
        self.meta["ended"] = None
        self.meta["version"] = __version__
        try:
            write_json_atomic(paths.run_json, self.meta)
        except RunError as exc:  # refused (read-only, full): the same line as any refused write here
            raise RunError(
                f"{exc}; what the run folder holds is kept as it is; make it writable (free some "
                f"space), or copy it elsewhere and run with --out COPY"
            ) from None
        # Unbuffered: each line is one write (as a flushed buffer's was), and a
        # write the disk refuses leaves nothing pending to fail again at close.
        self._fh = open(paths.games, "ab", buffering=0)
        self._size = os.fstat(self._fh.fileno()).st_size

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
        self.append_line(record_line(record), parquet_rows([record]), record_tables(record))

    def append_line(self, line: bytes, rows: list[Row] | None = None, tables: RecordTables | None = None) -> None:
        """Append one encoded record (:func:`arena.engine.records.record_line`);
        ``rows``: its rows of matches.parquet (:func:`arena.running.tables.parquet_rows`)
        and ``tables`` its analysis tables (:func:`arena.running.tablefiles.record_tables`),
        where the caller has them (a worker makes them from the record in its
        memory), so that :meth:`close` need not read the folder back."""
        if self._fh is None:
            raise RunError(f"{self.folder}: the run store is not open")
        # Ctrl-C raises KeyboardInterrupt between any two steps here, and the
        # tables close() writes must hold exactly the lines in the file: the
        # append is announced first and the announcement cleared last, and the
        # bookkeeping is one list append (done or not), so close() can settle
        # an append that was cut short (_settle).
        self._appending = entry = (line, rows, tables)
        # One write per line: a killed run keeps every line before.
        try:
            view = memoryview(line)
            while view:
                view = view[self._fh.write(view) or 0 :]
        except OSError as exc:
            self._appending = None
            self._refuse(self.paths.games, exc)
            try:  # the torn line out again: the space it took, and a clean end for the resume
                os.ftruncate(self._fh.fileno(), self._size)
            except OSError:
                pass  # the resume drops a torn last line anyway
            raise RunError(
                f"{self.paths.games}: could not append a match record: {exc.strerror}; {self._kept()}"
            ) from None
        self._size += len(line)
        self._appended.append(entry)
        self._appending = None

    def _refuse(self, path: Path, exc: OSError) -> None:
        if self.refused is None:
            self.refused = f"{path}: {exc.strerror}"

    def _kept(self) -> str:
        """What a run stopped by a refused write keeps, and what to do (one clause)."""
        n = len(self.read.records if self.read is not None else ()) + len(self._appended)
        return (
            f"the {n} matches recorded before are kept; make room on that disk (or copy the folder "
            f"elsewhere and use --out COPY) and run the same command to resume"
        )

    def _settle(self) -> None:
        """An append cut short (Ctrl-C) after its line reached the file but
        before it was counted: count it. One cut before its line was whole in
        the file is not a record (a torn line, dropped on resume), and is not
        counted. Called with the file flushed and closed."""
        entry, self._appending = self._appending, None
        if entry is None or (self._appended and self._appended[-1] is entry):
            return
        line = entry[0]
        with open(self.paths.games, "rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, end - len(line)))
            if fh.read() == line:
                self._appended.append(entry)

    def stderr_path(self, label: str) -> Path:
        return self.paths.stderr(label)

    def write_stderr(self, label: str, data: bytes, *, match: str, worker: str, note: str = "", lost: int = 0) -> None:
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
            body = body[len(body) - cap :]
        words = (
            [match, f"worker {worker}"]
            + ([note] if note else [])
            + ([f"{lost} earlier bytes not kept (sandbox stderr_tail)"] if lost else [])
        )
        header = STDERR_HEADER + " · ".join(words).encode("utf-8", "replace")[:240] + b"\n"
        entry = header + body
        path = self.paths.stderr(label)
        known = self._err.get(label)
        fh: IO[bytes]
        try:
            if known is None:
                fh = open(path, "ab", buffering=0)
                size = os.fstat(fh.fileno()).st_size
            else:
                fh, size = known
            if size and size + len(entry) > self.stderr_max:
                fh.close()
                os.replace(path, self.paths.stderr_rotated(label))
                fh, size = open(path, "ab", buffering=0), 0
            fh.write(entry)
        except OSError as exc:
            self._refuse(path, exc)
            raise RunError(
                f"{path}: could not write what bot {label} wrote to stderr: {exc.strerror}; {self._kept()}"
            ) from None
        self._err[label] = (fh, size + len(entry))

    def close(self, status: str, *, compress: bool = False, seats_written: Callable[[], object] | None = None) -> None:
        """Record the final status, write matches.parquet and the analysis
        tables (from what the workers sent, in memory, when they sent it), and
        compress if asked. ``seats_written`` is called as soon as what rating
        reads (matches.parquet, :func:`arena.analysis.results.load` with
        ``seats_only``) holds the run as it stopped: before the analysis tables
        are written, or, when compressing, once run.json says the run is over
        (a compressed games file is newer than the parquet, and only that says
        the parquet is still the whole run)."""
        paths = self.paths
        if self.refused is not None:
            self._close_refused()
            return
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
            self._settle()
        for fh, _ in self._err.values():
            fh.close()
        self._err.clear()
        added = self._appended  # one line without rows (or tables): that file is derived from the folder
        known_rows = None if any(r is None for _, r, _ in added) else [row for _, r, _ in added for row in r or ()]
        known_parts = None if any(t is None for _, _, t in added) else [t for _, _, t in added if t is not None]
        rows = None
        if known_rows is not None and self.read is not None:
            # What open() read and what was appended since, both in memory: the
            # rows parquet_rows would make of the folder read back (sorted by
            # match; a stable sort keeps each match's rows in seat order).
            rows = sorted(parquet_rows(self.read.records) + known_rows, key=_by_match)
        write_matches_parquet(self.folder, rows)
        compressing = compress and status == "complete"
        if seats_written is not None and not compressing:
            seats_written()
        if compressing:
            with open(paths.games, "rb") as src, gzip.open(paths.games_gz, "wb") as dst:
                shutil.copyfileobj(src, dst)
            paths.games.unlink()
        parts: list[RecordTables] | None = None
        if known_parts is not None and self.read is not None and self._old_tables is None:
            old = [record_tables(rec) for rec in self.read.records]  # a resumed run's earlier records
            if all(p is not None for p in old):
                parts = [p for p in old if p is not None] + known_parts
        # After compressing: the tables name the final games file's size.
        if known_parts is not None and self._old_tables is not None:
            write_tables(self.folder, arrow=merged(self._old_tables, arrow_tables(known_parts)))
        else:
            write_tables(self.folder, parts)
        self.meta["status"] = status
        self.meta["ended"] = now()
        write_json_atomic(paths.run_json, self.meta)
        if seats_written is not None and compressing:
            seats_written()

    def _close_refused(self) -> None:
        """Close a run a write was refused in: the records stay as they are (the
        torn line, if any, taken out), run.json is marked interrupted where the
        disk still takes it, and the derived tables are left for the resume to
        write (their readers see they are stale and read the records)."""
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            except OSError:
                pass
            self._fh.close()
            self._fh = None
            self._settle()
        for fh, _ in self._err.values():
            fh.close()
        self._err.clear()
        self.meta["status"] = "interrupted"
        self.meta["ended"] = now()
        try:
            write_json_atomic(self.paths.run_json, self.meta)
        except RunError:
            # A full disk has no room for a second copy: rewrite the file in its
            # own blocks instead, compact so that it is shorter than the indented
            # file it replaces (no block to allocate, so no write cut short by
            # the disk), in one write (a kill cannot cut a write of a few
            # kilobytes in two; a power cut could, which is why this is the fallback).
            try:
                data = (json.dumps(self.meta, separators=(",", ":")) + "\n").encode("utf-8")
                fd = os.open(self.paths.run_json, os.O_WRONLY)
                try:
                    if len(data) > os.fstat(fd).st_size:
                        raise OSError(errno.ENOSPC, "no room to rewrite it in place")
                    os.pwrite(fd, data, 0)
                    os.ftruncate(fd, len(data))
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                self.status_written = False  # it still says running: the resume treats both alike


def _by_match(row: Row) -> Any:
    return row[0]


def write_matches_parquet(folder: Path, rows: list[Row] | None = None) -> None:
    """matches.parquet from the records (:func:`arena.running.tables.parquet_rows`),
    written with pyarrow directly (the run layer has no need of pandas; readers
    get the same columns, ``out_round`` and ``fault`` null where they do not apply).
    ``rows``: those rows, already made from the records in memory; by default
    they are made from the records read back from the folder."""
    import pyarrow.parquet as pq

    if rows is None:
        rows = parquet_rows(read_records(folder).records)
    table = columns.table(
        {name: columns.column([r[i] for r in rows], kind) for i, (name, kind) in enumerate(PARQUET_TYPES)}
    )
    path = RunFolder(folder).matches
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


GAMES_BYTES = b"arena.games_bytes"  # each table file's metadata: the size of the games file it was made from


def write_tables(folder: Path, parts: list[RecordTables] | None = None, *, arrow: dict[str, Any] | None = None) -> None:
    """``tables/*.parquet`` (:mod:`arena.running.tablefiles`): ``arrow``, the
    tables already made, else from the records' parts made by the workers
    (``parts``), else from the records read back.
    Each file is replaced atomically and records the games file's size; should
    anything fail (a record the tables cannot hold), none is left, and the
    readers use the records: the tables are a shortcut, never needed."""
    import pyarrow.parquet as pq

    paths = RunFolder(folder)
    games = paths.games_file()
    try:
        if arrow is None and parts is None:
            read = read_records(folder)
            if read.truncated or read.repeats:  # what a reader is told about: the records say it
                _remove_tables(paths)
                return
            made = [record_tables(rec) for rec in read.records]
            if any(p is None for p in made):
                raise ValueError("a record the tables cannot encode")
            parts = [p for p in made if p is not None]
        size = str(games.stat().st_size if games is not None else 0).encode()
        if arrow is None:
            arrow = arrow_tables(parts or [])
        paths.tables.mkdir(exist_ok=True)
        for name in NAMES:
            table = arrow[name].replace_schema_metadata({GAMES_BYTES: size})
            path = paths.table(name)
            tmp = path.with_name(path.name + ".tmp")
            pq.write_table(table, tmp, compression="lz4")  # near snappy's size at near no compression's speed
            os.replace(tmp, path)
    except RunError:  # a damaged games file: no table of it
        _remove_tables(paths)
        raise
    except Exception:  # noqa: BLE001 - a value pyarrow refuses, a full disk: the tables are only a shortcut
        _remove_tables(paths)


def _remove_tables(paths: RunFolder) -> None:
    for name in NAMES:
        for p in (paths.table(name), paths.table(name).with_name(paths.table(name).name + ".tmp")):
            p.unlink(missing_ok=True)


def read_tables(folder: Path) -> dict[str, Any] | None:
    """The analysis tables as pyarrow tables, or None unless every one of them
    is there, as :func:`write_tables` writes it, and made from the games file
    as it is now (its size; a resumed or interrupted run changes it, and a
    run that stops writes the tables again)."""
    paths = RunFolder(folder)
    games = paths.games_file()
    if games is None or not paths.table(NAMES[0]).is_file():
        return None
    size = str(games.stat().st_size).encode()
    try:
        import pyarrow.parquet as pq

        out = {}
        for name in NAMES:
            table = pq.read_table(paths.table(name))
            if (table.schema.metadata or {}).get(GAMES_BYTES) != size or not check(name, table):
                return None
            out[name] = table
    except Exception:  # noqa: BLE001 - an unreadable table: the records are read instead
        return None
    return out
