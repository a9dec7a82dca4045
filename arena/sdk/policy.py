"""Solved policies for bots: play an ``arena solve`` strategy where one covers the turn.

A bot that ships policy files in a data folder of its own plays them with::

    from arena.sdk.policy import SolvedPolicies

    POLICIES = SolvedPolicies(os.path.join(os.path.dirname(__file__), "mybot"))

    class MyBot(Bot):
        def act(self, turn):
            action = POLICIES.action(turn, self.rng)   # None where no policy applies
            return action if action is not None else ...

Both forms of the policy file are read (docs/solver.md): the JSON form
(``.json``, ``.json.gz``) and the packed form (``.npz``,
:mod:`arena.solve.packed`), which reads in tens of milliseconds where a large
JSON policy takes over a second. Files are read lazily and once per process:
only when a two-player turn under a rule set comes up, and only the files
solving that rule set (each file's head is read first). Where two files solve
the same round, the less exploitable one is played. An unreadable or foreign
file is skipped, so a bot plays its own fallback there instead of failing.

Where a policy applies: a round with exactly two players in, not a palifico
round, under rules whose two-player rounds have neither calza nor palifico
(the solved game is the plain dudo round), for the round's dice counts (the
opener's, the other player's) a file covers, and an information set the
solved strategy reaches itself (its hand and bids; with imperfect recall the
last bids and the parity of the forgotten ones, the key of
:mod:`arena.solve.policy`).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from typing import Any, Protocol

from arena.engine.rules import DUDO, ROUND_KEYS, Action, Bid, bid
from arena.sdk import Turn

__all__ = ["SolvedPolicies", "SolvedRound", "policy_key", "ROUND_KEYS"]

FORMAT, VERSION = "dudo-arena-policy", 1

RoundRules = tuple[Any, ...]


class _Lookup(Protocol):
    def get(self, key: str) -> Any: ...


class _Rng(Protocol):
    def random(self) -> float: ...


class SolvedRound:
    """One solved round: its information sets, and how many bids it remembers (0: all)."""

    def __init__(self, table: _Lookup, recall: int, exploitability: float) -> None:
        self._table, self.recall, self.exploitability = table, recall, exploitability

    def probabilities(self, dice: tuple[int, ...] | list[int], bids: list[Bid]) -> list[tuple[str, float]] | None:
        """The actions (text form) and their probabilities at this information set, in
        file order; None where the strategy never comes."""
        got = self._table.get(policy_key(dice, bids, self.recall))
        if not got:
            return None
        return list(got.items()) if isinstance(got, dict) else list(got)


def policy_key(dice: tuple[int, ...] | list[int], bids: list[Bid], recall: int = 0) -> str:
    """The key of an information set: the sorted hand, ``|``, the bids (``QxF``, comma
    separated); past ``recall`` bids, the last ``recall`` after ``*1,`` (an odd number of
    earlier bids forgotten) or ``*2,`` (even)."""
    hand = "".join(map(str, sorted(dice)))
    if recall and len(bids) > recall:
        tail = ",".join(f"{b.quantity}x{b.face}" for b in bids[-recall:])
        return f"{hand}|*{1 if (len(bids) - recall) % 2 else 2},{tail}"
    return hand + "|" + ",".join(f"{b.quantity}x{b.face}" for b in bids)


def _head_rules(path: str) -> RoundRules | None:
    """The round rules a policy file solves, from its head (JSON: its first few KB, where
    the writer puts ``rules``; packed: its ``meta`` array); None if unreadable there."""
    try:
        if path.endswith(".npz"):
            from arena.solve.packed import read_meta

            meta = read_meta(path)
            return tuple(meta["rules"].get(k) for k in ROUND_KEYS)
        with open(path, "rb") as f:
            raw = f.read(2)
            f.seek(0)
            head = (gzip.GzipFile(fileobj=f).read(4096) if raw == b"\x1f\x8b" else f.read(4096)).decode()
        start = head.index('"rules":') + len('"rules":')
        rules = json.loads(head[start : head.index("}", start) + 1])
        return tuple(rules.get(k) for k in ROUND_KEYS)
    except Exception:  # noqa: BLE001 - any unreadable head means "read the whole file to know"
        return None


def _read(path: str) -> tuple[dict[str, Any], dict[str, _Lookup]] | None:
    """A file's head and its rounds' lookup tables, or None if it is no readable policy."""
    try:
        if path.endswith(".npz"):
            from arena.solve.packed import read_rounds

            meta, packed = read_rounds(path)
            return meta, dict(packed)
        with open(path, "rb") as f:
            raw = f.read()
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        return data, {name: e["infosets"] for name, e in data.get("rounds", {}).items()}
    except Exception:  # noqa: BLE001 - a damaged file is no policy: the bot's fallback plays there
        return None


class SolvedPolicies:
    """The policy files of one folder, read when first needed (see the module doc)."""

    def __init__(self, folder: str, accept: Callable[[str], bool] | None = None) -> None:
        self.folder = folder
        self._accept = accept or (lambda name: True)
        self._by_rules: dict[RoundRules, dict[tuple[int, int], SolvedRound]] = {}

    def rounds(self, rules: RoundRules) -> dict[tuple[int, int], SolvedRound]:
        """Every solved round under ``rules`` (a value per :data:`ROUND_KEYS`), keyed by
        (opener's dice, other's dice)."""
        got = self._by_rules.get(rules)
        if got is None:
            got = self._by_rules[rules] = self._load(rules)
        return got

    def _load(self, rules: RoundRules) -> dict[tuple[int, int], SolvedRound]:
        out: dict[tuple[int, int], SolvedRound] = {}
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return out
        for name in names:
            if not name.endswith((".json.gz", ".json", ".npz")) or not self._accept(name):
                continue
            path = os.path.join(self.folder, name)
            head = _head_rules(path)
            if head is not None and head != rules:
                continue  # another rule set: not read at all
            got = _read(path)
            if got is None:
                continue
            data, tables = got
            try:
                if data.get("format") != FORMAT or data.get("version") != VERSION or data.get("players") != 2:
                    continue
                if tuple(data["rules"].get(k) for k in ROUND_KEYS) != rules:
                    continue
                for rname, entry in data.get("rounds", {}).items():
                    key = (int(entry["counts"][0]), int(entry["counts"][1]))
                    e = float(entry.get("exploitability", 1.0))
                    if key not in out or e < out[key].exploitability:
                        out[key] = SolvedRound(tables[rname], int(entry.get("recall", 0)), e)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
        return out

    def round_for(self, turn: Turn) -> SolvedRound | None:
        """The solved round this turn is in, or None where no policy applies."""
        alive = [s for s, c in enumerate(turn.counts) if c]
        r = turn.rules
        if len(alive) != 2 or turn.palifico or turn.legal.calza:
            return None
        if (r.calza and r.calza_min_players <= 2) or (r.palifico and r.palifico_min_players <= 2):
            return None  # a two-player round here is not the plain dudo round that was solved
        opener = turn.history[0][0] if turn.history else turn.seat
        other = alive[1] if alive[0] == opener else alive[0]
        return self.rounds(tuple(getattr(r, k) for k in ROUND_KEYS)).get((turn.counts[opener], turn.counts[other]))

    def action(self, turn: Turn, rng: _Rng) -> Action | None:
        """The solved strategy's action at this turn, drawn with ``rng`` (the mixing is what
        makes an equilibrium unexploitable; a seeded ``rng`` makes it reproducible), or
        None where no policy applies or the drawn action is not legal here (a dead man's
        turn, ``turn.dead``, is in no solved round)."""
        if turn.dead:
            return None
        solved = self.round_for(turn)
        if solved is None:
            return None
        probs = solved.probabilities(turn.dice, [b for _, b in turn.history])
        if not probs:
            return None
        x = rng.random() * sum(p for _, p in probs)
        choice = probs[-1][0]
        for text, p in probs:  # file order: fixed, so the draw is reproducible
            x -= p
            if x < 0:
                choice = text
                break
        if choice == "dudo":
            action: Action = DUDO
        else:
            q, f = choice.split("x")
            action = bid(int(q), int(f))
        return action if turn.legal.is_legal(action) else None
