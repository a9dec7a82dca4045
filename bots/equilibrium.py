"""Equilibrium: plays a solved CFR+ strategy where one exists, a sound heuristic elsewhere.

Where it plays the equilibrium: a round with exactly two players still in,
under rules whose two-player rounds have been solved (`arena solve`, policies
shipped in this bot's data folder ``bots/equilibrium/``, one ``.json.gz`` per
game; docs/solver.md has the format), for a round whose dice counts the file
covers (every round of a 1-die-each and of a 2-dice-each game under the
three shipped rule sets). There it looks up its information set (its hand
and the round's bids; in a round solved with imperfect recall, its hand, the
last few bids and whether an odd or even number of earlier bids was
forgotten: the key documented in ``arena/solve/policy.py``) and draws the action from the solved
probabilities with ``self.rng``: the mixing is the point of an equilibrium
(a pure strategy would be exploitable), and the seed makes it reproducible.

Everywhere else (more players, more dice, calza or palifico in play, other
rules) it plays a heuristic on the binomial odds that reads the other
players' bids: each bidder is taken to hold one die of each face it bid,
with probability ``CREDIT``; it weighs dudo, calza (where legal) and its best
raise by the expected change in its own dice, as ``calza`` does.

The policy files are read once per process, lazily (only when a solved state
comes up, and only the files solving the rules being played: the rules are
read from the head of each file first), and the lookup is a dictionary
access: well under a millisecond.
It declares no ``SUPPORTS``: it plays any table.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from arena.sdk import CALZA, DUDO, Action, Bid, Bot, Turn, bid, face_probability, p_at_least, p_exactly

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equilibrium")
ROUND_KEYS = ("wild_ones", "ones", "open_on_ones", "penalty")
FORMAT, VERSION = "dudo-arena-policy", 1

OTHER_LOSS = 0.35  # value of another player losing a die, in our own dice
CREDIT = 0.9  # chance that a bidder's die shows the face it bid
CALLED = 0.5  # rough chance that a raise gets doubted
OPEN_CONFIDENCE = 0.6

Solved = tuple[dict[str, dict[str, float]], int]  # a round's information sets, and its recall (0: perfect)
_POLICIES: dict[tuple[Any, ...], dict[tuple[int, int], Solved]] = {}  # rules -> counts -> solved round


def _head_rules(path: str) -> tuple[Any, ...] | None:
    """The round rules a policy file solves, from its first few KB (the writer puts
    ``rules`` near the start); None if they cannot be read there."""
    try:
        with open(path, "rb") as f:
            raw = f.read(2)
            f.seek(0)
            head = (gzip.GzipFile(fileobj=f).read(4096) if raw == b"\x1f\x8b" else f.read(4096)).decode()
        start = head.index('"rules":') + len('"rules":')
        rules = json.loads(head[start: head.index("}", start) + 1])
        return tuple(rules.get(k) for k in ROUND_KEYS)
    except (OSError, ValueError, EOFError, UnicodeDecodeError, AttributeError):
        return None


def _load(rules: tuple[Any, ...]) -> dict[tuple[int, int], Solved]:
    """Every solved round under ``rules`` in the data folder, keyed by (opener's dice,
    other's dice). Where two files solve the same round, the less exploitable one is kept."""
    out: dict[tuple[int, int], Solved] = {}
    best: dict[tuple[int, int], float] = {}
    try:
        names = sorted(os.listdir(DATA))
    except OSError:
        return out
    for name in names:
        if not (name.endswith(".json.gz") or name.endswith(".json")):
            continue
        path = os.path.join(DATA, name)
        head = _head_rules(path)
        if head is not None and head != rules:
            continue  # another rule set: not parsed at all
        try:
            with open(path, "rb") as f:
                raw = f.read()
            data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        except (OSError, ValueError, EOFError):
            continue  # an unreadable file is no policy: the heuristic plays there
        if data.get("format") != FORMAT or data.get("version") != VERSION or data.get("players") != 2:
            continue
        if tuple(data["rules"].get(k) for k in ROUND_KEYS) != rules:
            continue
        for entry in data.get("rounds", {}).values():
            key = (int(entry["counts"][0]), int(entry["counts"][1]))
            e = float(entry.get("exploitability", 1.0))
            if key not in out or e < best[key]:
                out[key], best[key] = (entry["infosets"], int(entry.get("recall", 0))), e
    return out


def _key(dice: list[int], bids: list[Bid], recall: int) -> str:
    """The policy key of an information set (arena/solve/policy.py): the whole
    history, or with imperfect recall past ``recall`` bids the last ``recall``
    after ``*1,`` (an odd number of earlier bids forgotten) or ``*2,`` (even)."""
    hand = "".join(map(str, sorted(dice)))
    if recall and len(bids) > recall:
        tail = ",".join(f"{b.quantity}x{b.face}" for b in bids[-recall:])
        return f"{hand}|*{1 if (len(bids) - recall) % 2 else 2},{tail}"
    return hand + "|" + ",".join(f"{b.quantity}x{b.face}" for b in bids)


def _solved_rules(turn: Turn) -> tuple[Any, ...] | None:
    """The round rules, if a two-player round under them is an ordinary dudo round."""
    r = turn.rules
    if r.calza and r.calza_min_players <= 2:
        return None
    if r.palifico and r.palifico_min_players <= 2:
        return None
    return tuple(getattr(r, k) for k in ROUND_KEYS)


class Equilibrium(Bot):
    def act(self, turn: Turn) -> Action:
        action = self._solved(turn)
        return action if action is not None else self._heuristic(turn)

    # -- the solved strategy --------------------------------------------------------

    def _solved(self, turn: Turn) -> Action | None:
        alive = [s for s, c in enumerate(turn.counts) if c]
        if len(alive) != 2 or turn.palifico or turn.legal.calza:
            return None
        rules = _solved_rules(turn)
        if rules is None:
            return None
        opener = turn.history[0][0] if turn.history else turn.seat
        other = alive[1] if alive[0] == opener else alive[0]
        if rules not in _POLICIES:
            _POLICIES[rules] = _load(rules)
        solved = _POLICIES[rules].get((turn.counts[opener], turn.counts[other]))
        if solved is None:
            return None
        infosets, recall = solved
        probs = infosets.get(_key(list(turn.dice), [b for _, b in turn.history], recall))
        if not probs:
            return None  # a history this strategy never leads to with this hand
        total = sum(probs.values())
        x = self.rng.random() * total
        choice = None
        for text, p in probs.items():  # file order: fixed, so the draw is reproducible
            choice = text
            x -= p
            if x < 0:
                break
        assert choice is not None
        if choice == "dudo":
            action: Action = DUDO
        else:
            q, f = choice.split("x")
            action = bid(int(q), int(f))
        return action if turn.legal.is_legal(action) else None

    # -- elsewhere: odds plus the other players' bids ------------------------------

    def _split(self, turn: Turn, face: int) -> tuple[int, int, float]:
        credited = len({s for s, b in turn.history if b.face == face and s != turn.seat and turn.counts[s]})
        return turn.mine(face), min(credited, turn.unseen), face_probability(face, turn.wild)

    def _p(self, turn: Turn, b: Bid, exact: bool = False) -> float:
        mine, credited, p = self._split(turn, b.face)
        plain = turn.unseen - credited
        tail = p_exactly if exact else p_at_least
        return sum(p_exactly(j, credited, CREDIT) * tail(b.quantity - mine - j, plain, p)
                   for j in range(credited + 1))

    def _heuristic(self, turn: Turn) -> Action:
        legal = turn.legal
        standing = turn.standing
        if standing is None:
            if turn.palifico and len(turn.dice) == 1 and turn.dice[0] in legal.min_quantity:
                face = turn.dice[0]
            else:
                face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
            q = legal.min_quantity[face]
            while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= OPEN_CONFIDENCE:
                q += 1
            return bid(q, face)
        p_true = self._p(turn, standing)
        options: list[tuple[float, Action]] = [(-p_true + (1 - p_true) * OTHER_LOSS, DUDO)]
        if legal.calza:
            p_ex = self._p(turn, standing, exact=True)
            regain = turn.rules.calza_reward == "regain" and len(turn.dice) < turn.rules.dice
            options.append((p_ex * (1.0 if regain else OTHER_LOSS) - (1 - p_ex), CALZA))
        raise_to, p_raise = turn.best_raise(lambda b: self._p(turn, b))
        if raise_to is not None:
            called = CALLED * (1.5 if turn.palifico else 1.0)
            options.append((-(1 - p_raise) * called, raise_to))
        return max(options, key=lambda o: o[0])[1]
