"""What the analysis commands do, end to end: load a run folder, compute, and
write the files derived from it through the run folder's owner.

``arena ratings`` is :func:`rate_run`, ``arena stats`` :func:`stats_run`, and
the table ``arena run`` ends with :func:`elo_table_text`. The computing is
:mod:`arena.analysis.stats`'s, the text :mod:`arena.analysis.format`'s, the
paths and the writing :mod:`arena.running.store`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from arena.analysis.format import csv_text, format_ratings
from arena.analysis.integrity import paired_run
from arena.analysis.ratings import PRIOR_SD_ELO
from arena.analysis.results import Results, from_records, load, match_seeds
from arena.analysis.stats import Progress, RatingReport, rate_results, run_stats
from arena.engine.records import MatchRecord
from arena.errors import ArenaError, RunError
from arena.running.store import RunFolder, read_run_json, write_text

__all__ = ["Note", "elo_table_text", "end_of_run_text", "luck_run", "rate_run", "stats_run"]

Note = Callable[[str], None]
"""Where a command sends a line for the user about what loading left out
(a match recorded twice counts once): the CLI prints it on stderr."""


def _load(run: str | Path, note: Note | None, seats_only: bool = False) -> Results:
    res = load(run, seats_only=seats_only)
    if note is not None:
        for line in res.notes:
            note(line)
    return res


def rate_run(
    run: str | Path,
    *,
    write: bool = True,
    variant: str | None = None,
    drop_admin_faults: bool = False,
    resamples: int = 200,
    seed: int = 0,
    prior_sd: float | None = PRIOR_SD_ELO,
    anchor: str | None = None,
    anchor_elo: float = 1500.0,
    k: float = 16.0,
    note: Note | None = None,
    progress: Progress | None = None,
    records: Sequence[MatchRecord] | None = None,
) -> RatingReport:
    """Load a run folder and rate it (options as
    :func:`arena.analysis.stats.rate_results`); when ``write`` and no single
    variant was asked for, write ratings.csv into it. Rating needs only who
    finished where, so a stopped run's matches.parquet is read instead of
    the match records; ``records`` (every record of the folder, as the runner
    holds them) skips reading altogether."""
    res = (
        from_records(sorted(records, key=lambda r: r.match), read_run_json(Path(run)) or {}, run)
        if records is not None
        else _load(run, note, seats_only=True)
    )
    # The integrity check needs each match's deal, which the seat table alone lacks.
    seeds = match_seeds(run) if res.seats_only and paired_run(res.run) else None
    report = rate_results(
        res,
        variant=variant,
        drop_admin_faults=drop_admin_faults,
        resamples=resamples,
        seed=seed,
        prior_sd=prior_sd,
        anchor=anchor,
        anchor_elo=anchor_elo,
        k=k,
        progress=progress,
        seeds=seeds,
    )
    if write and variant is None:
        _write_or_note(RunFolder(Path(run)).ratings, csv_text(report.table), note, f"arena ratings {run}")
    return report


def luck_run(run: str | Path, *, variant: str | None = None, note: Note | None = None) -> str:
    """The heads-up win shares of a run folder with the luck of the deal removed
    (:mod:`arena.analysis.luck`), as text: they need every round's dice, so the
    match records are read."""
    from arena.analysis import luck
    from arena.running.store import read_records

    found = read_records(Path(run))
    if note is not None and found.note() is not None:
        note(str(found.note()))
    records = [r for r in found.records if variant is None or r.variant == variant]
    return luck.head_to_head_text(luck.head_to_head(records))


def stats_run(
    run: str | Path,
    *,
    write: bool = True,
    variant: str | None = None,
    drop_admin_faults: bool = False,
    resamples: int = 200,
    seed: int = 0,
    note: Note | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Load a run folder and compute its variant statistics
    (:func:`arena.analysis.stats.run_stats`); writes variant_stats.csv into
    the folder when ``write`` and no variant is chosen."""
    if progress is not None:
        progress("reading the match records", 0, 1)
    res = _load(run, note)
    table = run_stats(
        res, variant=variant, drop_admin_faults=drop_admin_faults, resamples=resamples, seed=seed, progress=progress
    )
    if write and variant is None:
        _write_or_note(RunFolder(Path(run)).variant_stats, csv_text(table), note, f"arena stats {run}")
    return table


def _write_or_note(path: Path, text: str, note: Note | None, command: str) -> None:
    """Write a derived table into the run folder; where that fails (a read-only
    or full disk, no permission) and the caller shows the result anyway, say so
    in one line and carry on: the table is what was asked for, the file a copy
    of it. Without ``note`` (a library caller) the error is raised."""
    try:
        write_text(path, text)
    except RunError as exc:
        if note is None:
            raise
        note(
            f"{exc}; the table is shown without it (`{command} --no-write` does not try; "
            f"`{command} --csv > FILE` keeps it elsewhere)"
        )


def end_of_run_text(
    run: str | Path, *, resamples: int = 200, seed: int = 0, note: Note | None = None, progress: Progress | None = None
) -> str:
    """:func:`elo_table_text` at the end of a run: from the matches.parquet and
    tables the run has just written as it stopped (the seat table is all
    rating needs), else from the folder's records."""
    return elo_table_text(run, resamples=resamples, seed=seed, note=note, progress=progress)


def elo_table_text(
    run: str | Path,
    *,
    resamples: int = 200,
    seed: int = 0,
    note: Note | None = None,
    progress: Progress | None = None,
    records: Sequence[MatchRecord] | None = None,
) -> str:
    """What ``arena run`` ends with: rate the run folder, write ratings.csv,
    return the tables as text. A run that cannot be rated (no finished match
    yet, a fit that failed) gets one line saying why instead of a table: the
    run itself succeeded."""
    try:
        return format_ratings(
            rate_run(run, resamples=resamples, seed=seed, note=note, progress=progress, records=records)
        )
    except ArenaError as exc:
        return f"no Elo table: {exc}"
