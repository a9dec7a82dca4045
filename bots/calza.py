"""Calza: reads the table, calls calza when "exactly" is the best bet, plays palifico well.

Built on the binomial odds, with three refinements:

1. **Reading the bids.** A player who bids a face this round probably holds
   some of it. For each other player whose bids this round include face
   ``f`` (and who still holds dice), one of their dice is taken to show ``f``
   with probability ``CREDIT`` instead of the usual 1/3 (or 1/6); the count is
   then our dice plus two binomials, summed exactly. In a palifico round (no
   wild aces, face fixed) the opener's bid usually *is* their die, so this
   matters most there.
2. **Choosing between calls by expected dice.** With a standing bid it weighs
   three options by their expected change in its own dice:
   - dudo: loses a die with p(true); when right another player loses one,
     worth ``OTHER_LOSS`` to us;
   - calza (where legal): right with p(exact); a right calza regains a die
     (worth 1, or only ``OTHER_LOSS`` when already at the maximum or when the
     rule is ``bidder_loses``), a wrong one loses a die;
   - raise: the best raise can be doubted; it costs a die with
     ``(1 - p(raise)) * CALLED``, a rough chance that someone calls it.
   It takes the best of the three.
3. **Palifico.** In a palifico round aces are not wild (the odds use 1/6)
   and the face is fixed, so raises only add dice: the bot raises only while
   the raise is likelier than not and doubts sooner. Opening a palifico round
   with one die, it bids its own die's face (the only face it knows of).

Deterministic: no randomness.
"""

from __future__ import annotations

from arena.sdk import CALZA, DUDO, Action, Bid, Bot, Turn, bid, dead_mans_call, face_probability, p_at_least, p_exactly

# Plays the protocol 2 variants too (a dead man's turn: arena.sdk.dead_mans_call).
SUPPORTS = {"rules": {"dead_mans_calza": [True, False], "veteran_palifico": [True, False]}}

OTHER_LOSS = 0.35  # value of another player losing a die, in our own dice
CREDIT = 0.9  # chance that a bidder's die shows the face it bid (instead of 1/3 or 1/6)
CALLED = 0.5  # rough chance that a raise gets doubted by the next player
OPEN_CONFIDENCE = 0.6


class CalzaPlayer(Bot):
    def _split(self, turn: Turn, face: int) -> tuple[int, int, float]:
        """(our dice counting for ``face``, unseen dice with no evidence, the credited ones), and p."""
        credited = len({s for s, b in turn.history if b.face == face and s != turn.seat and turn.counts[s]})
        credited = min(credited, turn.unseen)
        return turn.mine(face), credited, face_probability(face, turn.wild)

    def _p(self, turn: Turn, b: Bid) -> float:
        mine, credited, p = self._split(turn, b.face)
        plain = turn.unseen - credited
        return sum(
            p_exactly(j, credited, CREDIT) * p_at_least(b.quantity - mine - j, plain, p) for j in range(credited + 1)
        )

    def _p_exact(self, turn: Turn, b: Bid) -> float:
        mine, credited, p = self._split(turn, b.face)
        plain = turn.unseen - credited
        return sum(
            p_exactly(j, credited, CREDIT) * p_exactly(b.quantity - mine - j, plain, p) for j in range(credited + 1)
        )

    def _open(self, turn: Turn) -> Bid:
        legal = turn.legal
        if turn.palifico and len(turn.dice) == 1 and turn.dice[0] in legal.min_quantity:
            face = turn.dice[0]
        else:
            face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
        q = legal.min_quantity[face]
        while q < legal.max_quantity and turn.probability(bid(q + 1, face)) >= OPEN_CONFIDENCE:
            q += 1
        return bid(q, face)

    def act(self, turn: Turn) -> Action:
        if turn.dead:  # out, asked for a dead man\'s calza
            return dead_mans_call(turn)
        standing = turn.standing
        if standing is None:
            return self._open(turn)
        p_true = self._p(turn, standing)
        options: list[tuple[float, Action]] = [(-p_true + (1 - p_true) * OTHER_LOSS, DUDO)]
        if turn.legal.calza:
            p_ex = self._p_exact(turn, standing)
            regain = turn.rules.calza_reward == "regain" and len(turn.dice) < turn.rules.dice
            options.append((p_ex * (1.0 if regain else OTHER_LOSS) - (1 - p_ex), CALZA))
        raise_to, p_raise = turn.best_raise(lambda b: self._p(turn, b))
        if raise_to is not None:
            called = CALLED * (1.5 if turn.palifico else 1.0)
            options.append((-(1 - p_raise) * called, raise_to))
        return max(options, key=lambda o: o[0])[1]
