"""Returns from act() what no reply encoder should have to meet, one a turn:
bids whose fields are a float, a bool, text, an object with an ``__index__``
(numpy's integers are such) and one whose ``__repr__`` raises; an object whose
``__repr__`` raises; a dict that contains itself; a dict with a set in it;
bytes; a tuple. The host must send each as some reply line (never crash on
it), so the referee can judge it: the integer-like one is a legal-looking
bid, the others are ``malformed``."""

from arena.sdk import Bid, Bot


class Index:
    def __index__(self):
        return 2


class Hostile:
    def __repr__(self):
        raise RuntimeError("repr refused")

    __str__ = __repr__


def recursive():
    d = {"action": "dudo"}
    d["self"] = d
    return d


REPLIES = [
    lambda: Bid(3.0, 2),
    lambda: Bid(True, 2),
    lambda: Bid("3", 2),
    lambda: Bid(Index(), Index()),
    lambda: Bid(Hostile(), 2),
    lambda: Hostile(),
    recursive,
    lambda: {"action": "bid", "quantity": {1, 2}},
    lambda: b"dudo",
    lambda: (5, 3),
]


class OddReplies(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn):
        reply = REPLIES[self.turns % len(REPLIES)]()
        self.turns += 1
        return reply
