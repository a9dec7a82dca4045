"""A player who is out trying to stop a round: asked for a dead man's calza,
it answers with what would void the round if a fault by a player who is out
voided it (an illegal dudo; a colluder would do it when its ally's bid looks
doomed). While in, it plays the probabilistic way. The fault must cost it the
call and nothing else: the round goes on, the record replays."""

from arena.sdk import DUDO, Bot, Turn

SUPPORTS = {"rules": {"dead_mans_calza": [True, False]}}


class DeadVoider(Bot):
    def act(self, turn: Turn):
        if turn.dead:
            return DUDO
        standing = turn.standing
        if standing is not None and turn.probability(standing) < 0.5:
            return DUDO
        best, _ = turn.best_raise()
        return best if best is not None else DUDO
