"""Attack on the luck estimator (arena/analysis/luck.py): quit the rounds the deal spoiled.

It plays the probabilistic bot's policy, but at its first turn of a round
whose hand is weak (fewer dice for its best face, aces wild, than a hand of
its size holds on average) it raises, a crash that voids the round and ends
its match. If the estimator left void rounds out, the rounds that counted
would be the ones the deal favoured, and its luck-reduced score would be
steered (its luck would sum to more than zero on average). Counting every
dealt round keeps each round's luck zero in expectation whatever a bot does
after seeing its hand: tests/test_luck.py checks the mean luck stays at zero.
"""

from arena.sdk import DUDO, Bot, bid

WEAK_BELOW = {1: 1.0, 2: 1.5, 3: 2.0, 4: 2.5, 5: 2.8}  # about E[best-face count] for 1-5 dice


def best_count(dice, wild):
    faces = range(2, 7) if wild else range(1, 7)
    return max(dice.count(f) + (dice.count(1) if wild else 0) for f in faces)


class LuckQuitter(Bot):
    def act(self, turn):
        first = not any(seat == turn.seat for seat, _ in turn.history)
        if first and best_count(turn.dice, turn.wild) < WEAK_BELOW.get(len(turn.dice), 0.0):
            raise RuntimeError("luck_quitter: this deal is bad for me; quitting the round")
        legal = turn.legal
        if turn.standing is None:
            face = max(legal.min_quantity, key=lambda f: (turn.expected(f), f))
            return bid(legal.min_quantity[face], face)
        raise_to, p_raise = turn.best_raise()
        if raise_to is None or (turn.probability(turn.standing) < 0.5 and turn.probability(turn.standing) < p_raise):
            return DUDO
        return raise_to
