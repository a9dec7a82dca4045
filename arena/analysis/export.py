"""A run folder's results in the forms outside raters read (``arena export``).

- ``rankings``: one JSON line per match, ``{"match", "variant", "ranking"}``
  with the bots best first: what openskill's ``rate(teams)`` and choix's
  ``ilsr_rankings`` (both Plackett-Luce, the model of docs/ratings.md) take
  per match.
- ``pairwise``: CSV ``match,variant,winner,loser``, one row for every two
  bots of a match (the one placed higher first): what pairwise tools
  (Bradley-Terry fits, choix's ``ilsr_pairwise``) read.
- ``pgn``: the same pairs as PGN games: the Seven Tag Roster of the PGN
  standard in its order (``Event`` the match id, ``Date`` unknown,
  ``Round`` the variant), each tag on a line of its own, then the result
  as the game's termination (no moves): what Ordo (which reads the
  ``White``, ``Black`` and ``Result`` lines) and BayesElo (which reads the
  roster, then skips to the termination) take. White is the bot seated
  first at the table, so a rater's first-move advantage (Ordo's ``-W``)
  measures the earlier seat's. Heads up a pair is the match itself; at a
  bigger table the pairs of one match are not independent games, so those
  tools' intervals come out too narrow (their Elo scale is the pairwise
  one, not Plackett-Luce's).

Every record of the folder is exported, in match-id order, each match once
(the store's one reader); a match with a fault is exported as it was placed,
as ``arena ratings`` rates it by default.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from arena.engine.records import MatchRecord
from arena.errors import ArenaError
from arena.running.store import RunFolder, read_records

FORMATS = ("rankings", "pairwise", "pgn")


def _records(run: str | Path) -> list[MatchRecord]:
    folder = Path(run)
    if not RunFolder(folder).is_run():
        raise ArenaError(
            f"{folder}: not a run folder (no run.json or games.jsonl); name the folder "
            f"`arena run` wrote, e.g. results/league"
        )
    return sorted(read_records(folder).records, key=lambda r: r.match)


def _ranking(rec: MatchRecord) -> list[str]:
    """The bots of a match, best first."""
    return [bot for _, bot in sorted(zip(rec.placements, rec.bots))]


def _pairs(rec: MatchRecord) -> Iterator[tuple[str, str]]:
    order = _ranking(rec)
    for i, winner in enumerate(order):
        for loser in order[i + 1 :]:
            yield winner, loser


def _pgn_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def export_text(run: str | Path, fmt: str) -> str:
    """The results of run folder ``run`` in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise ArenaError(f"--format {fmt}: not a format; use one of {', '.join(FORMATS)}")
    records = _records(run)
    if fmt == "rankings":
        return "".join(
            json.dumps({"match": r.match, "variant": r.variant, "ranking": _ranking(r)}) + "\n" for r in records
        )
    if fmt == "pairwise":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["match", "variant", "winner", "loser"])
        for r in records:
            for winner, loser in _pairs(r):
                writer.writerow([r.match, r.variant, winner, loser])
        return buf.getvalue()
    games = []
    for r in records:
        for winner, loser in _pairs(r):
            # White is the bot seated first: colours carry the seat, never the
            # result or the names (a name order would read as a colour advantage).
            white, black = sorted((winner, loser), key=r.bots.index)
            result = "1-0" if white == winner else "0-1"
            games.append(
                f'[Event "{_pgn_value(r.match)}"]\n[Site "Dudo Arena"]\n[Date "????.??.??"]\n'
                f'[Round "{_pgn_value(r.variant)}"]\n[White "{_pgn_value(white)}"]\n'
                f'[Black "{_pgn_value(black)}"]\n[Result "{result}"]\n\n{result}\n'
            )
    return "\n".join(games)
