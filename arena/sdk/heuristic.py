"""A sound heuristic for any table: the binomial odds, reading the other players' bids.

What ``bots/equilibrium.py`` and ``bots/trained.py`` play where no solved or
trained policy covers the turn (more players, more dice, calza or palifico in
play, other rules)::

    from arena.sdk.heuristic import credited_odds
    action = POLICIES.action(turn, self.rng) or credited_odds(turn)

Each other bidder is taken to hold one die of each face it bid, with
probability ``CREDIT``; dudo, calza (where legal) and the best raise are
weighed by the expected change in the bot's own dice, as ``calza`` does.
Deterministic: the same turn gives the same action.
"""

from __future__ import annotations

from arena.sdk import CALZA, DUDO, Action, Bid, Turn, bid, face_probability, p_at_least, p_exactly

__all__ = ["credited_odds", "OTHER_LOSS", "CREDIT", "CALLED", "OPEN_CONFIDENCE"]

OTHER_LOSS = 0.35  # value of another player losing a die, in our own dice
CREDIT = 0.9  # chance that a bidder's die shows the face it bid
CALLED = 0.5  # rough chance that a raise gets doubted
OPEN_CONFIDENCE = 0.6


def _split(turn: Turn, face: int) -> tuple[int, int, float]:
    credited = len({s for s, b in turn.history if b.face == face and s != turn.seat and turn.counts[s]})
    return turn.mine(face), min(credited, turn.unseen), face_probability(face, turn.wild)


def _p(turn: Turn, b: Bid, exact: bool = False) -> float:
    mine, credited, p = _split(turn, b.face)
    plain = turn.unseen - credited
    tail = p_exactly if exact else p_at_least
    return sum(p_exactly(j, credited, CREDIT) * tail(b.quantity - mine - j, plain, p) for j in range(credited + 1))


def credited_odds(turn: Turn) -> Action:
    """The heuristic's action at ``turn`` (module doc)."""
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
    p_true = _p(turn, standing)
    options: list[tuple[float, Action]] = [(-p_true + (1 - p_true) * OTHER_LOSS, DUDO)]
    if legal.calza:
        p_ex = _p(turn, standing, exact=True)
        regain = turn.rules.calza_reward == "regain" and len(turn.dice) < turn.rules.dice
        options.append((p_ex * (1.0 if regain else OTHER_LOSS) - (1 - p_ex), CALZA))
    raise_to, p_raise = turn.best_raise(lambda b: _p(turn, b))
    if raise_to is not None:
        called = CALLED * (1.5 if turn.palifico else 1.0)
        options.append((-(1 - p_raise) * called, raise_to))
    return max(options, key=lambda o: o[0])[1]
